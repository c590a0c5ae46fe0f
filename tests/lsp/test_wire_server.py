"""The real ``rein serve`` over stdio, sent what no LSP client library would:
every frame and message defect of issue 17, each answered, and the stream
in step afterwards (:func:`rein.fuzz.run_case` checks both)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rein.fuzz import WireClient, frame, fuzz_workspace, run_case
from rein.fuzz_cases import Case, fixed_cases
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

BOUND_S = 15.0


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WireClient]:
    client = fuzz_workspace(tmp_path_factory.mktemp("wire"))
    client.start()
    yield client
    client.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[WireClient]:
    client = fuzz_workspace(tmp_path)
    client.start()
    yield client
    client.close()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.label) for c in fixed_cases()])
def test_every_listed_defect_is_answered_and_the_stream_stays_in_step(
    wire: WireClient, case: Case
) -> None:
    assert run_case(wire, case, BOUND_S) == []


def _errors(log: str) -> list[str]:
    """The log's error lines and tracebacks."""
    return [line for line in log.splitlines() if " ERROR " in line or "Traceback" in line]


def _sessions(client: WireClient) -> list[object]:
    answer = client.wait(client.request("rein/sessions", {}), BOUND_S)
    assert answer is not None
    sessions: list[object] = answer["result"]["sessions"]
    return sessions


def test_a_lone_surrogate_is_refused_and_starts_no_run(fresh: WireClient) -> None:
    fresh.send_raw(
        frame(
            b'{"jsonrpc": "2.0", "id": 1, "method": "rein/prompt", "params": {"text": "x\\udc80"}}'
        )
    )
    answer = fresh.wait(1, BOUND_S)
    assert answer is not None
    assert answer["error"] == {
        "code": -32602,
        "message": "params.text: not valid Unicode (a lone surrogate)",
    }
    fresh.send_raw(
        frame(
            b'{"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": '
            b'{"command": "rein.fix", "arguments": [{"uri": "file:///a\\ud800.py"}]}}'
        )
    )
    answer = fresh.wait(2, BOUND_S)
    assert answer is not None
    assert answer["error"]["code"] == -32602
    assert "params.arguments.0.uri" in answer["error"]["message"]
    assert _sessions(fresh) == []


def test_malformed_context_and_arguments_are_invalid_params(fresh: WireClient) -> None:
    bad_range = {"start": {"line": "one", "character": 0}, "end": {"line": 0, "character": 0}}
    cases = [
        (
            "rein/prompt",
            {"text": "hi", "context": {"range": bad_range}},
            "context.range.start.line",
        ),
        ("rein/prompt", {"text": "hi", "context": {"diagnostics": [{"range": 5}]}}, "diagnostics"),
        ("rein/prompt", {"text": "hi", "context": []}, "context"),
        (
            "workspace/executeCommand",
            {"command": "rein.fix", "arguments": [{"uri": "file:///x", "range": bad_range}]},
            "range.start.line",
        ),
        (
            "workspace/executeCommand",
            {"command": "rein.ask", "arguments": [{"question": {"a": 1}}]},
            "question",
        ),
    ]
    for method, params, field in cases:
        answer = fresh.wait(fresh.request(method, params), BOUND_S)
        assert answer is not None
        assert answer["error"]["code"] == -32602, answer
        assert field in answer["error"]["message"]
        assert "Traceback" not in json.dumps(answer)
    assert _sessions(fresh) == []


def test_the_maximum_message_size_is_configurable(tmp_path: Path) -> None:
    client = fuzz_workspace(tmp_path, serve_args=("--max-message-bytes", "4000"))
    client.start()
    try:
        big = {
            "jsonrpc": "2.0",
            "id": "big",
            "method": "rein/sessions",
            "params": {"p": "x" * 5000},
        }
        client.send_raw(
            frame(big) + frame({"jsonrpc": "2.0", "id": "small", "method": "rein/sessions"})
        )
        answer = client.wait("small", BOUND_S)
        assert answer is not None and "result" in answer
        assert client.wait_null_errors(1, BOUND_S) == 1
        [error] = client.null_errors
        assert "over the maximum of 4000 bytes" in error["error"]["message"]
        assert error["error"]["code"] == -32700
    finally:
        client.close()


