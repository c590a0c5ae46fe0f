"""Fuzzing the real ``rein serve`` over stdio (``rein fuzz --cases N``).

:class:`WireClient` starts the server as a subprocess and speaks raw bytes
to it, so it can send what no LSP client library would: bad headers,
non-JSON, batches, odd ids. It plays a minimal editor (answers the
server's requests) and reads every frame the server writes.

:func:`run_case` sends one :class:`~rein.fuzz_cases.Case` and returns what
was wrong (empty: nothing): a request not answered within the bound, an
answer that is an internal error (-32603), an error message carrying
traceback text or longer than the bound, an InvalidParams that does not
name the broken field, a malformed frame not answered with a parse error,
the next well-formed request not answered, the server gone.

The cases themselves are hypothesis strategies (:mod:`rein.fuzz_cases`):
hypothesis is a development dependency (the ``dev`` extra).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.fuzz_cases import Case

__all__ = ["FuzzReport", "WireClient", "frame", "run_case", "run_fuzz"]

#: How long one request may take to be answered (seconds).
ANSWER_BOUND_S = 20.0
#: The longest error message the server may send (its bound plus a margin).
MAX_ERROR_CHARS = 1100
_TRACEBACK_MARKS = ("Traceback (most recent call last)", 'File "', '.py", line')


def frame(message: dict[str, Any] | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _editor_answer(method: str, params: Any, settings: dict[str, Any]) -> Any:
    """What the minimal editor answers to the server's requests."""
    if method == "workspace/configuration":
        return [settings for _ in (params or {}).get("items", [None])]
    if method == "rein/diagnostics":
        return {"items": []}
    if method == "workspace/applyEdit":
        return {"applied": True}
    if method == "rein/confirm":
        return {"approved": False}
    if method == "rein/askUser":
        return {"answer": "no"}
    return None


