"""Dead or silent analyzers, headless, with the real ones (ruff server,
basedpyright): a killed analyzer is restarted again and again (with a
backoff) and later verdicts look; one past its restart budget stays off for
a cool-down and makes every verdict meanwhile stale and says which one and
why; an analyzer that never answers is
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
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from rein.disk.restarts import COOL_DOWN_S, MAX_RESTARTS, RestartPolicy
from rein.harness.events import GateResult, RunEnd
from rein.harness.ports import Mutation
from rein.hosting.headless import HeadlessSession
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
    Python launcher whose node child holds the pipes). Each is stopped
    first: a launcher that saw its node child die would exit by itself,
    with the child's status as its code (247, not -9: failed once at load)."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return  # it ended already
    children: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            children += [int(c) for c in text]
    except FileNotFoundError:
        pass  # it ended already
    for child in children:
        _kill_tree(child)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def _kill(pool: AnalyzerPool, name: str, times: int = 1) -> None:
    """SIGKILL the analyzer ``times`` times, each crash awaited through the
    pool's handler and the restart it plans (but not a cool-down's)."""
    await pool.started()  # a host starts its analyzers in the background
    analyzer = next(a for a in pool.analyzers if a.spec.name == name)
    original = pool.analyzer_exited
    try:
        for _ in range(times):
            handled = anyio.Event()

            async def crashed(a: Any, code: int | None, done: anyio.Event = handled) -> None:
                await original(a, code)
                done.set()

            pool.analyzer_exited = crashed  # type: ignore[method-assign]
            assert analyzer.client is not None and analyzer.client._server is not None
            _kill_tree(analyzer.client._server.pid)
            with anyio.fail_after(60):
                await handled.wait()
                if analyzer.failure is None:  # not cooling down: restarted after its backoff
                    await pool.restarts.settled()
                    assert analyzer.alive
    finally:
        pool.analyzer_exited = original  # type: ignore[method-assign]


def _analyzer_gates(host: HeadlessSession) -> tuple[list[GateResult], list[RunEnd]]:
    gates: list[GateResult] = []
    ends: list[RunEnd] = []

    def listen(event: Any) -> None:
        if isinstance(event, GateResult) and event.gate == "analyzer":
            gates.append(event)
        elif isinstance(event, RunEnd):
            ends.append(event)

    host.subscribe(listen)
    return gates, ends


async def test_an_analyzer_killed_again_and_again_is_restarted_and_later_verdicts_look(
    pyproj: Path,
) -> None:
    """Killed three times in one session (once between two runs): each
    crash is reported with its backoff, and every verdict after it is made
    with basedpyright looking (before: restarted once, then it stayed off
    and every verdict was "unverified")."""
    model = ReplayModel(
        [
            _edit('f"hello {name}"', 'f"hi {name}"'),
            {"text": "first"},
            _edit('f"hi {name}"', "name + 1"),
            {"text": "second"},
            _edit("name + 1", 'f"hey {name}"'),  # the repair the blocker asked for
            {"text": "repaired"},
        ]
    )
    async with HeadlessSession(pyproj, model, ReinConfig(), watch=False) as host:
        gates, ends = _analyzer_gates(host)
        await _kill(host.pool, "basedpyright", times=2)
        first = await host.prompt("say hi")
        await _kill(host.pool, "basedpyright")
        second = await host.prompt("break it")
        reports = list(host.reports)
        running = {a.spec.name for a in host.pool.analyzers if a.alive}
    assert running == {"ruff", "basedpyright"}
    assert [r for r in reports if "basedpyright" in r] == [
        f"analyzer basedpyright exited (code -9); restarting it in {delay} s "
        f"(restart {n} of {MAX_RESTARTS} within 60 s)"
        for n, delay in ((1, "0.5"), (2, "1"), (3, "2"))
    ]
    assert [r.status for r in (first, second)] == ["completed", "completed"]
    assert [(g.status, g.stale) for g in gates] == [
        ("passed", False),
        ("blocked", False),
        ("passed", False),
    ], [g.detail for g in gates]
    assert all("(from ruff, basedpyright)" in g.detail for g in gates), [g.detail for g in gates]
    assert [[u.reason for u in e.unverified] for e in ends] == [[], []]
    # basedpyright looked at the second edit after its third kill: its type
    # error blocked the edit until the model repaired it.
    assert [(b.source, b.code) for b in gates[1].blockers] == [
        ("basedpyright", "reportOperatorIssue")
    ]


async def test_an_analyzer_past_its_restart_budget_makes_verdicts_stale_and_says_so(
    pyproj: Path,
) -> None:
    """Past its budget (here one restart a minute) an analyzer stays off
    for the cool-down: every verdict meanwhile is stale and says which one
    and why (ruff still looks)."""
    model = ReplayModel(
        [
            _edit('f"hello {name}"', 'f"hi {name}"'),
            {"text": "first"},
            _edit('f"hi {name}"', 'f"hey {name}"'),
            {"text": "second"},
        ]
    )
    host = HeadlessSession(pyproj, model, ReinConfig(), watch=False)
    host.pool.restarts.policy = RestartPolicy(max_restarts=1)
    async with host:
        gates, ends = _analyzer_gates(host)
        await _kill(host.pool, "basedpyright", times=2)
        first = await host.prompt("say hi")
        second = await host.prompt("say hey")
        reports = list(host.reports)
    off = "basedpyright exited (code -9), 2 times within 60 s"
    why = (
        f"diagnostics are missing: basedpyright is not running ({off}; "
        f"off for {COOL_DOWN_S:g} s, then tried again)"
    )
    assert f"analyzer {off}; it stays off for 300 s, then is tried again" in reports, reports
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
        tmp_path, [_silent_spec(tmp_path), ruff], on_report=reports.append, request_timeout_ms=3_000
    )
    with anyio.fail_after(20):  # the default bound (10 s) would not fit twice
        await pool.start()
    try:
        # 3 s: ruff answers well within it on a loaded machine (0.3 s did not).
        expected = "silent did not answer initialize within 3 s (gates.analyzer.requestTimeoutMs)"
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
    # Long enough for a Python server to start on a loaded machine (3 s was
    # not, with the whole suite beside it), short beside the 40 s below.
    pool = AnalyzerPool(ws, [spec], request_timeout_ms=10_000)
    await pool.start()
    try:
        (analyzer,) = pool.analyzers
        assert analyzer.pull and analyzer.awaiting == {"app.py": 1}
        # Not owed any more once the bound passed: idle well before the 40 s.
        assert await pool.wait_idle(40)
        snapshot = await pool.snapshot(["app.py"])
        assert snapshot.stale and snapshot.blind is None
        assert snapshot.stale_reason == (
            "diagnostics are missing: silentpull did not answer the diagnostics of app.py "
            "within 10 s (gates.analyzer.requestTimeoutMs)"
        )
        # Another file's snapshot is not stale for it.
        assert not (await pool.snapshot(["other.py"])).stale
    finally:
        await pool.stop()


LATE_ANALYZER = Path(__file__).parents[1] / "fakes" / "late_analyzer.py"


async def test_a_dead_server_leaves_its_own_files_stale_and_the_others_part_standing(
    tmp_path: Path,
) -> None:
    """Two stand-in servers, one for Python and one for shell scripts; the
    shell one dies and stays off. A change of a Python file is verified by
    the Python one alone (the dead one's part is not asked for); a change of
    a script is stale and says which server is not running."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    (root / "run.sh").write_text("echo hi\n")
    specs = []
    for name, ext in (("py", ".py"), ("sh", ".sh")):
        signal_file = tmp_path / f"{name}.signal"
        signal_file.write_text("")  # initialize is answered at once
        command = (sys.executable, str(LATE_ANALYZER), str(signal_file))
        specs.append(AnalyzerSpec(name, command, frozenset({ext}), language_id=name))
    pool = AnalyzerPool(root, specs, restart_policy=RestartPolicy(max_restarts=0))
    async with pool:
        assert await pool.wait_idle(30)
        await _kill(pool, "sh")
        assert [a.spec.name for a in pool.analyzers if a.alive] == ["py"]

        (root / "app.py").write_text("x = 2\n")
        pool.on_mutation(Mutation(1, ("app.py",)))
        assert await pool.wait_idle(30)
        python_only = await pool.snapshot(None)
        assert (python_only.stale, python_only.stale_reason) == (False, None)

        (root / "run.sh").write_text("echo bye\n")
        pool.on_mutation(Mutation(2, ("run.sh",)))
        assert await pool.wait_idle(30)
        both = await pool.snapshot(None)
        assert both.stale
        assert both.stale_reason is not None and "sh is not running" in both.stale_reason
        # Asked for the Python file alone, the dead one's part is not asked for.
        assert not (await pool.snapshot(["app.py"])).stale
