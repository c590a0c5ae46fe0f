"""The editor's language models (provider ``vscode-lm``): the language
server's side of :class:`rein.providers.vscode_lm.LmHost`.

``rein/lm/chat`` goes to the client as a request; the ``rein/lm/delta``
notifications the client sends while it runs are routed to the turn that
asked, by ``requestId``. Cancelling a turn sends ``$/cancelRequest``. The
``rein/lm/consent`` notification tells the server a person allowed Rein to
use the editor's models: auto-repair, which no person starts, waits for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from lsprotocol import types as lsp_types
from pygls.exceptions import JsonRpcException

from rein.lsp.channel import method_not_found

__all__ = ["CHAT", "CONSENT", "DELTA", "EditorLmHost", "LmHandlerServer", "LmWire"]

log = logging.getLogger(__name__)

CHAT, DELTA, CONSENT = "rein/lm/chat", "rein/lm/delta", "rein/lm/consent"

#: The code this host answers with when the client has no ``rein/lm/chat``.
NO_EDITOR = -32601

Delta = dict[str, Any]


def _drop_late(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("a late or failed rein/lm/chat answer: %s", answer.exception())


class _Turn:
    """One running ``rein/lm/chat``: where its deltas go and how many came."""

    def __init__(self, on_delta: Callable[[Delta], None]) -> None:
        self.on_delta = on_delta
        self.received = 0
        #: The count the answer announced (``deltas``), once it came.
        self.expected: int | None = None
        self.complete = asyncio.Event()

    def take(self, delta: Delta) -> None:
        self.received += 1
        self.on_delta(delta)
        if self.expected is not None and self.received >= self.expected:
            self.complete.set()


class LmWire(Protocol):
    """What :class:`EditorLmHost` uses of the server's JSON-RPC protocol."""

    def send_request(
        self, method: str, params: Any, *, msg_id: str | None = ...
    ) -> concurrent.futures.Future[Any]: ...
    def notify(self, method: str, params: Any) -> None: ...


class LmHandlerServer(Protocol):
    """What the vscode-lm notification handlers use of the server."""

    @property
    def lm_host(self) -> EditorLmHost: ...


class EditorLmHost:
    """:class:`~rein.providers.vscode_lm.LmHost` over the language server's
    client, over the server's protocol ``wire``. ``consented``: a person
    has allowed the editor's models (the client's ``rein/lm/consent``)."""

    def __init__(self, wire: LmWire) -> None:
        self._wire = wire
        self._turns: dict[str, _Turn] = {}
        self.consented = False

    async def chat(
        self, params: dict[str, Any], on_delta: Callable[[Delta], None]
    ) -> dict[str, Any]:
        # Imported here: the server answers ``initialize`` before the providers load.
        from rein.providers.vscode_lm import LmRequestError

        request_id = params["requestId"]
        msg_id = str(uuid.uuid4())
        turn = self._turns[request_id] = _Turn(on_delta)
        answer = asyncio.wrap_future(self._wire.send_request(CHAT, params, msg_id=msg_id))
        # The client's answer to a cancelled request still completes the
        # pending future: retrieved and dropped here, never set on a
        # cancelled one.
        answer.add_done_callback(_drop_late)
        try:
            result = await asyncio.shield(answer)
            await self._all_deltas(turn, result)
        except asyncio.CancelledError:
            self._cancel(msg_id)
            raise
        except JsonRpcException as exc:
            if method_not_found(exc):
                raise LmRequestError(
                    NO_EDITOR,
                    "the editor does not answer rein/lm/chat: the vscode-lm provider needs "
                    "the Rein extension for VS Code",
                ) from exc
            raise LmRequestError(int(exc.code), exc.message) from exc
        finally:
            self._turns.pop(request_id, None)
        if not isinstance(result, dict):
            raise LmRequestError(-32603, f"rein/lm/chat answered {result!r:.200}, not an object")
        return result

    @staticmethod
    async def _all_deltas(turn: _Turn, result: Any) -> None:
        """The answer can overtake the client's last deltas on the wire (a
        client may queue notifications): with ``deltas`` (how many it sent)
        in the answer, wait for that many. The provider's idle bound
        (``model.streamIdleTimeout``) bounds the wait."""
        expected = result.get("deltas") if isinstance(result, dict) else None
        if isinstance(expected, int) and turn.received < expected:
            turn.expected = expected
            await turn.complete.wait()

    def _cancel(self, msg_id: str) -> None:
        try:
            self._wire.notify(lsp_types.CANCEL_REQUEST, lsp_types.CancelParams(id=msg_id))
        except Exception:
            log.debug("could not send $/cancelRequest for rein/lm/chat", exc_info=True)

    def on_delta(self, params: Any) -> None:
        """A ``rein/lm/delta``: to the turn that asked (a late one, after its
        turn ended or was cancelled, is dropped)."""
        if not isinstance(params, dict):
            log.warning("%s: params must be an object, got %s", DELTA, type(params).__name__)
            return
        request_id = params.get("requestId")
        if not isinstance(request_id, str):
            log.warning("%s without a requestId: dropped", DELTA)
            return
        turn = self._turns.get(request_id)
        if turn is None:
            log.debug("%s for %s, which is not running: dropped", DELTA, request_id)
            return
        turn.take(params)
