"""The warm pytest: the gate's runs forked from a kept process, in the
child environment, and a client that runs pytest itself when it must."""

from __future__ import annotations

import asyncio
import functools
import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.testgate.narrow import Narrowed, Narrower
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
    narrowing = Narrower.narrow
    threads: list[str] = []

    def narrow(self: Narrower, *args: Any) -> Narrowed | str:
        threads.append(threading.current_thread().name)
        return narrowing(self, *args)

    monkeypatch.setattr(Narrower, "narrow", narrow)  # off the loop: in the parse thread
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
    # test_first_two failed again the same way in the first run's process:
    # no fresh re-run.
    assert warm == {"first", "baseline"}
    assert "per test: " in outcome.detail
    assert threads and all(t.startswith("rein-parse") for t in threads)
    assert (repaired.blockers, repaired.unverified) == ([], None)
    # The test that ran first_n runs again (by coverage), and passes: the
    # repair is what the shadow holds; the one only naming it does not run.
    assert repaired.detail.startswith("1 of 1 tests passed"), repaired.detail
    assert "selected by coverage: 1 tests ran a changed function (mod.py:first_n)" in (
        repaired.detail
    )
    # A first run of one file and one named test: its baseline run started
    # beside it (waves.EARLY_FOLLOW_TESTS), and was stopped when it passed.
    assert gate.warm_runs == {"first", "baseline"}


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
            warm=WarmClient(str(client), str(tmp_path / "gone.sock"), found.token),
        )
    finally:
        shadow.remove()

    assert run.unverified is None
    assert (run.cold or "").startswith("the warm process could not be reached")
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
            "py",
            shadow,
            ["t.py"],
            shadow.private / "r",
            xdist=False,
            warm=WarmClient("c.py", "s", "t"),
        )
    finally:
        shadow.remove()
    argv = shlex.split(command.split(" exec ", 1)[1])
    assert argv[:7] == ["py", "-I", "-S", "c.py", "s", "t", "t.py"]
    assert os.sep not in argv[3]


class _Refusing:
    """A launcher that counts its launches and starts nothing."""

    def __init__(self) -> None:
        self.launches = 0

    def under(self) -> None:
        return None

    def same_environment(self) -> bool:
        return True

    async def watch(self) -> object:
        raise AssertionError("never ready: no run")

    async def launch(self, argv: object, cwd: str, *, writable: object = ()) -> object:
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


BACKGROUND = (
    "import multiprocessing\nimport os\nimport subprocess\nimport time\n\n\n"
    "def test_a_spawned_pool_works():\n"
    "    with multiprocessing.get_context('spawn').Pool(1) as pool:\n"
    "        assert pool.map(abs, [-1, 2]) == [1, 2]\n\n\n"
    "def test_leaves_a_process_behind():\n"
    "    sleeper = subprocess.Popen(['sleep', '97'])\n"
    "    with open(os.environ['LEFT_PID'], 'w') as out:\n"
    "        out.write(str(sleeper.pid))\n\n\n"
    "def test_hangs():\n"
    "    with open(os.environ['HANGING_PID'], 'w') as out:\n"
    "        out.write(str(os.getpid()))\n"
    "    time.sleep(97)\n"
)


