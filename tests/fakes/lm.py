"""Editor language models: the editor's side of the vscode-lm provider."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from tests.fakes.editor import Editor


class LmReply(BaseModel):
    """One scripted answer of :class:`FakeLmHost` to ``rein/lm/chat``:
    the deltas it streams, then its result, or an error instead of a
    result (``error_code``), or no answer at all until cancelled (``hang``)."""

    deltas: list[dict[str, Any]] = Field(default_factory=list)
    stop_reason: str = "stop"
    error: str | None = None
    error_code: int | None = None
    hang: bool = False


class FakeLmHost:
    """The editor's side of the vscode-lm provider (:class:`rein.providers.
    vscode_lm.LmHost`): answers each ``rein/lm/chat`` with the next scripted
    :class:`LmReply` whatever it was asked, records the params, and sets
    :attr:`cancelled` when a call is cancelled."""

    def __init__(self, replies: Sequence[LmReply]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.cancelled = asyncio.Event()
        #: Set once a hanging reply has sent its deltas.
        self.hanging = asyncio.Event()

    async def chat(
        self, params: dict[str, Any], on_delta: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        from rein.providers.vscode_lm import LmRequestError

        self.requests.append(params)
        if not self.replies:
            raise LmRequestError(-32603, "the fake editor has no scripted reply left")
        reply = self.replies.pop(0)
        for delta in reply.deltas:
            on_delta({"requestId": params["requestId"], **delta})
            await asyncio.sleep(0)  # let the model read it, as a real stream would
        if reply.error_code is not None:
            raise LmRequestError(reply.error_code, reply.error or "error")
        if reply.hang:
            self.hanging.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        result: dict[str, Any] = {"stopReason": reply.stop_reason, "deltas": len(reply.deltas)}
        if reply.error is not None:
            result["error"] = reply.error
        return result


class FakeLmProtocol:
    """The part of a language server's protocol :class:`rein.lsp.editor_lm.
    EditorLmHost` uses, with the client played by the test: each request is
    kept (method, params, its future) for the test to answer; notifications
    are recorded."""

    def __init__(self) -> None:
        import concurrent.futures

        self.requests: list[tuple[str, Any, concurrent.futures.Future[Any]]] = []
        self.notifications: list[tuple[str, Any]] = []
        self.sent = asyncio.Event()

    def send_request(self, method: str, params: Any, msg_id: str | None = None) -> Any:
        import concurrent.futures

        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.requests.append((method, params, future))
        self.sent.set()
        return future

    def notify(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))


class FakeLmServer:
    """A stand-in for the language server behind :class:`EditorLmHost`."""

    def __init__(self) -> None:
        self.protocol = FakeLmProtocol()


def wire_lm(ed: Editor, host: FakeLmHost, models: list[dict[str, Any]] | None = None) -> None:
    """The editor's language models on its client: ``rein/lm/chat`` played
    by ``host`` (its deltas sent as ``rein/lm/delta``, its errors as error
    answers) and ``rein/lm/models`` answering ``models`` (None: the client
    has no such method)."""
    from pygls.exceptions import JsonRpcException

    from rein.providers.vscode_lm import LmRequestError

    lsp_client = ed.client

    @lsp_client.feature("rein/lm/chat")
    async def chat(params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await host.chat(
                params, lambda delta: lsp_client.protocol.notify("rein/lm/delta", delta)
            )
        except LmRequestError as exc:
            raise JsonRpcException(code=exc.code, message=str(exc)) from exc

    if models is not None:

        @lsp_client.feature("rein/lm/models")
        def lm_models(params: dict[str, Any]) -> dict[str, Any]:
            return {"models": models}
