"""The analyzer pool with the real analyzers (ruff server, basedpyright):
settled means they say they are done, skipped paths stay out, touched files
are opened, an environment change is seen, and no analyzer means blind."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from rein.config import ReinConfig
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec, find_executable
from rein.disk.analyzers import AnalyzerPool
from rein.disk.restarts import AnalyzerRestarts, RestartPolicy
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.e2e.basedpyright_cli import basedpyright_cli
from tests.rein_cli import replay_run

pytestmark = pytest.mark.e2e

RUFF, BASEDPYRIGHT = DEFAULT_ANALYZERS


def generated_project(root: Path, modules: int) -> None:
    """A package of ``modules`` modules, each importing the previous one and
    calling it wrongly: basedpyright's first publish for an open file is
    empty, its semantic result comes later, in chunks under progress."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "gen"\nversion = "0"\n\n'
        '[tool.basedpyright]\ntypeCheckingMode = "standard"\n'
    )
    for i in range(modules):
        text = f"from pkg.m{i - 1} import C{i - 1}, f{i - 1}\n" if i else ""
        text += (
            "from dataclasses import dataclass\n\n\n"
            f"@dataclass\nclass C{i}:\n    a: int\n    b: str\n\n"
            "    def total(self) -> int:\n        return self.a + len(self.b)\n\n\n"
            f"def f{i}(x: int, y: str) -> C{i}:\n    return C{i}(x, y)\n\n\n"
        )
        if i:
            text += (
                f"def g{i}() -> int:\n    c = f{i - 1}('wrong', 3)\n"
                f"    return C{i - 1}(1, 'b').total() + c.a\n"
            )
        else:
            text += "def g0() -> int:\n    return 'not an int'\n"
        (pkg / f"m{i}.py").write_text(text)


@pytest.mark.parametrize("work_done_progress", [False, True], ids=["pyright-progress", "lsp"])
async def test_the_startup_baseline_is_basedpyright_s_finished_analysis(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, work_done_progress: bool
) -> None:
    # Defect: wait_initial returned at the first publish per file, which for
    # basedpyright is the empty pre-analysis one (0 errors here instead of
    # 79), and pygls logged "Ignoring notification for unknown method
    # 'pyright/beginProgress'" on the user's terminal.
    generated_project(tmp_path, 40)
    expected = basedpyright_cli(tmp_path)
    # m0 returns a str; m1..m39 call the previous f with two wrong arguments.
    assert len(expected) == 1 + 2 * 39
    spec = replace(BASEDPYRIGHT, work_done_progress=work_done_progress)
    caplog.set_level(logging.WARNING, logger="pygls")
    pool = AnalyzerPool(tmp_path, [spec])
    await pool.start()
    try:
        assert await pool.wait_initial(90)
        snapshot = await pool.snapshot()
        got = sorted(
            (d.path, d.line, d.character, d.code or "")
            for d in snapshot.diagnostics
            if d.severity == 1
        )
        assert got == expected
        assert snapshot.blind is None and snapshot.sources == ("basedpyright",)
        assert pool.idle()
    finally:
        await pool.stop()
    ignored = [r.getMessage() for r in caplog.records if "Ignoring notification" in r.getMessage()]
    assert ignored == []


def broken_project(root: Path) -> None:
    """A project whose only own error is in app.py; broken code sits in a
    virtual environment (two: ``venv`` and one under another name found by
    its pyvenv.cfg), build output and an ignored folder."""
    (root / "app.py").write_text("print(undefined_in_app)\n")
    (root / "ok.py").write_text("VALUE = 1\n")
    bad = "import nothing_here\nprint(undefined_name)\nx: int = 'text'\n"
    for folder in ("venv/lib/python3.11/site-packages/lib", "myenv/lib/site-packages/other"):
        (root / folder).mkdir(parents=True)
        (root / folder / "mod.py").write_text(bad)
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "tools" / "sandbox").mkdir(parents=True)
    (root / "tools" / "sandbox" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "tools" / "sandbox" / "x.py").write_text(bad)
    (root / "build" / "lib").mkdir(parents=True)
    (root / "build" / "lib" / "app.py").write_text(bad)
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text(bad)
    (root / ".gitignore").write_text("generated/\n")


async def test_virtual_environments_build_output_and_ignored_paths_are_not_analysed(
    tmp_path: Path,
) -> None:
    # Defect: venv/ (not .venv), a pyvenv.cfg folder under another name and
    # gitignored folders were opened and analysed: installed libraries became
    # blockers.
    broken_project(tmp_path)
    pool = AnalyzerPool(tmp_path, [RUFF, BASEDPYRIGHT])
    await pool.start()
    try:
        assert await pool.wait_initial(60)
        assert pool.files == ["app.py", "ok.py"]
        snapshot = await pool.snapshot()
        assert {d.path for d in snapshot.diagnostics} == {"app.py"}
        assert {d.source for d in snapshot.diagnostics} == {"Ruff", "basedpyright"}
    finally:
        await pool.stop()


