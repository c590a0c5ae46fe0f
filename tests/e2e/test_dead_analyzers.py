"""Dead or silent analyzers, headless, with the real ones (ruff server,
basedpyright): a killed analyzer that stays off makes every later verdict
stale and says which one and why; an analyzer that never answers is
bounded by ``gates.analyzer.requestTimeoutMs``."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.config import ReinConfig, load_config
from rein.harness.events import GateResult, RunEnd
from rein.headless.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec
from rein.headless.analyzers import AnalyzerPool
from rein.headless.host import HeadlessSession
from rein.providers.replay import ReplayModel

pytestmark = pytest.mark.e2e


def _edit(old: str, new: str) -> dict[str, Any]:
    call = {
        "name": "edit_file",
        "arguments": {"path": "app.py", "old_string": old, "new_string": new},
    }
    return {"tool_calls": [call]}


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and its descendants (basedpyright-langserver is a
    Python launcher whose node child holds the pipes)."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        children += [int(c) for c in text]
    for child in children:
        _kill_tree(child)
    os.kill(pid, signal.SIGKILL)


async def _kill_twice(pool: AnalyzerPool, name: str) -> None:
    """SIGKILL the analyzer, let the pool restart it once, kill it again:
    it stays off (each crash awaited through the pool's handler)."""
    analyzer = next(a for a in pool.analyzers if a.spec.name == name)
    original = pool._crashed
    for _ in range(2):
        handled = anyio.Event()

        async def crashed(a: Any, code: int | None, done: anyio.Event = handled) -> None:
            await original(a, code)
            done.set()

        pool._crashed = crashed  # type: ignore[method-assign]
        assert analyzer.client is not None and analyzer.client._server is not None
        _kill_tree(analyzer.client._server.pid)
        with anyio.fail_after(60):
            await handled.wait()
    pool._crashed = original  # type: ignore[method-assign]
    assert not analyzer.alive and analyzer.failure is not None


async def test_a_dead_analyzer_makes_every_later_verdict_stale_and_says_so(pyproj: Path) -> None:
    model = ReplayModel(
        [
            _edit('f"hello {name}"', 'f"hi {name}"'),
            {"text": "first"},
            _edit('f"hi {name}"', 'f"hey {name}"'),
            {"text": "second"},
        ]
    )
    gates: list[GateResult] = []
    ends: list[RunEnd] = []

    def listen(event: Any) -> None:
        if isinstance(event, GateResult) and event.gate == "analyzer":
            gates.append(event)
        elif isinstance(event, RunEnd):
            ends.append(event)

    async with HeadlessSession(pyproj, model, ReinConfig(), watch=False) as host:
        assert {a.spec.name for a in host.pool.analyzers if a.alive} == {"ruff", "basedpyright"}
        await _kill_twice(host.pool, "basedpyright")
        host.subscribe(listen)
        first = await host.prompt("say hi")
        second = await host.prompt("say hey")
        reports = list(host.reports)
    why = (
        "diagnostics are missing: basedpyright is not running (basedpyright exited twice (code -9))"
    )
    assert any("basedpyright exited again" in r and "it stays off" in r for r in reports), reports
    assert [r.status for r in (first, second)] == ["completed", "completed"]
    assert [(g.status, g.stale) for g in gates] == [("unverified", True)] * 2
    assert all(why in g.detail for g in gates), [g.detail for g in gates]
    assert [[u.reason for u in e.unverified] for e in ends] == [
        [f"diagnostics may be stale: {why}"]
    ] * 2
    # ruff still looked: its findings are in the snapshot, from ruff alone.
    assert all("(from ruff)" in g.detail for g in gates)


def _silent_spec(tmp_path: Path) -> AnalyzerSpec:
    """An analyzer process that reads its input and never answers."""
    script = tmp_path / "silent.py"
    script.write_text("import sys\nfor _ in sys.stdin.buffer:\n    pass\n")
    return AnalyzerSpec("silent", (sys.executable, str(script)), frozenset({".py"}))


async def test_an_analyzer_that_never_answers_initialize_is_reported_not_waited_on(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    reports: list[str] = []
    ruff = DEFAULT_ANALYZERS[0]
    pool = AnalyzerPool(
        tmp_path, [_silent_spec(tmp_path), ruff], on_report=reports.append, request_timeout_ms=300
    )
    with anyio.fail_after(20):  # the default bound (10 s) would not fit twice
        await pool.start()
    try:
        expected = "silent did not answer initialize within 0.3 s (gates.analyzer.requestTimeoutMs)"
        assert reports == [f"analyzer silent failed to start: {expected}"]
        assert [a.spec.name for a in pool.analyzers] == ["ruff"]
        snapshot = await pool.snapshot()
        assert snapshot.blind is None and not snapshot.stale
    finally:
        await pool.stop()


async def test_the_request_bound_comes_from_the_configuration(tmp_path: Path) -> None:
    config = load_config({"gates": {"analyzer": {"requestTimeoutMs": 250}}})
    host = HeadlessSession(tmp_path, ReplayModel([]), config, analyzers=(), watch=False)
    assert host.pool.request_timeout_s == 0.25


#: A language server (pygls, a real process over stdio) that offers pull
#: diagnostics and never answers a pull.
SILENT_PULL = """\
import asyncio

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer

server = LanguageServer("silent-pull", "1")


@server.feature(
    t.TEXT_DOCUMENT_DIAGNOSTIC,
    t.DiagnosticOptions(inter_file_dependencies=False, workspace_diagnostics=False),
)
async def diagnostic(params: t.DocumentDiagnosticParams) -> None:
    await asyncio.Event().wait()


server.start_io()
"""


async def test_an_unanswered_pull_leaves_that_file_stale_and_says_why(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    script = tmp_path / "silent_pull.py"
    script.write_text(SILENT_PULL)
    spec = AnalyzerSpec("silentpull", (sys.executable, str(script)), frozenset({".py"}))
    # Long enough for a Python server to start, short beside the 30 s below.
    pool = AnalyzerPool(ws, [spec], request_timeout_ms=3_000)
    await pool.start()
    try:
        (analyzer,) = pool.analyzers
        assert analyzer.pull and analyzer.awaiting == {"app.py": 1}
        # Not owed any more once the bound passed: idle well before the 30 s.
        assert await pool.wait_idle(30)
        snapshot = await pool.snapshot(["app.py"])
        assert snapshot.stale and snapshot.blind is None
        assert snapshot.stale_reason == (
            "diagnostics are missing: silentpull did not answer the diagnostics of app.py "
            "within 3 s (gates.analyzer.requestTimeoutMs)"
        )
        # Another file's snapshot is not stale for it.
        assert not (await pool.snapshot(["other.py"])).stale
    finally:
        await pool.stop()
