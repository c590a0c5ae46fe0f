"""The kept pytest process's sandbox outlives each run: what a run leaves
behind must not, nor may the sandbox protect less than a command's started
now (review18b, findings 1-3)."""

from __future__ import annotations

import fcntl
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from rein.harness.process_ports import CommandResult
from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.settings import SandboxSettings
from rein.testgate import direct
from rein.testgate.runner import RunnerSpec, TestRun, run_tests
from rein.testgate.shadow import build_shadow
from rein.testgate.warm import HUNG, STALE, WarmPytest
from tests.testgate.projects import GOOD, project

#: A test whose child leaves pytest's session (setsid), holds a lock on
#: ``left.lock`` (released only when it dies), says so, and would plant a
#: repository later.
LEAVES = (
    "import os\nimport subprocess\nimport sys\n\n"
    "CODE = '''\n"
    "import fcntl, os, sys, time\n"
    "lock = open({lock!r}, 'w')\n"
    "fcntl.flock(lock, fcntl.LOCK_EX)\n"
    "os.write(int(sys.argv[1]), b'L')\n"
    "time.sleep(60)\n"
    "os.makedirs({evil!r})\n"
    "'''\n\n\n"
    "def test_leaves():\n"
    "    read, write = os.pipe()\n"
    "    subprocess.Popen([sys.executable, '-c', CODE, str(write)], pass_fds=[write],\n"
    "                     start_new_session=True)\n"
    "    os.close(write)\n"
    "    assert os.read(read, 1) == b'L'\n"
)
PLANTS = "import os\n\n\ndef test_plants():\n    os.makedirs({planted!r})\n"
WRITES = (
    "def test_writes():\n"
    "    with open({config!r}, 'a') as config:\n"
    "        config.write('[core]\\n\\tfsmonitor = true\\n')\n"
)


def _outcomes(run: TestRun) -> list[tuple[str, str]]:
    return [(r.node_id, r.outcome) for r in run.results]


def _held(path: Path) -> bool:
    """Whether a live process holds the lock on ``path``."""
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


async def test_what_a_direct_run_leaves_or_plants_does_not_outlast_it_and_a_later_repository_is_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test's setsid'd child is dead when ``run_tests`` returns (it
    planted nothing); a repository a test makes is moved aside; one the
    person makes after the kept process started is read-only to the next
    run, which runs cold, and the kept process is replaced; the same
    through the warm client (Rein's environment changed)."""
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    root = tmp_path / "proj"
    files = {
        "mod.py": GOOD,
        "tests/test_leaves.py": LEAVES.format(
            lock=str(root / "left.lock"), evil=str(root / "evil" / ".git")
        ),
        "tests/test_plants.py": PLANTS.format(planted=str(root / "planted" / ".git")),
        "tests/test_writes.py": WRITES.format(config=str(root / "sub" / ".git" / "config")),
        "tests/test_client.py": WRITES.format(config=str(root / "sub2" / ".git" / "config")),
    }
    project(root, files)
    sandbox = OtherCommandsSandbox(str(root), SandboxSettings, "gates")
    shadow = build_shadow(root, {})

    async def scratch() -> list[str]:
        return [str(shadow.private)]

    warm = WarmPytest(sys.executable, KeptProcessLauncher(str(root), sandbox), scratch)
    warm.start()
    runner = SubprocessRunner(str(root), sandbox=sandbox)
    spec = RunnerSpec(python=sys.executable)
    try:
        assert await warm.wait_ready(60)
        first = warm._process
        left = await run_tests(
            runner, spec, shadow, ["tests/test_leaves.py"], 60, warm=warm.client()
        )
        left_held = _held(root / "left.lock")
        planted = await run_tests(
            runner, spec, shadow, ["tests/test_plants.py"], 60, warm=warm.client()
        )
        # The person makes a repository now, outside any sandbox.
        await anyio.run_process(["git", "init", "-q", str(root / "sub")])
        wrote = await run_tests(
            runner, spec, shadow, ["tests/test_writes.py"], 60, warm=warm.client()
        )
        assert await warm.wait_ready(60)
        second = warm._process
        again = await run_tests(
            runner, spec, shadow, ["tests/test_writes.py"], 60, warm=warm.client()
        )
        await anyio.run_process(["git", "init", "-q", str(root / "sub2")])
        monkeypatch.setenv("REIN_TEST_CHANGED", "1")  # runs go through the client
        client = warm.client()
        through = await run_tests(runner, spec, shadow, ["tests/test_client.py"], 60, warm=client)
    finally:
        await warm.close()
        shadow.remove()

    assert (left.cold, _outcomes(left)) == (None, [("tests/test_leaves.py::test_leaves", "passed")])
    assert not left_held  # its process was killed before run_tests returned
    assert not (root / "evil").exists()
    assert (planted.cold, _outcomes(planted)) == (
        None,
        [("tests/test_plants.py::test_plants", "passed")],
    )
    assert not (root / "planted" / ".git").exists()
    assert (root / "planted" / ".git.rein-quarantine").is_dir()
    # The kept process's sandbox predates sub/.git: that run went cold.
    assert wrote.cold == STALE
    assert _outcomes(wrote) == [("tests/test_writes.py::test_writes", "failed")]
    assert second is not None and second is not first
    assert again.cold is None  # the new kept process protects it
    assert _outcomes(again) == [("tests/test_writes.py::test_writes", "failed")]
    assert "fsmonitor" not in (root / "sub" / ".git" / "config").read_text()
    assert client is not None and client.watch is None
    assert through.cold == STALE
    assert _outcomes(through) == [("tests/test_client.py::test_writes", "failed")]
    assert "fsmonitor" not in (root / "sub2" / ".git" / "config").read_text()


class _ColdTakesItsTime(SubprocessRunner):
    """A runner whose cold runs are given 60 s whatever the run's limit."""

    async def run(
        self, command: str, *, timeout_s: float = 600.0, writable: Sequence[str] = ()
    ) -> CommandResult:
        return await super().run(command, timeout_s=max(timeout_s, 60.0), writable=writable)


async def test_a_hung_kept_process_is_replaced_and_its_run_goes_cold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "KILL_WAIT_S", 0.5)
    root = project(
        tmp_path / "proj", {"mod.py": GOOD, "tests/test_ok.py": "def test_ok():\n    pass\n"}
    )
    shadow = build_shadow(root, {})
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    # The run's 1 s limit is how long the hung kept process is given; the
    # cold run after it gets its own limit, so a loaded machine's slow cold
    # start cannot end it with no outcome (CI at a load of 9 did).
    runner = _ColdTakesItsTime(str(root))
    spec = RunnerSpec(python=sys.executable)
    try:
        assert await warm.wait_ready(60)
        hung = warm._process
        assert hung is not None
        client = warm.client()
        assert client is not None
        os.kill(hung.pid, signal.SIGSTOP)
        run = await run_tests(runner, spec, shadow, ["tests/test_ok.py"], 1, warm=client)
        offered = warm.client()
        assert await warm.wait_ready(60)
        replaced = warm._process
        after = await run_tests(runner, spec, shadow, ["tests/test_ok.py"], 60, warm=warm.client())
    finally:
        await warm.close()
        shadow.remove()

    assert run.cold == HUNG
    assert _outcomes(run) == [("tests/test_ok.py::test_ok", "passed")]  # run cold
    assert hung.returncode is not None  # stopped
    assert offered is None or offered.socket != client.socket  # never the hung one again
    assert replaced is not None and replaced is not hung
    assert (after.cold, _outcomes(after)) == (None, [("tests/test_ok.py::test_ok", "passed")])