async def test_a_touched_file_beyond_the_startup_set_is_opened_and_diagnosed(
    tmp_path: Path,
) -> None:
    # Defect: only the first 500 files were opened; an edited file beyond
    # them had no diagnostics from ruff at all. Here the start-up set is one
    # file; basedpyright covers the rest in workspace mode without opening.
    (tmp_path / "a.py").write_text("A = 1\n")
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "late.py").write_text("import os\nprint(undefined_late)\n")
    pool = AnalyzerPool(tmp_path, [RUFF, BASEDPYRIGHT], max_files=1)
    await pool.start()
    try:
        assert await pool.wait_initial(60)
        assert pool.files == ["a.py"]
        before = [d for d in (await pool.snapshot(["z/late.py"])).diagnostics if d.severity == 1]
        # Not opened: ruff has not looked; basedpyright's workspace analysis has.
        assert {d.source for d in before} == {"basedpyright"}
        assert [d.code for d in before] == ["reportUndefinedVariable"]
        await pool.ensure_open(["z/late.py", "missing.py"])
        assert await pool.wait_idle(30)
        after = (await pool.snapshot(["z/late.py"])).diagnostics
        assert sorted((d.source, d.code) for d in after if d.severity == 1) == [
            ("Ruff", "F821"),
            ("basedpyright", "reportUndefinedVariable"),
        ]
    finally:
        await pool.stop()


async def test_an_installed_package_resolves_after_environment_changed(tmp_path: Path) -> None:
    # Defect: after an install the analyzers were not told; the unresolved
    # import stayed through every repair.
    await anyio.run_process(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / ".venv")]
    )
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0"\n\n'
        '[tool.basedpyright]\nvenvPath = "."\nvenv = ".venv"\ntypeCheckingMode = "standard"\n'
    )
    (tmp_path / "app.py").write_text("import fancylib\n\nprint(fancylib.VALUE)\n")
    pool = AnalyzerPool(tmp_path, [RUFF, BASEDPYRIGHT])
    await pool.start()
    try:
        assert await pool.wait_initial(60)
        before = (await pool.snapshot()).diagnostics
        assert [d.message for d in before] == ['Import "fancylib" could not be resolved']
        assert all(a.watches_files for a in pool.analyzers)
        site = next((tmp_path / ".venv" / "lib").glob("python*/site-packages"))
        (site / "fancylib").mkdir()
        (site / "fancylib" / "__init__.py").write_text("VALUE = 1\n")
        await pool.environment_changed([site.relative_to(tmp_path).as_posix(), "pyproject.toml"])
        assert not pool.idle()
        assert await pool.wait_idle(30)
        assert (await pool.snapshot()).diagnostics == ()
    finally:
        await pool.stop()


