"""A warm run handed to the kept pytest process by the gate itself
(:mod:`rein.testgate.direct`): the same report and environment as through
the client, in the gates' real sandbox; an abort and a timeout leave no
test running; a kept process gone between runs falls back to the client."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from rein.harness.ports import CommandResult
from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.settings import SandboxSettings
from rein.testgate.runner import RunnerSpec, TestRun, run_tests
from rein.testgate.shadow import build_shadow
from rein.testgate.warm import WarmClient, WarmPytest
from tests.testgate.projects import GOOD, process_ended, project

ENV = (
    "import json\nimport os\n\nfrom mod import first_n\n\n\n"
    "def test_env():\n"
    "    with open(os.environ['ENV_OUT'], 'w') as out:\n"
    "        json.dump(dict(os.environ), out)\n"
    "    assert first_n([1, 2], 1) == [1]\n\n\n"
    "def test_fails():\n    assert first_n([1, 2], 1) == [2]\n"
)
HANGS = (
    "import os\nimport time\n\n\n"
    "def test_hangs():\n"
    "    with open(os.environ['HANGING_PID'], 'w') as out:\n"
    "        out.write(str(os.getpid()))\n"
    "    time.sleep(97)\n\n\n"
    "def test_quick():\n    pass\n"
)


class Counting:
    """The real runner, counting the commands it is given."""

    def __init__(self, runner: SubprocessRunner) -> None:
        self.runner = runner
        self.commands: list[str] = []

    async def run(
        self, command: str, *, timeout_s: float = 600.0, writable: Sequence[str] = ()
    ) -> CommandResult:
        self.commands.append(command)
        return await self.runner.run(command, timeout_s=timeout_s, writable=writable)


def _outcomes(run: TestRun) -> list[tuple[str, str]]:
    return [(r.node_id, r.outcome) for r in run.results]


async def test_a_direct_run_is_the_clients_run_in_the_sandbox_without_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    monkeypatch.setenv("REIN_TEST_SECRET_API_KEY", "sk-not-for-children")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/agent.sock")  # the sandbox removes it
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_env.py": ENV})
    monkeypatch.setenv("ENV_OUT", str(root / "env.json"))
    sandbox = OtherCommandsSandbox(str(root), SandboxSettings, "gates")
    assert sandbox.sandbox() is not None
    shadow = build_shadow(root, {})

    async def scratch() -> list[str]:
        return [str(shadow.private)]

    warm = WarmPytest(sys.executable, KeptProcessLauncher(str(root), sandbox), scratch)
    warm.start()
    runner = Counting(SubprocessRunner(str(root), sandbox=sandbox))
    spec = RunnerSpec(python=sys.executable)
    runs: list[tuple[TestRun, dict[str, str], int]] = []
    try:
        assert await warm.wait_ready(60)
        client = warm.client()
        assert client is not None and client.watch is not None
        through_client = WarmClient(client.script, client.socket, client.token)
        for how in (client, through_client):
            before = len(runner.commands)
            run = await run_tests(runner, spec, shadow, ["tests/test_env.py"], 60, warm=how)
            env = json.loads((root / "env.json").read_text())
            runs.append((run, env, len(runner.commands) - before))
    finally:
        await warm.close()
        shadow.remove()

    (direct, direct_env, direct_commands), (client_run, client_env, client_commands) = runs
    assert (direct_commands, client_commands) == (0, 1)  # no sandbox start, no shell
    assert (direct.cold, client_run.cold) == (None, None)
    assert direct.unverified is None and direct.exit_code == client_run.exit_code == 1
    assert (
        _outcomes(direct)
        == _outcomes(client_run)
        == [
            ("tests/test_env.py::test_env", "passed"),
            ("tests/test_env.py::test_fails", "failed"),
        ]
    )
    assert "REIN_TEST_SECRET_API_KEY" not in direct_env
    assert "SSH_AUTH_SOCK" not in direct_env
    assert direct_env["REIN_SANDBOX"] == "1"
    # The shells' own counters aside, the same variables and values.
    shells = {"SHLVL", "_", "OLDPWD"}
    assert {k: v for k, v in direct_env.items() if k not in shells} == {
        k: v for k, v in client_env.items() if k not in shells
    }


async def test_an_abort_and_a_timeout_kill_the_direct_runs_tests_a_gone_process_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both end before ``run_tests`` returns: the kept process killed and
    reaped pytest's group first. A test's ``os._exit(0)`` is not a pass.
    Rein's environment changed, or the kept process killed between two
    runs: the run goes through the client (which then runs pytest itself)."""
    exits = "import os\n\n\ndef test_exits():\n    os._exit(0)\n"
    files = {"mod.py": GOOD, "tests/test_hang.py": HANGS, "tests/test_exit.py": exits}
    root = project(tmp_path / "proj", files)
    fifo = tmp_path / "hanging.pid"
    os.mkfifo(fifo)
    monkeypatch.setenv("HANGING_PID", str(fifo))
    shadow = build_shadow(root, {})
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    runner = Counting(SubprocessRunner(str(root)))
    spec = RunnerSpec(python=sys.executable)
    hang = ["tests/test_hang.py::test_hangs"]
    try:
        assert await warm.wait_ready(60)
        client = warm.client()
        assert client is not None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: run_tests(runner, spec, shadow, hang, 60, warm=client))
            with anyio.fail_after(60):
                pid = int(await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True))
            tasks.cancel_scope.cancel()  # an abort: run_tests is cancelled
        aborted_ended = process_ended(pid)
        exited = await run_tests(runner, spec, shadow, ["tests/test_exit.py"], 60, warm=client)
        timed: list[TestRun] = []
        async with anyio.create_task_group() as tasks:

            async def timing_out() -> None:
                timed.append(await run_tests(runner, spec, shadow, hang, 4, warm=warm.client()))

            tasks.start_soon(timing_out)
            with anyio.fail_after(60):
                pid = int(await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True))
        timed_ended = process_ended(pid)
        # Rein's environment changed since the kept process started: its
        # runs go through the client (which hands over its own).
        monkeypatch.setenv("REIN_TEST_CHANGED", "1")
        changed = warm.client()
        monkeypatch.delenv("REIN_TEST_CHANGED")
        assert changed is not None and changed.watch is None
        process = warm._process
        assert process is not None
        process.kill()
        await process.wait()
        quick = ["tests/test_hang.py::test_quick"]
        after = await run_tests(runner, spec, shadow, quick, 60, warm=client)
    finally:
        await warm.close()
        shadow.remove()

    assert aborted_ended  # when run_tests returned, not later
    assert exited.exit_code == 0
    assert (exited.unverified or "").startswith("pytest ended before its session finished")
    assert (timed[0].unverified or "").startswith("the tests did not finish within 4 s")
    assert timed_ended
    assert (after.cold or "").startswith("the warm process could not be reached")
    assert _outcomes(after) == [("tests/test_hang.py::test_quick", "passed")]
    assert len(runner.commands) == 1  # the abort and the timeout: none; this one, the client
