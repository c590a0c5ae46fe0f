"""``rein bench sandbox``: what the OS sandbox costs and what it saves.

* **start**: ``true`` started ``samples`` times as ``run_command`` starts a
  command (``bash -c``), without and with the sandbox (bubblewrap with the
  workspace's policy), in one run: the median and 95th percentile in
  milliseconds and the difference (issue 38's goal: at most 50 ms).
* **asks**: a scripted session of 30 typical commands (:data:`SESSION`:
  tests, linters, builds, git, package listings, a download the allowlist
  permits and one it does not) through the real ``run_command`` in a
  small Python project, once with ``approval.command: "sandboxed"``
  (``sandbox.network``: ``pypi``) and once with ``"ask"``, the person approving everything: how often the
  person is asked. The script does what a model told by the sandbox's note
  does: a command whose refused host the person allowed for the session
  runs again inside; one that fails with the note otherwise runs again
  with ``unsandboxed: true`` and a reason.
* **walks**: Rein's own bookkeeping around each sandboxed command in a
  workspace of 0, 3,000 and 30,000 folders (made two seconds before) (the policy, and the walks
  that find the git repositories below the root before the command and
  the ones it made after it, :mod:`rein.sandboxing.nested_git`): the
  milliseconds of a command's start and end (not run; the first look
  and the median and 95th percentile of the later ones), beside the start
  measured above, and the event loop's longest stall meanwhile, with the
  looks in a worker thread (as the server does) and on the loop (as
  before), against the stall of an idle loop in the same run.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.ports import ApprovalRequest
from rein.harness.run.run_record import RunRecord, recording
from rein.harness.run.steering import SteeringSignal
from rein.harness.tools import ToolContext, ToolEnvironment
from rein.sandboxing import BwrapSandbox, SandboxSettings
from rein.sandboxing.nested_git import RECENT_NS
from rein.tools.command import RunCommandArgs, RunCommandTool
from rein.tools.settings import ApprovalSettings, ToolSettings

__all__ = ["SAMPLES", "SESSION", "bench_asks", "bench_start"]

SAMPLES = 50

_GIT = "git -c user.name=bench -c user.email=bench@example.com"

#: The scripted session: 30 commands a model typically runs.
SESSION: tuple[str, ...] = (
    "python -m pytest -q -p no:cacheprovider",
    "python -m pytest -q -p no:cacheprovider tests/test_app.py -k add",
    "ruff check .",
    "ruff format --check .",
    "python -m compileall -q src",
    "make build",
    "make clean",
    "git status --short",
    "git diff",
    "git diff --stat",
    "git log --oneline -3",
    "git add -A",
    f"{_GIT} commit -qm 'bench: a change'",
    "git show --stat HEAD",
    "python -m pip list",
    "python -m pip show pytest",
    "ls -la",
    "find . -name '*.py' -not -path './.git/*'",
    "grep -rn 'def ' src",
    "cat pyproject.toml",
    "wc -l src/app.py",
    "head -5 src/app.py",
    "echo 'note' > notes.txt && sed -i 's/note/Note/' notes.txt",
    "mkdir -p build/out && cp src/*.py build/out/",
    'tar czf "$TMPDIR/src.tgz" src && tar tzf "$TMPDIR/src.tgz"',
    "python -c 'import sys; print(sys.version)'",
    "python -c 'import json; print(json.dumps({\"ok\": 1}))'",
    "sort pyproject.toml | uniq | head -3",
    # A download the allowlist (pypi) permits, and one it does not.
    'python -m pip download --no-deps -d "$TMPDIR/dl" -q six',
    "curl -sSf -m 5 https://example.com -o /dev/null",
)

_PROJECT = {
    "pyproject.toml": (
        '[project]\nname = "benchapp"\nversion = "0.1"\n\n'
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
    ),
    "src/app.py": "def add(a, b):\n    return a + b\n",
    "tests/test_app.py": ("from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"),
    "Makefile": "build:\n\tmkdir -p build && cp src/app.py build/\nclean:\n\trm -rf build\n",
}


def _percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return round(statistics.median(ordered) * 1000, 2), round(p95 * 1000, 2)


def bench_start(samples: int = SAMPLES) -> list[dict[str, Any]]:
    """``true`` without and with the sandbox: one row each."""
    with tempfile.TemporaryDirectory() as ws:
        sandbox = BwrapSandbox(ws)
        why_not = sandbox.unavailable()
        plain = ["bash", "-c", "true"]
        runs: dict[str, list[str]] = {"off": plain}
        if why_not is None:
            runs["on"] = sandbox.wrap(plain, cwd=ws)
        rows: list[dict[str, Any]] = []
        for name, argv in runs.items():
            subprocess.run(argv, cwd=ws, check=True)  # warm-up
            times = []
            for _ in range(samples):
                started = time.perf_counter()
                subprocess.run(argv, cwd=ws, check=True, stdin=subprocess.DEVNULL)
                times.append(time.perf_counter() - started)
            p50, p95 = _percentiles(times)
            rows.append({"sandbox": name, "samples": samples, "p50_ms": p50, "p95_ms": p95})
        if why_not is not None:
            rows.append({"sandbox": f"on: unavailable ({why_not})", "samples": 0})
        elif len(rows) == 2:
            rows[1]["added_p50_ms"] = round(rows[1]["p50_ms"] - rows[0]["p50_ms"], 2)
            rows[1]["added_p95_ms"] = round(rows[1]["p95_ms"] - rows[0]["p95_ms"], 2)
            rows[0]["added_p50_ms"] = rows[0]["added_p95_ms"] = 0.0
        return rows


class _CountingApprover:
    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def confirm(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return True


def _project(ws: str) -> None:
    """The small Python project (a git repository) the session works in."""
    root = Path(ws)
    for rel, text in _PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", ws], check=True)
    subprocess.run([*_GIT.split(), "-C", ws, "add", "-A"], check=True)
    subprocess.run([*_GIT.split(), "-C", ws, "commit", "-qm", "start"], check=True)


async def _session(policy: str, commands: tuple[str, ...]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as ws:
        await anyio.to_thread.run_sync(_project, ws)
        approver = _CountingApprover()
        settings = ToolSettings(approval=ApprovalSettings.model_validate({"command": policy}))
        env = ToolEnvironment(
            workspace=DiskWorkspace(ws),
            approver=approver,
            settings=settings,
            sandbox=BwrapSandbox(ws, SandboxSettings(network=["pypi"])),
        )
        tool = RunCommandTool()
        record = RunRecord()
        left = 0
        failed: list[str] = []
        for i, command in enumerate(commands):
            ctx = ToolContext(
                f"call_{i}",
                tool.name,
                env,
                lambda text, kind: None,
                lambda: False,
                record,
                steering_arrived=SteeringSignal(),
            )
            with recording(record):
                result = await tool.execute(RunCommandArgs(command=command), ctx)
                if result.details.get("sandbox_allowed_hosts"):
                    # The person allowed the refused host for the session: again, inside.
                    result = await tool.execute(RunCommandArgs(command=command), ctx)
                elif result.details.get("sandbox_note"):
                    left += 1
                    again = RunCommandArgs(
                        command=command, unsandboxed=True, reason="the sandbox blocked it"
                    )
                    result = await tool.execute(again, ctx)
            if result.is_error:
                failed.append(command)
        return {
            "approval.command": policy,
            "commands": len(commands),
            "asked": len(approver.requests),
            "left_sandbox": left,
            "failed": len(failed),
            "which_failed": "; ".join(failed),
        }


#: Folders in the workspaces the bookkeeping is measured in.
WALK_SIZES = (0, 3_000, 30_000)


def _folders(root: Path, count: int, settle_s: float) -> None:
    """``count`` folders under ``root``, 30 to a folder, a file in each."""
    made = 0
    pending = [root]
    while made < count:
        parent = pending.pop(0)
        for i in range(min(30, count - made)):
            child = parent / f"d{i}"
            child.mkdir()
            (child / "m.py").write_text("x = 1\n")
            pending.append(child)
            made += 1
    # A workspace not made this instant: a folder changed in the last two
    # seconds is read again at every look (rein.sandboxing.nested_git), and
    # a change time cannot be set back, so the bench waits them out.
    time.sleep(settle_s)


#: How often the ticker that watches the event loop wakes (seconds).
TICK_S = 0.001


class _Ticker:
    """A task that wakes every :data:`TICK_S`: the longest it waited past
    that is how long the event loop answered nothing."""

    def __init__(self) -> None:
        self.stall = 0.0
        self.done = anyio.Event()

    async def run(self) -> None:
        last = time.perf_counter()
        while not self.done.is_set():
            await anyio.sleep(TICK_S)
            now = time.perf_counter()
            self.stall = max(self.stall, now - last - TICK_S)
            last = now


async def _timed(sandbox: BwrapSandbox | None, ws: str, where: str) -> tuple[float, float]:
    """One command's bookkeeping (its start and end, not run) and the event
    loop's longest stall meanwhile: ``where`` "thread" as the server does it
    (:meth:`BwrapSandbox.start`, :meth:`BwrapSandbox.ended`), "loop" the
    blocking calls on the loop (as before review 16); no ``sandbox``: the
    loop awaiting a worker thread that sleeps 50 ms (the floor)."""
    ticker = _Ticker()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ticker.run)
        await anyio.sleep(2 * TICK_S)
        started = time.perf_counter()
        if sandbox is None:
            await anyio.to_thread.run_sync(time.sleep, 0.05)
        elif where == "thread":
            await sandbox.start(["bash", "-c", "true"], cwd=ws)
            await sandbox.ended()
        elif where == "loop":
            sandbox.wrap(["bash", "-c", "true"], cwd=ws)
            sandbox.after_run()
        took = time.perf_counter() - started
        ticker.done.set()
    return took, ticker.stall


def bench_walks(
    sizes: tuple[int, ...] = WALK_SIZES, samples: int = 9, settle_s: float = RECENT_NS / 1e9
) -> list[dict[str, Any]]:
    """One sandboxed command's bookkeeping (its start and end, not run) in
    workspaces of ``sizes`` folders, as the server does it (the looks in a
    worker thread) and on the event loop: a row each, with the first
    look's time, the median and 95th percentile of the later ones, and the
    event loop's longest stall (the floor: the loop awaiting an idle
    thread, measured in the same run)."""

    async def rows() -> list[dict[str, Any]]:
        floor = max([(await _timed(None, "/", "idle"))[1] for _ in range(samples)])
        found: list[dict[str, Any]] = []
        for size in sizes:
            for where in ("thread", "loop"):
                with tempfile.TemporaryDirectory() as ws:
                    _folders(Path(ws), size, settle_s)
                    sandbox = BwrapSandbox(ws)
                    if sandbox.unavailable() is not None:
                        return [{"folders": size, "unavailable": sandbox.unavailable()}]
                    timed = [await _timed(sandbox, ws, where) for _ in range(samples + 1)]
                p50, p95 = _percentiles([t for t, _ in timed[1:]])
                found.append(
                    {
                        "folders": size,
                        "looks": "worker thread" if where == "thread" else "event loop",
                        "samples": samples,
                        "first_ms": round(timed[0][0] * 1000, 1),
                        "p50_ms": p50,
                        "p95_ms": p95,
                        "loop_stall_max_ms": round(max(s for _, s in timed) * 1000, 1),
                        "floor_stall_ms": round(floor * 1000, 1),
                    }
                )
        return found

    return anyio.run(rows)


def bench_asks(commands: tuple[str, ...] = SESSION) -> list[dict[str, Any]]:
    """The session with the sandbox, then asking for every command."""

    async def both() -> list[dict[str, Any]]:
        return [await _session("sandboxed", commands), await _session("ask", commands)]

    return anyio.run(both)