async def test_an_analyzer_that_does_not_watch_files_is_restarted_on_environment_changed(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("print(undefined_name)\n")
    pool = AnalyzerPool(tmp_path, [RUFF])
    await pool.start()
    try:
        assert await pool.wait_initial(30)
        ruff = pool.analyzers[0]
        first = ruff.client
        ruff.watches_files = False  # as a server that registered no file watching
        await pool.environment_changed(["pyproject.toml"])
        assert ruff.client is not first and ruff.alive
        assert await pool.wait_idle(30)
        assert [d.code for d in (await pool.snapshot()).diagnostics] == ["F821"]
    finally:
        await pool.stop()


async def test_no_analyzer_running_makes_the_snapshot_blind(tmp_path: Path) -> None:
    # Defect: with no analyzer the snapshot was an empty, clean-looking one.
    (tmp_path / "app.py").write_text("print(undefined_name)\n")
    ghost = AnalyzerSpec("ghost", ("rein-no-such-analyzer",), frozenset({".py"}))
    async with HeadlessSession(
        tmp_path, ReplayModel([]), ReinConfig(), analyzers=[ghost], watch=False
    ) as host:
        snapshot = await host.pool.snapshot()  # waits for the analyzers' start
        assert (
            snapshot.blind == "no analyzer is running (ghost (rein-no-such-analyzer) was not found)"
        )
        assert snapshot.sources == ()
        assert host.analyzers_line() == (
            "analyzers: none (no analyzer is running (ghost (rein-no-such-analyzer) was not found); "
            "the analyzer gate is unverified); not analysed: .py (1 file)"
        )


async def test_the_analyzers_line_names_versions(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("VALUE = 1\n")
    async with HeadlessSession(tmp_path, ReplayModel([]), ReinConfig(), watch=False) as host:
        await host.analyzers_started()
        line = host.analyzers_line()
        versions = {a.spec.name: a.version for a in host.pool.analyzers}
        assert line == (
            f"analyzers: ruff {versions['ruff']} (python), "
            f"basedpyright {versions['basedpyright']} (python)"
        )
        snapshot = await host.pool.snapshot()
        assert snapshot.blind is None and snapshot.sources == ("ruff", "basedpyright")


def test_rein_run_names_its_analyzers_and_logs_no_ignored_notifications(tmp_path: Path) -> None:
    # Defects: `rein run` did not say which analyzers it found, and pygls
    # printed "Ignoring notification for unknown method 'pyright/...'" on
    # the user's terminal.
    generated_project(tmp_path, 10)
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - text: nothing to do\n")
    out = replay_run(tmp_path, "look", script, "--json")
    assert out.returncode == 0, out.stderr
    versions = []
    for name in ("ruff", "basedpyright"):
        exe = find_executable(name)
        assert exe is not None
        reply = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        versions.append(f"{name} {reply.stdout.split()[1]} (python)")
    assert out.stderr.splitlines()[0] == f"analyzers: {', '.join(versions)}"
    assert "Ignoring notification" not in out.stderr


async def test_a_missing_analyzer_is_named_beside_the_running_one(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("VALUE = 1\n")
    ghost = AnalyzerSpec("ghost", ("rein-no-such-analyzer",), frozenset({".py"}))
    pool = AnalyzerPool(tmp_path, [RUFF, ghost])
    await pool.start()
    try:
        ruff = pool.analyzers[0]
        assert (
            pool.describe()
            == f"ruff {ruff.version} (python); ghost (rein-no-such-analyzer) was not found"
        )
        snapshot = await pool.snapshot()
        assert snapshot.blind is None and snapshot.sources == ("ruff",)
    finally:
        await pool.stop()


class _Waits:
    """The restarts' waits: a backoff ends at once; the cool-down lasts
    until ``cool_down_over`` is set."""

    def __init__(self, cool_down_s: float) -> None:
        self.cool_down_s = cool_down_s
        self.cool_down_over = anyio.Event()

    async def sleep(self, seconds: float) -> None:
        if seconds >= self.cool_down_s:
            await self.cool_down_over.wait()
        else:
            await anyio.lowlevel.checkpoint()


async def test_an_analyzer_past_its_restart_budget_leaves_the_snapshot_blind_until_its_cool_down_ends(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("print(undefined_name)\n")
    reports: list[str] = []
    # One restart a minute, then the cool-down (300 s), which ends when the
    # test says: the snapshot is taken while it lasts, whatever the load.
    policy = RestartPolicy(max_restarts=1, cool_down_s=300)
    waits = _Waits(policy.cool_down_s)
    pool = AnalyzerPool(tmp_path, [RUFF], on_report=reports.append, restart_policy=policy)
    pool.restarts = AnalyzerRestarts(
        policy, report=pool.on_report, changed=pool.analyzer_active, sleep=waits.sleep
    )
    await pool.start()
    try:
        assert await pool.wait_initial(30)
        ruff = pool.analyzers[0]
        original = pool.analyzer_exited
        for _ in range(2):
            handled = anyio.Event()

            async def crashed(analyzer: Any, code: int | None, done: anyio.Event = handled) -> None:
                await original(analyzer, code)
                done.set()

            pool.analyzer_exited = crashed  # type: ignore[method-assign]
            os.kill(ruff.client._server.pid, signal.SIGKILL)  # type: ignore[union-attr]
            with anyio.fail_after(30):
                await handled.wait()
                if ruff.failure is None:  # the first crash: restarted after its backoff
                    await pool.restarts.settled()
                    assert ruff.alive
        snapshot = await pool.snapshot()
        assert snapshot.diagnostics == ()
        assert snapshot.blind == (
            "no analyzer is running (ruff exited (code -9), 2 times within 60 s; "
            "off for 300 s, then tried again)"
        )
        assert not ruff.alive
        assert pool.idle()
        # The cool-down ends: it runs again and looks.
        waits.cool_down_over.set()
        with anyio.fail_after(30):
            await pool.restarts.settled()
        assert ruff.alive and ruff.failure is None
        assert await pool.wait_initial(30)
        snapshot = await pool.snapshot()
        assert snapshot.blind is None and [d.code for d in snapshot.diagnostics] == ["F821"]
        assert reports == [
            "analyzer ruff exited (code -9); restarting it in 0.5 s (restart 1 of 1 within 60 s)",
            "analyzer ruff exited (code -9), 2 times within 60 s; it stays off for 300 s, "
            "then is tried again",
            "analyzer ruff runs again after its cool-down",
        ]
        assert pool.idle()
    finally:
        await pool.stop()