def test_cancelling_a_run_while_the_editor_holds_diagnostics_shows_no_error(
    tmp_path: Path,
) -> None:
    """The run waits for the editor's ``rein/diagnostics``; the person
    cancels; the server tells the editor ($/cancelRequest); the editor
    answers late. Nothing pops up in the editor and no error is logged:
    the server never cancelled the request's pending future, so the late
    answer completes it (set on a cancelled one, pygls's set_result would
    raise and the answer be logged as a failed response, with its
    traceback)."""
    client = fuzz_workspace(tmp_path)
    (tmp_path / "script.yaml").write_text(
        "name: gate\nturns:\n"
        "  - tool_calls:\n"
        "      - name: write_file\n"
        "        arguments: {path: new.py, content: 'x = 1\\n'}\n"
        "  - text: done\n"
    )
    client.hold_methods.add("rein/diagnostics")
    client.start()
    try:
        prompt = client.request("rein/prompt", {"text": "write new.py"})
        [held, *_] = client.wait_held(1, BOUND_S)
        client.notify("$/cancelRequest", {"id": prompt})
        answer = client.wait(prompt, BOUND_S)
        assert answer is not None
        assert client.wait_cancelled(held["id"], BOUND_S)
        client.send_raw(frame({"jsonrpc": "2.0", "id": held["id"], "result": {"items": []}}))
        assert _sessions(client) != []  # answered after the late answer: it was handled
        # What handling it logged or showed came before the answers to the
        # requests sent after it; a second round trip lets the loop run
        # what that handling scheduled.
        assert _sessions(client) != []
        assert client.wait_messages(1, 0.0) == []
        assert _errors(client.log()) == []
    finally:
        client.close()


def test_a_late_answer_to_a_configuration_request_given_up_on_is_dropped_quietly(
    tmp_path: Path,
) -> None:
    """The editor does not answer ``workspace/configuration`` within the
    client request bound: the server tells it ($/cancelRequest) and goes
    on with the settings it has; the editor's late answer is dropped
    without an error logged or shown, and the server keeps answering."""
    client = fuzz_workspace(tmp_path)
    client.settings["harness"] = {"clientRequestTimeoutMs": 100}
    client.start()
    try:
        assert _sessions(client) == []  # the first pull was answered: the bound applies
        client.hold_methods.add("workspace/configuration")
        client.notify("workspace/didChangeConfiguration", {"settings": None})
        [held] = client.wait_held(1, BOUND_S)
        assert held["method"] == "workspace/configuration"
        assert client.wait_cancelled(held["id"], BOUND_S)
        client.send_raw(frame({"jsonrpc": "2.0", "id": held["id"], "result": [client.settings]}))
        assert _sessions(client) == []
        assert _sessions(client) == []  # see the test above: a second round trip
        assert client.wait_messages(1, 0.0) == []
        assert _errors(client.log()) == []
    finally:
        client.close()


def test_tcp_serving_uses_the_same_reader(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            *REIN,
            "serve",
            "--log-level",
            "info",
            "--tcp",
            f"127.0.0.1:{port}",
        ],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # ends with the process: bounded by its life
            if b"listening on" in line:
                break
        with socket.create_connection(("127.0.0.1", port), timeout=BOUND_S) as conn:
            conn.sendall(
                b"Content-Length: abc\r\n\r\n{}"
                + frame({"jsonrpc": "2.0", "id": 1, "method": "rein/nothing"})
            )
            data = b""
            while data.count(b'"jsonrpc"') < 2:
                chunk = conn.recv(65536)
                assert chunk, data
                data += chunk
        assert b'"code": -32700' in data
        # The next frame is read and answered (before initialize: refused).
        assert b'"id": 1' in data and b"-32002" in data
        # The client left: the server ends (as pygls's own TCP loop did).
        assert proc.wait(BOUND_S) == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_server_whose_commands_cannot_run_sandboxed_says_so_once(tmp_path: Path) -> None:
    """Issue 38: with ``approval.command: "sandboxed"`` and no bubblewrap,
    the first session brings one warning, and no later prompt another."""
    client = fuzz_workspace(tmp_path)
    client.settings["approval"] = {"command": "sandboxed"}
    client.settings["sandbox"] = {"bwrap": str(tmp_path / "no-bwrap")}
    client.start()
    try:
        for _ in range(2):
            answer = client.wait(client.request("rein/prompt", {"text": "hi"}), BOUND_S)
            assert answer is not None and "result" in answer, answer
        assert client.wait_messages(1, BOUND_S) == [
            f"Rein: sandbox: commands cannot run sandboxed here (bubblewrap ({tmp_path}/no-bwrap) "
            "is not installed: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; "
            "Fedora: dnf install bubblewrap)); every command asks; the commands of gates, "
            "preview, install (sandbox.also) run unsandboxed"
        ]
    finally:
        client.close()
