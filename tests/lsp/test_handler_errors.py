"""rein.lsp.errors: Rein's errors become the JSON-RPC errors each handler
answered with before; an error answered on purpose is one warning line in
the log, an unexpected exception keeps its traceback."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidRequest

from rein.harness.errors import BusyError, ConfigError, RestoreError, ReviewError, StoreError
from rein.lsp import create_server
from rein.lsp.errors import RequestFailed, as_jsonrpc
from rein.lsp.server import ReinServer


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
