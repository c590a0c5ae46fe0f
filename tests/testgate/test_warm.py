"""The warm pytest: the gate's runs forked from a kept process, in the
child environment, and a client that runs pytest itself when it must."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

import anyio
import pytest

from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec, run_tests
from rein.testgate.shadow import build_shadow
from rein.testgate.warm import WarmClient, WarmPytest
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import BAD, GOOD, changed, gate_for, project, verdict

CHECKS = (
    "import os\nimport sys\n\nfrom mod import first_n\n\n\n"
    "def test_first_two():\n    assert first_n([1, 2, 3], 2) == [1, 2]\n\n\n"
    "def test_no_secret_and_the_shadows_modules():\n"
    "    assert 'REIN_TEST_SECRET_API_KEY' not in os.environ\n"
    "    assert first_n.__module__ == 'mod'\n"
    "    assert sys.modules['mod'].__file__.startswith(os.getcwd())\n"
)


async def test_a_warm_gate_judges_as_a_cold_one_in_the_child_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_TEST_SECRET_API_KEY", "sk-not-for-children")
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": CHECKS})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        await changed(gate, workspace, "mod.py", BAD)
        assert await gate.warm_ready(60)  # started by the change; the machine may be slow
        outcome = await verdict(gate, workspace, "mod.py")
        warm = set(gate.warm_runs)
        workspace.buffers["mod.py"] = (BAD.replace("n + 1", "n + 0"), 3)
        repaired = await verdict(gate, workspace, "mod.py")
    finally:
        await gate.close()

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_mod.py::test_first_two"
    ]
    assert warm == {"first", "rerun", "baseline"}
    assert "per test: " in outcome.detail
    assert (repaired.blockers, repaired.unverified) == ([], None)
    assert repaired.detail.startswith("2 of 2 tests passed")
    assert gate.warm_runs == {"first"}


async def test_a_client_without_its_warm_process_runs_pytest_itself(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": CHECKS})
    shadow = build_shadow(root, {})
    client = tmp_path / "client.py"
    # The client of a warm process that is gone: no socket to reach.
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    assert await warm.wait_ready(60)
    found = warm.client()
    assert found is not None
    script = Path(found.script)
    client.write_bytes(await anyio.Path(script).read_bytes())
    await warm.close()
    try:
        run = await run_tests(
            SubprocessRunner(str(root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_mod.py"],
            60,
            warm=WarmClient(str(client), str(tmp_path / "gone.sock")),
        )
    finally:
        shadow.remove()

    assert run.unverified is None
    assert [(r.node_id, r.outcome) for r in run.results] == [
        ("tests/test_mod.py::test_first_two", "passed"),
        ("tests/test_mod.py::test_no_secret_and_the_shadows_modules", "passed"),
    ]
    assert not await anyio.Path(script).exists()  # closed: its folder is gone


def test_the_warm_command_runs_the_client_in_place_of_dash_m_pytest(tmp_path: Path) -> None:
    from rein.testgate.pytest_run import pytest_command

    shadow = build_shadow(project(tmp_path / "proj", {"mod.py": GOOD}), {})
    try:
        command = pytest_command(
            "py", shadow, ["t.py"], shadow.private / "r", xdist=False, warm=WarmClient("c.py", "s")
        )
    finally:
        shadow.remove()
    argv = shlex.split(command.split(" exec ", 1)[1])
    assert argv[:6] == ["py", "-I", "-S", "c.py", "s", "t.py"]
    assert os.sep not in argv[3]


class _Refusing:
    """A launcher that counts its launches and starts nothing."""

    def __init__(self) -> None:
        self.launches = 0

    async def launch(self, argv: object, cwd: str) -> object:
        self.launches += 1
        raise OSError("no processes in this test")


async def test_a_command_about_to_run_does_not_warm_pytest_up_a_change_does(
    tmp_path: Path,
) -> None:
    """``before_command`` calls the change hooks with no paths (``ls``,
    ``git status``): no kept pytest for that; a file's change starts it.
    (A started kept process is launched as soon as its task first runs:
    one turn of the loop.)"""
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": CHECKS})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    launcher = _Refusing()
    gate = gate_for(root, launcher=launcher)
    try:
        await gate.before_change([], workspace)
        await asyncio.sleep(0)
        assert launcher.launches == 0
        await gate.before_change(["mod.py"], workspace)
        await asyncio.sleep(0)
        assert launcher.launches == 1
    finally:
        await gate.close()