async def _ended(pid: int) -> bool:
    """Whether process ``pid`` ends (or has) within 10 s."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        with anyio.move_on_after(10):
            await anyio.wait_readable(fd)
            return True
        return False
    finally:
        os.close(fd)


async def test_a_warm_run_leaves_nothing_behind_spawns_and_refuses_strangers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One kept process: a spawned Pool works warm (its workers start
    from pytest's ``__main__``, not the kept process's script); a process a
    test starts in the background, and a run aborted midway, leave no
    process; a client without the kept process's token is refused (its run
    goes cold, and says so)."""
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_bg.py": BACKGROUND})
    monkeypatch.setenv("LEFT_PID", str(tmp_path / "left.pid"))
    fifo = tmp_path / "hanging.pid"
    os.mkfifo(fifo)
    monkeypatch.setenv("HANGING_PID", str(fifo))
    shadow = build_shadow(root, {})
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    runner, spec = SubprocessRunner(str(root)), RunnerSpec(python=sys.executable)
    try:
        assert await warm.wait_ready(60)
        client = warm.client()
        assert client is not None
        ran = await run_tests(
            runner,
            spec,
            shadow,
            ["tests/test_bg.py"],
            60,
            warm=client,
            only=[
                "tests/test_bg.py::test_a_spawned_pool_works",
                "tests/test_bg.py::test_leaves_a_process_behind",
            ],
        )
        stranger = await run_tests(
            runner,
            spec,
            shadow,
            ["tests/test_bg.py::test_a_spawned_pool_works"],
            60,
            warm=WarmClient(client.script, client.socket, "not-the-token"),
        )
        async with anyio.create_task_group() as tasks:
            hang = ["tests/test_bg.py::test_hangs"]
            tasks.start_soon(
                functools.partial(run_tests, warm=client), runner, spec, shadow, hang, 60
            )
            with anyio.fail_after(60):
                hanging = int(
                    await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True)
                )
            tasks.cancel_scope.cancel()  # an abort
    finally:
        await warm.close()
        shadow.remove()

    assert (ran.unverified, ran.cold) == (None, None)
    assert [r.outcome for r in ran.results] == ["passed", "passed"]
    assert await _ended(int((tmp_path / "left.pid").read_text()))
    why = "the warm process refused this client: not the gate's own client (its token)"
    assert stranger.cold == why
    assert [r.outcome for r in stranger.results] == ["passed"]
    assert await _ended(hanging)


FROZEN = (
    "import gc\nimport os\nimport sys\n\n\n"
    "def test_frozen(tmp_path):\n"
    "    with open(os.environ['FROZEN_OUT'], 'w') as out:\n"
    "        out.write(f'{gc.get_freeze_count()} {sys.argv[1:]!r} {tmp_path}')\n"
)


async def test_a_warm_child_is_forked_from_frozen_objects_a_malformed_request_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept process's objects are frozen before it forks: a child's
    garbage collections (pytest's at its end) do not walk them. The
    request (arguments, environment) reaches the child whole; one that is
    not the client's is refused."""
    import socket

    root = project(tmp_path / "proj", {"tests/test_gc.py": FROZEN})
    out = tmp_path / "frozen.txt"
    monkeypatch.setenv("FROZEN_OUT", str(out))
    shadow = build_shadow(root, {})
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    try:
        assert await warm.wait_ready(60)
        client = warm.client()
        assert client is not None
        run = await run_tests(
            SubprocessRunner(str(root)),
            RunnerSpec(python=sys.executable),
            shadow,
            ["tests/test_gc.py::test_frozen"],
            60,
            warm=client,
        )
        answers = []
        # Not a kind of request; more arguments named than there are fields (the
        # right token); a request that ends before its size.
        requests = (
            b"not\0a request",
            f"env\0{client.token}\0{root}\0{5}\0-q".encode(),
            b"",
        )
        for body in requests:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(10)
                conn.connect(client.socket)
                size = len(body) if body else 100
                conn.sendall(size.to_bytes(4, "big") + body + (b"" if body else b"short"))
                conn.shutdown(socket.SHUT_WR)
                answer = b""
                while more := conn.recv(1024):
                    answer += more
                answers.append(answer)
    finally:
        await warm.close()
        shadow.remove()

    assert (run.unverified, run.cold) == (None, None)
    frozen, rest = out.read_text().split(" ", 1)
    assert int(frozen) > 1000  # pytest's modules and what they made
    assert rest.startswith("['tests/test_gc.py::test_frozen', '-q', '-p', 'no:cacheprovider'")
    # tmp_path is made in the shadow's own folder, not the system's shared one.
    assert rest.split("] ", 1)[1].startswith(str(shadow.private / "proj.tmp" / "pytest-of-"))
    assert answers == [
        b"R" + b"a malformed request (an unknown kind of request 'not')",
        b"R" + b"a malformed request (it names 5 arguments of 1 fields)",
        b"R" + b"the request ended early",
    ]