class WireClient:
    """A ``rein serve`` subprocess and a raw byte channel to it."""

    def __init__(
        self, root: Path, storage: Path, script: Path, serve_args: tuple[str, ...] = ()
    ) -> None:
        self.root = root
        self.serve_args = serve_args
        self.settings: dict[str, Any] = {
            "storagePath": str(storage),
            "model": {"provider": "replay", "script": str(script)},
            "approval": {"command": "ask"},
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self._responses: dict[Any, dict[str, Any]] = {}
        self.null_errors: list[dict[str, Any]] = []
        self.messages_shown: list[str] = []
        #: Server requests of these methods are kept in ``held``, not answered.
        self.hold_methods: set[str] = set()
        self.held: list[dict[str, Any]] = []
        #: The ids of the requests the server gave up on ($/cancelRequest).
        self.cancelled: list[Any] = []
        self._cond = threading.Condition()
        self._writes: queue.Queue[bytes | None] = queue.Queue()
        self._ids = 0
        self.stderr = tempfile.TemporaryFile()

    # ------------------------------------------------------------ lifecycle

    def start(self, timeout_s: float = 30.0) -> None:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rein", "serve", *self.serve_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=self.root,
            env=env,
        )
        threading.Thread(target=self._read_loop, daemon=True).start()
        threading.Thread(target=self._write_loop, daemon=True).start()
        init = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": self.root.as_uri(),
                "capabilities": {"workspace": {"configuration": True}},
                "initializationOptions": self.settings,
            },
        )
        if self.wait(init, timeout_s) is None:
            raise RuntimeError("rein serve did not answer initialize")
        self.notify("initialized", {})

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            shutdown = self.request("shutdown", None)
            self.wait(shutdown, 10)
            self.notify("exit", None)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._writes.put(None)
        self.stderr.close()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss_kb(self) -> int:
        """The server's resident memory (Linux /proc; 0 elsewhere)."""
        if self.proc is None:
            return 0
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return 0
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    # ------------------------------------------------------------- sending

    def send_raw(self, data: bytes) -> None:
        self._writes.put(data)

    def next_id(self) -> str:
        self._ids += 1
        return f"fuzz-{self._ids}"

    def request(self, method: str, params: Any, msg_id: Any = None) -> Any:
        msg_id = self.next_id() if msg_id is None else msg_id
        self.send_raw(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        return msg_id

    def notify(self, method: str, params: Any) -> None:
        self.send_raw(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def wait(self, msg_id: Any, timeout_s: float = ANSWER_BOUND_S) -> dict[str, Any] | None:
        """The response to ``msg_id``, or None past ``timeout_s``."""
        key = json.dumps(msg_id)
        with self._cond:
            self._cond.wait_for(lambda: key in self._responses or not self.alive, timeout_s)
            return self._responses.pop(key, None)

    def wait_held(self, count: int, timeout_s: float = ANSWER_BOUND_S) -> list[dict[str, Any]]:
        with self._cond:
            self._cond.wait_for(lambda: len(self.held) >= count, timeout_s)
            return list(self.held)

    def wait_messages(self, count: int, timeout_s: float = ANSWER_BOUND_S) -> list[str]:
        """The messages shown (window/showMessage), once ``count`` came."""
        with self._cond:
            self._cond.wait_for(lambda: len(self.messages_shown) >= count, timeout_s)
            return list(self.messages_shown)

    def wait_cancelled(self, msg_id: Any, timeout_s: float = ANSWER_BOUND_S) -> bool:
        """Whether the server sent ``$/cancelRequest`` for ``msg_id`` within ``timeout_s``."""
        with self._cond:
            return self._cond.wait_for(lambda: msg_id in self.cancelled, timeout_s)

    def log(self) -> str:
        """What the server wrote to its log (stderr) so far (read without
        moving the offset the server writes at: it shares it)."""
        fd = self.stderr.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")

    def wait_null_errors(self, count: int, timeout_s: float = ANSWER_BOUND_S) -> int:
        with self._cond:
            self._cond.wait_for(lambda: len(self.null_errors) >= count, timeout_s)
            return len(self.null_errors)

    # -------------------------------------------------------------- threads

    def _write_loop(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        stdin = self.proc.stdin
        while (data := self._writes.get()) is not None:
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, OSError):
                return

    def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out: IO[bytes] = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                raise RuntimeError("the server sent a frame without Content-Length")
            self._dispatch(json.loads(out.read(length)))

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is not None and "id" in message:
            if method in self.hold_methods:
                with self._cond:
                    self.held.append(message)
                    self._cond.notify_all()
                return
            result = _editor_answer(method, message.get("params"), self.settings)
            self.send_raw(frame({"jsonrpc": "2.0", "id": message["id"], "result": result}))
            return
        if method is not None:
            if method == "window/showMessage":
                with self._cond:
                    self.messages_shown.append(str(message["params"].get("message", "")))
                    self._cond.notify_all()
            elif method == "$/cancelRequest":
                with self._cond:
                    self.cancelled.append(message["params"].get("id"))
                    self._cond.notify_all()
            return
        with self._cond:
            if message.get("id") is None:
                self.null_errors.append(message)
            else:
                self._responses[json.dumps(message["id"])] = message
            self._cond.notify_all()


# ------------------------------------------------------------------ checks


def _error_problems(error: dict[str, Any], where: str) -> list[str]:
    problems = []
    text = json.dumps(error)
    if any(mark in text for mark in _TRACEBACK_MARKS):
        problems.append(f"{where}: traceback text in the error: {text[:300]}")
    if len(str(error.get("message", ""))) > MAX_ERROR_CHARS:
        problems.append(f"{where}: an error message of {len(error['message'])} characters")
    if error.get("code") == -32603:
        problems.append(f"{where}: internal error {text[:300]}")
    return problems


def run_case(client: WireClient, case: Case, bound_s: float = ANSWER_BOUND_S) -> list[str]:
    """Send ``case``; what went wrong (empty: nothing)."""
    problems: list[str] = []
    where = case.label
    before = len(client.null_errors)
    if case.raw is not None:
        client.send_raw(case.raw)
        if case.parse_errors and client.wait_null_errors(before + 1, bound_s) <= before:
            problems.append(f"{where}: no error answer for the malformed message")
        if case.answer_id is not None:
            problems += _check_answer(client, case, client.wait(case.answer_id, bound_s), where)
    else:
        msg_id = client.request(case.method, case.params)
        problems += _check_answer(client, case, client.wait(msg_id, bound_s), where)
    # The next well-formed request is answered: the stream is in step. The
    # server answers in order, so every error for the case has come by then.
    probe = client.request("rein/sessions", {})
    if client.wait(probe, bound_s) is None:
        problems.append(f"{where}: the next well-formed request was not answered")
    with client._cond:
        errors = client.null_errors[before:]
    allowed = {case.parse_errors} if case.parse_errors is not None else {0, 1}
    if len(errors) not in allowed:
        problems.append(f"{where}: {len(errors)} error answers with a null id, expected {allowed}")
    for error in errors:
        problems += _error_problems(error.get("error", {}), where)
    if not client.alive:
        problems.append(f"{where}: the server died")
    return problems


def _check_answer(
    client: WireClient, case: Case, response: dict[str, Any] | None, where: str
) -> list[str]:
    if response is None:
        return [f"{where}: no answer within the bound" + ("" if client.alive else " (died)")]
    error = response.get("error")
    if error is None:
        if case.expect_code is not None:
            return [f"{where}: expected error {case.expect_code}, got a result"]
        return []
    problems = _error_problems(error, where)
    if case.expect_code is not None and error.get("code") != case.expect_code:
        problems.append(
            f"{where}: expected error {case.expect_code}, got {json.dumps(error)[:300]}"
        )
    if case.field is not None and case.field not in str(error.get("message", "")):
        problems.append(
            f"{where}: the error does not name {case.field!r}: {error['message'][:300]}"
        )
    return problems


# ------------------------------------------------------------------- runs


@dataclass
class FuzzReport:
    cases: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    rss_before_kb: int = 0
    rss_after_kb: int = 0
    alive: bool = True

    def json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "seconds": round(self.seconds, 1),
            "failures": len(self.failures),
            "first_failures": self.failures[:10],
            "rss_before_kb": self.rss_before_kb,
            "rss_after_kb": self.rss_after_kb,
            "alive": self.alive,
        }


def fuzz_workspace(base: Path, serve_args: tuple[str, ...] = ()) -> WireClient:
    """A small workspace, a replay script whose every session answers in
    one turn, and a client for a server started there."""
    root = base / "ws"
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    script = base / "script.yaml"
    script.write_text('name: fuzz\nturns:\n  - text: "done"\n')
    return WireClient(root, base / "storage", script, serve_args)


def run_fuzz(cases: int, seed: int | None = None) -> FuzzReport:
    """``cases`` generated cases against one server; every failure kept
    (the run goes on)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    from rein.fuzz_cases import any_case

    report = FuzzReport()
    with tempfile.TemporaryDirectory(prefix="rein-fuzz-") as tmp:
        client = fuzz_workspace(Path(tmp))
        client.start()
        report.rss_before_kb = client.rss_kb()
        started = time.monotonic()

        @settings(
            max_examples=cases,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(any_case())
        def one(case: Case) -> None:
            if not client.alive:
                return
            report.cases += 1
            report.failures += run_case(client, case)

        if seed is not None:
            one = hypothesis_seed(seed)(one)
        one()
        report.seconds = time.monotonic() - started
        report.rss_after_kb = client.rss_kb()
        report.alive = client.alive
        client.close()
    return report
