"""The editor adapters' narrow view of the client: requests, notifications,
open documents, and which of Rein's optional client methods the client has.

The adapters (workspace, diagnostics, confirm, askUser, saveDocuments) talk
to the client only through a :class:`ClientChannel`, never through the
server's protocol object, so they can be tested and reused without a server.

Every request is bounded: :class:`ClientChannel` asks ``bound(method)`` for
the seconds it waits (from the configuration: :func:`request_bound`); past
them it tells the client ``$/cancelRequest`` and raises :class:`~rein.lsp.client_timeout.ClientTimeout`,
which each adapter turns into what its caller can read (an unverified
verdict, a tool error, a refusal, no answer).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp_types
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

if TYPE_CHECKING:
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer

    from rein.config import ReinConfig

__all__ = ["ClientChannel", "method_not_found", "request_bound"]

log = logging.getLogger(__name__)

_METHOD_NOT_FOUND = -32601


def method_not_found(exc: BaseException) -> bool:
    return isinstance(exc, JsonRpcMethodNotFound) or (
        isinstance(exc, JsonRpcException) and exc.code == _METHOD_NOT_FOUND
    )


#: The bound of a request when no configuration is given (tests, embedders).
DEFAULT_BOUND_S = 30.0


def request_bound(config: ReinConfig, method: str) -> float:
    """Seconds Rein waits for the client's answer to ``method``: a person's
    answer (confirm, askUser) ``approval.timeoutMs``; the editor's
    diagnostics ``gates.analyzer.requestTimeoutMs``; anything else
    ``harness.clientRequestTimeoutMs``."""
    if method in ("rein/confirm", "rein/askUser"):
        ms = config.approval.timeout_ms
    elif method == "rein/diagnostics":
        ms = config.gates.analyzer.request_timeout_ms
    else:
        ms = config.harness.client_request_timeout_ms
    return ms / 1000.0


def _drop_late(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("a late or cancelled client answer: %s", answer.exception())


class ClientChannel:
    """Request, notify and feature flags over one language server's client.

    A client answering MethodNotFound to one of Rein's optional methods
    (``rein/confirm``, ``rein/askUser``, ``rein/saveDocuments``) is
    remembered: :meth:`supports` is then False and the method is not asked
    again. ``bound(method)``: the seconds a request waits for its answer.
    """

    def __init__(self, server: LanguageServer, bound: Callable[[str], float] | None = None) -> None:
        self._server = server
        self._bound = bound or (lambda method: DEFAULT_BOUND_S)
        self._unsupported: set[str] = set()
        #: Pending writes of directly framed notifications (kept referenced).
        self._writes: set[asyncio.Future[Any]] = set()

    def supports(self, method: str) -> bool:
        return method not in self._unsupported

    def forget(self, method: str) -> None:
        """The client does not have ``method``: stop asking it."""
        self._unsupported.add(method)

    def bound(self, method: str) -> float:
        return self._bound(method)

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its answer, at most :meth:`bound`
        seconds (then the client is sent ``$/cancelRequest`` and
        :class:`~rein.lsp.client_timeout.ClientTimeout` raised); a MethodNotFound answer is
        remembered, then raised."""
        seconds = self.bound(method)
        msg_id = str(uuid.uuid4())
        answer = asyncio.wrap_future(
            self._server.protocol.send_request(method, params, msg_id=msg_id)
        )
        # A late answer (or the client's error for the cancelled request)
        # still completes the pending future: it is retrieved here and
        # dropped. The wait is shielded so that pygls's future is never
        # cancelled: pygls 2.1 sets a late answer on it regardless, and
        # set_result on a cancelled future raises (InvalidStateError,
        # logged as a failed response with its traceback).
        answer.add_done_callback(_drop_late)
        try:
            return await asyncio.wait_for(asyncio.shield(answer), seconds)
        except TimeoutError:
            log.warning("%s: no answer within %g s", method, seconds)
            self._cancel(msg_id)
            from rein.lsp.client_timeout import ClientTimeout

            raise ClientTimeout(method, seconds) from None
        except asyncio.CancelledError:
            # Given up by the caller (its own bound, a cancelled run).
            self._cancel(msg_id)
            raise
        except JsonRpcException as exc:
            if method_not_found(exc):
                self.forget(method)
            raise

    def _cancel(self, msg_id: str) -> None:
        """Tell the client the request is given up (an editor may close its
        prompt); its late answer, if any, is then logged and dropped."""
        try:
            self._server.protocol.notify(
                lsp_types.CANCEL_REQUEST, lsp_types.CancelParams(id=msg_id)
            )
        except Exception:
            log.debug("could not send $/cancelRequest", exc_info=True)

    def notify(self, method: str, params: Any) -> None:
        self._server.protocol.notify(method, params)

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are plain JSON data already, framed
        here directly instead of through pygls's generic (cattrs)
        serialisation, which cost two thirds of the time per event. A client
        that is gone drops it (logged)."""
        writer = self._server.protocol.writer
        if writer is None:
            return
        body = json.dumps(
            {"jsonrpc": "2.0", "method": method, "params": params}, separators=(",", ":")
        ).encode("utf-8")
        try:
            result = writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except (BrokenPipeError, ConnectionError, ValueError):
            # ValueError: the output is closed (the client sent ``exit``).
            log.warning("the client is gone; dropping %s", method)
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> Any:
        """``workspace/applyEdit``, bounded like :meth:`request`."""
        return await self.request("workspace/applyEdit", params)

    def document(self, uri: str) -> Any:
        """The open document at ``uri`` (None when the editor has none)."""
        return self._server.workspace.text_documents.get(uri)

    def open_documents(self) -> list[str]:
        """The uris of the documents the editor has open."""
        return list(self._server.workspace.text_documents)
