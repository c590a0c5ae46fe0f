"""Headless parts with real processes and a real file system."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import anyio
import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.disk.watcher import DiskWatcher
from rein.process.groups import group_alive
from rein.process.runner import SubprocessRunner
from tests.forkserver import REIN
from tests.rein_cli import rein, replay_run

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


async def test_the_watcher_reports_external_changes_but_not_our_own(tmp_path: Path) -> None:
    disk = DiskWorkspace(tmp_path)
    seen: list[tuple[str, ...]] = []
    got = anyio.Event()

    def on_external(paths: tuple[str, ...]) -> None:
        seen.append(paths)
        got.set()

    watcher = DiskWatcher(tmp_path, on_external, debounce_ms=20)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watcher.run)
        await watcher.ready.wait()
        # The OS watch becomes active shortly after start: touch a probe file
        # until the watcher reports it, then start from a clean slate.
        with anyio.fail_after(10):
            n = 0
            while not got.is_set():
                n += 1
                (tmp_path / "probe.txt").write_text(str(n))
                with anyio.move_on_after(0.1):
                    await got.wait()
        seen.clear()
        got = anyio.Event()
        mutation = await disk.write_text("ours.py", "x = 1\n")
        watcher.on_own_mutation(mutation)
        (tmp_path / "theirs.py").write_text("y = 2\n")
        with anyio.fail_after(10):
            await got.wait()
        watcher.stop()
        tg.cancel_scope.cancel()
    flat = {p for batch in seen for p in batch}
    assert "theirs.py" in flat
    assert "ours.py" not in flat


async def test_the_runner_reports_exit_code_and_output(tmp_path: Path) -> None:
    runner = SubprocessRunner(str(tmp_path))
    ok = await runner.run("echo hello; pwd")
    assert ok.exit_code == 0 and "hello" in ok.output and str(tmp_path) in ok.output
    bad = await runner.run("echo oops >&2; exit 3")
    assert bad.exit_code == 3 and "oops" in bad.output


async def test_the_runner_kills_the_whole_group_on_timeout(tmp_path: Path) -> None:
    runner = SubprocessRunner(str(tmp_path))
    pidfile = tmp_path / "child.pid"
    result = await runner.run(f"sleep 60 & echo $! > {pidfile}; wait", timeout_s=0.5)
    assert result.timed_out and "timed out" in result.output
    child = int(pidfile.read_text())
    # run() returns only after the whole group is gone.
    assert not _alive(child)
    assert not group_alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return False


def test_rein_demo_runs_offline_and_completes() -> None:
    out = subprocess.run(
        [*REIN, "demo"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    # The header names the analyzers that run (they start in the background).
    header = out.stdout.split("\n\n", 1)[0]
    assert re.search(r"^analyzers: ruff [0-9.]+ .*basedpyright [0-9.]+", header, re.M), header
    # It named a workspace it then removed, without saying so.
    where = re.search(r"^workspace: (\S+) \(a copy of examples/project, removed at the end; "
                      r"--keep keeps it\)$", header, re.M)  # fmt: skip
    assert where is not None, header
    assert not Path(where[1]).exists()
    assert "✗ analyzer" in out.stdout and "itmes" in out.stdout
    assert "↻ repair attempt 1 of 3" in out.stdout
    assert "status: completed" in out.stdout
    assert "for i in items" in out.stdout


def test_rein_run_exit_codes_and_json(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - text: nothing to do\n")
    out = replay_run(tmp_path, "look", script, "--json")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    assert '"type":"run_end"' in lines[-3].replace(" ", "")
    assert '"status": "completed"' in lines[-1]
    bad = rein("run", "x", "-w", str(tmp_path / "missing"), timeout=60)
    assert bad.returncode == 2 and "is not a folder" in bad.stderr
    bad_cfg = tmp_path / "c.json"
    bad_cfg.write_text('{"harness": {"maxModelTurnsPerRun": "many"}}')
    bad = rein("run", "x", "-w", str(tmp_path), "--config", str(bad_cfg), timeout=60)
    assert bad.returncode == 2 and "rein.harness.maxModelTurnsPerRun" in bad.stderr


def test_rein_run_plan_mode(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    script = tmp_path / "s.yaml"
    script.write_text(
        "turns:\n"
        "  - tool_calls: [{name: submit_plan, arguments: {steps: [{id: s1, description: read app.py}]}}]\n"
        "  - tool_calls: [{name: read_file, arguments: {path: app.py}}]\n"
        "  - tool_calls: [{name: complete_step, arguments: {step_id: s1, success: true, summary: app.py sets x}}]\n"
    )
    out = replay_run(tmp_path, "what is in app.py", script, "--mode", "plan")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "plan: planning -> executing" in out.stdout
    assert "plan (step_done): ✓ s1" in out.stdout
    assert "plan: executing -> completed" in out.stdout
