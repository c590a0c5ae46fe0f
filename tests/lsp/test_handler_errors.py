"""rein.lsp.errors: Rein's errors become the JSON-RPC errors each handler
answered with before; an error answered on purpose is one warning line in
the log, an unexpected exception keeps its traceback."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidRequest

from rein.harness import AgentBusyError
from rein.harness.errors import (
    BusyError,
    CheckpointsOffError,
    ConfigError,
    ReinError,
    RestoreError,
    ReviewError,
    StoreError,
)
from rein.lsp import create_server
from rein.lsp.errors import RequestFailed, as_jsonrpc
from rein.lsp.handlers import checkpoints, review, runs
from rein.lsp.server import ReinServer
from rein.session import Session


class _Capture:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def answer(self) -> dict[str, Any]:
        _, _, body = self.data.partition(b"\r\n\r\n")
        parsed: dict[str, Any] = json.loads(body)
        return parsed


def _answer_to(raised: Exception) -> tuple[dict[str, Any], ReinServer]:
    server = create_server()
    capture = _Capture()
    server.protocol.set_writer(capture)

    @server.feature("test/fails")
    def fails(ls: ReinServer, params: Any) -> None:
        raise raised

    # Initialized first, as a client does (before that, requests are refused).
    initialize = {"processId": None, "rootUri": None, "capabilities": {}}
    server.protocol.handle_frame(
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
        ).encode()
    )
    capture.data = b""
    request = {"jsonrpc": "2.0", "id": 3, "method": "test/fails", "params": {}}
    server.protocol.handle_frame(json.dumps(request).encode())
    return capture.answer(), server


def test_an_error_answered_on_purpose_is_one_warning_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    answer, _ = _answer_to(RequestFailed("Rein: model.apiKeyEnv: OPENAI_API_KEY is not set"))
    assert answer["error"]["code"] == -32803
    assert [(r.levelno, r.exc_info) for r in caplog.records] == [(logging.WARNING, None)]
    assert "OPENAI_API_KEY is not set" in caplog.records[0].getMessage()


def test_an_unexpected_exception_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    answer, _ = _answer_to(KeyError("x"))
    assert answer["error"]["code"] == -32603
    assert any(r.levelno == logging.ERROR and r.exc_info for r in caplog.records)


@pytest.mark.parametrize(
    ("raised", "method", "code", "message"),
    [
        (ConfigError("model.provider: 'x'"), "rein/prompt", -32803, "Rein: model.provider: 'x'"),
        (BusyError("restoring files"), "rein/prompt", -32600, "rein/prompt: restoring files"),
        (BusyError("a run is active"), "rein/reviewDecide", -32803, "rein/reviewDecide: a run"),
        (ReviewError("no hunk 7"), "rein/reviewDecide", -32803, "rein/reviewDecide: no hunk 7"),
        (RestoreError("was dropped"), "rein/restore", -32803, "rein/restore: was dropped"),
        (StoreError("disk full"), "rein/checkpoints", -32803, "rein/checkpoints: disk full"),
        # Mapped since the handlers stopped mapping (they were internal errors before).
        (StoreError("disk full"), "rein/prompt", -32803, "rein/prompt: disk full"),
        (RestoreError("no run 'r'"), "rein/checkpoints", -32803, "rein/checkpoints: no run 'r'"),
        (AgentBusyError("a run is active"), "rein/prompt", -32600, "rein/prompt: a run is"),
        (AgentBusyError("a run is active"), "rein/setModel", -32803, "rein/setModel: a run is"),
        (CheckpointsOffError("off"), "rein/review", -32803, "rein/review: off"),
    ],
)
def test_reins_errors_map_to_the_codes_the_protocol_documents(
    raised: Exception, method: str, code: int, message: str
) -> None:
    mapped = as_jsonrpc(raised, method)
    assert mapped is not None
    assert mapped.code == code
    assert mapped.message.startswith(message)


def test_other_exceptions_are_left_to_the_protocol() -> None:
    assert as_jsonrpc(KeyError("x"), "rein/prompt") is None
    already = JsonRpcInvalidRequest("rein/prompt: busy")
    assert as_jsonrpc(already, "rein/prompt") is None


# ------------------------------------------------ the handlers raise Rein's errors


class _Manager:
    def __init__(self, in_use: bool) -> None:
        self._in_use = in_use

    def in_use(self, session_id: str) -> bool:
        return self._in_use


class _Session:
    """What the handlers read of a session before they refuse it."""

    refuse_if_running = Session.refuse_if_running

    def __init__(self, *, busy: bool = False) -> None:
        self.id = "ses_1"
        self.busy = busy
        self.restoring = False
        self.closing = False
        self.reviewer = None
        self.checkpoints: object = None


class _NoIsolated:
    """No isolated sessions (rein/newSession isolated: true)."""

    def session(self, session_id: str) -> None:
        return None

    def manager(self, session_id: str) -> None:
        return None


class _Server:
    """The server as far as a refused request gets."""

    def __init__(self, session: _Session, *, in_use: bool = False) -> None:
        self.session = session
        self.manager = _Manager(in_use)
        self.isolated = _NoIsolated()

    async def ready(self) -> None:
        return None

    async def open_store(self) -> None:
        return None

    async def load_session(self, session_id: str) -> _Session:
        return self.session

    def adapters(self) -> tuple[object, object]:
        return object(), object()


async def _refusal(call: Any, method: str) -> tuple[ReinError, int, str]:
    with pytest.raises(ReinError) as raised:
        await call
    mapped = as_jsonrpc(raised.value, method)
    assert mapped is not None
    return raised.value, mapped.code, mapped.message


async def test_a_review_of_a_session_without_checkpoints_is_request_failed() -> None:
    server: Any = _Server(_Session())
    error, code, message = await _refusal(
        review.review(server, {"sessionId": "ses_1"}), "rein/review"
    )
    assert isinstance(error, CheckpointsOffError)
    assert code == -32803
    assert message == (
        "rein/review: session ses_1 keeps no checkpoints (checkpoints.enabled is false), "
        "so it has no changes to review"
    )


async def test_checkpoints_of_a_session_without_them_are_request_failed() -> None:
    server: Any = _Server(_Session())
    error, code, message = await _refusal(
        checkpoints.checkpoints(server, {"sessionId": "ses_1"}), "rein/checkpoints"
    )
    assert isinstance(error, CheckpointsOffError)
    assert code == -32803
    assert message == (
        "rein/checkpoints: checkpoints are off for this session (rein.checkpoints.enabled is false)"
    )


async def test_a_restore_while_a_prompt_starts_is_the_busy_error() -> None:
    session = _Session()
    session.checkpoints = object()
    server: Any = _Server(session, in_use=True)
    error, code, message = await _refusal(
        checkpoints.restore(server, {"sessionId": "ses_1", "runId": "run_1"}), "rein/restore"
    )
    assert isinstance(error, BusyError)
    assert code == -32803
    assert message == (
        "rein/restore: session ses_1 is running a task; abort or wait for the run before restoring"
    )


async def test_a_prompt_on_a_running_session_has_the_one_busy_message() -> None:
    server: Any = _Server(_Session(busy=True))
    error, code, message = await _refusal(
        runs.prompt(server, {"sessionId": "ses_1", "text": "hi"}), "rein/prompt"
    )
    assert isinstance(error, BusyError)
    assert code == -32600
    assert message == (
        "rein/prompt: session ses_1 is already running a task; use rein/steer to redirect "
        "it or rein/followUp to queue this message"
    )
