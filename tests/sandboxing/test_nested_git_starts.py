"""The looks for the git repositories below the workspace run off the
event loop (review: 2 s for a first look in a workspace of 30,000 folders,
during which the server answered nothing), and a command's end looks in
the sandbox its start looked in (review: the end asked for the sandbox
anew, which a settings change while the command ran had replaced). Real
bubblewrap, real git."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.tools import ToolEnvironment
from rein.process.runner import SubprocessRunner
from rein.sandboxing import BwrapSandbox, SandboxSettings
from rein.sandboxing.nested_git import FolderTree, NestedRepositories
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status
from rein.tools import ApprovalSettings, RunCommandTool, ToolSettings
from tests.fakes.tools import ToolCallRecorder


@pytest.fixture(autouse=True)
def _works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not sandbox_status().works or shutil.which("git") is None:
        pytest.fail(
            f"bubblewrap and git must work on the test machines: {sandbox_status().why_not}"
        )
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


class HeldLook:
    """:meth:`FolderTree.look`, the real one, held at its start until the
    test releases it (at most 5 s: on the event loop, nothing would)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.order: list[str] = []
        self._real = FolderTree.look

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(FolderTree, "look", lambda tree: self.look(tree))

    def look(self, tree: FolderTree) -> frozenset[str]:
        self.order.append("look started")
        self.entered.set()
        if not self.release.wait(5):
            self.order.append("look never released")
        found = self._real(tree)
        self.order.append("look ended")
        return found

    async def answer_meanwhile(self) -> None:
        """On the event loop: once a look has started, a step of its own,
        then the look goes on."""
        assert await anyio.to_thread.run_sync(self.entered.wait, 30)
        self.order.append("loop answered")
        self.release.set()


def _workspace(tmp_path: Path, folders: int) -> Path:
    ws = tmp_path / "ws"
    for n in range(folders):
        os.makedirs(ws / f"d{n // 100}" / f"e{n % 100}")
    return ws


async def _run_commands(ws: Path, command: str) -> str:
    sandbox = BwrapSandbox(str(ws), SandboxSettings())
    argv = await sandbox.start(["bash", "-c", command], cwd=str(ws))
    done = await anyio.run_process(argv, cwd=str(ws), check=False)
    return done.stdout.decode() + (await sandbox.ended() or "")


async def _run_gates(ws: Path, command: str) -> str:
    settings = SandboxSettings(also=("gates",))
    sandbox = OtherCommandsSandbox(str(ws), lambda: settings, "gates")
    result = await SubprocessRunner(str(ws), sandbox=sandbox).run(command, timeout_s=60)
    return result.output


@pytest.mark.parametrize("run", [_run_commands, _run_gates], ids=["run_command", "gates"])
async def test_the_event_loop_answers_while_a_first_look_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run: Callable[[Path, str], object],
) -> None:
    # A first look of 3,000 folders, held until the loop has answered:
    # were it on the event loop, the loop could not answer until it ended.
    ws = _workspace(tmp_path, 3_000)
    held = HeldLook()
    held.install(monkeypatch)
    output: list[str] = []

    async def command() -> None:
        output.append(await run(ws, "git init -q d1/e1 && echo ran"))  # type: ignore[misc]

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(held.answer_meanwhile)
        tasks.start_soon(command)
    # The start's look, then the end's (which found the planted repository).
    start = ["look started", "loop answered", "look ended"]
    assert held.order == [*start, "look started", "look ended"]
    assert "ran" in output[0] and "d1/e1/.git (now d1/e1/.git.rein-quarantine)" in output[0]


async def test_one_sandboxs_looks_take_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path, 10)
    nested = NestedRepositories(str(ws))
    held = HeldLook()
    held.install(monkeypatch)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(anyio.to_thread.run_sync, nested.before)
        assert await anyio.to_thread.run_sync(held.entered.wait, 30)
        # A look is under way: another of the same tree would wait for it.
        assert not nested._lock.acquire(blocking=False)
        held.release.set()
    assert nested._lock.acquire(blocking=False)
    nested._lock.release()


def _fifo_read(path: Path) -> str:
    with open(path, encoding="utf-8") as fifo:
        return fifo.read()


def _fifo_write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fifo:
        fifo.write(text)


@pytest.mark.parametrize(
    "then",
    [SandboxSettings(also=("gates",), network=("example.org",)), SandboxSettings(also=())],
    ids=["another-sandbox", "sandbox-off"],
)
async def test_a_settings_change_while_a_gates_command_runs_does_not_lose_its_plant(
    tmp_path: Path, then: SandboxSettings
) -> None:
    # The command plants a repository, the settings change (another sandbox
    # for the next commands, or none), then it ends: its end still looks in
    # the sandbox it started in, which saw no repository there.
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "planted")
    os.mkfifo(ws / "go")
    settings = [SandboxSettings(also=("gates",))]
    sandbox = OtherCommandsSandbox(str(ws), lambda: settings[0], "gates")
    runner = SubprocessRunner(str(ws), sandbox=sandbox)
    first = sandbox.sandbox()
    assert first is not None
    plant = "git init -q sub && echo yes > planted && read x < go && echo done"
    outcome: list[str] = []

    async def command() -> None:
        outcome.append((await runner.run(plant, timeout_s=60)).output)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(command)
        with anyio.fail_after(30):
            assert (
                await anyio.to_thread.run_sync(_fifo_read, ws / "planted", abandon_on_cancel=True)
                == "yes\n"
            )
            settings[0] = then
            assert sandbox.sandbox() is not first  # the next commands' sandbox
            await anyio.to_thread.run_sync(_fifo_write, ws / "go", "x\n", abandon_on_cancel=True)
    assert "done" in outcome[0]
    assert "sub/.git (now sub/.git.rein-quarantine)" in outcome[0]
    assert not (ws / "sub" / ".git").exists()


async def test_a_cancelled_gates_command_still_has_its_plant_moved_aside(tmp_path: Path) -> None:
    # Review 16: the end was skipped when the run was cancelled (a newer
    # edit's gate), and the next start took the plant for the person's.
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "planted")
    settings = SandboxSettings(also=("gates",))
    runner = SubprocessRunner(
        str(ws), sandbox=OtherCommandsSandbox(str(ws), lambda: settings, "gates")
    )
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(runner.run, "git init -q sub && echo yes > planted && sleep 60")
            with anyio.fail_after(30):
                read = await anyio.to_thread.run_sync(
                    _fifo_read, ws / "planted", abandon_on_cancel=True
                )
            assert read == "yes\n"
            scope.cancel()
    assert scope.cancelled_caught
    assert not (ws / "sub" / ".git").exists() and (ws / "sub" / ".git.rein-quarantine").is_dir()


async def test_an_aborted_run_command_still_has_its_plant_moved_aside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = ToolEnvironment(
        workspace=DiskWorkspace(ws),
        settings=ToolSettings(approval=ApprovalSettings.model_validate({"command": "sandboxed"})),
        sandbox=BwrapSandbox(str(ws), SandboxSettings()),
    )
    printed = anyio.Event()
    calls = ToolCallRecorder(env, on_update=lambda text, kind: printed.set())
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tasks:
            command = "git init -q sub && echo planted && sleep 60"
            tasks.start_soon(lambda: calls.run(RunCommandTool(), command=command))
            with anyio.fail_after(30):
                await printed.wait()
            scope.cancel()
    assert scope.cancelled_caught
    assert not (ws / "sub" / ".git").exists() and (ws / "sub" / ".git.rein-quarantine").is_dir()


async def test_a_plant_another_command_of_the_sandbox_sees_at_its_start_is_still_planted(
    tmp_path: Path,
) -> None:
    # Review 16: the gates' sandbox is one per workspace and settings (two
    # sessions' gates share it). A planted while B started: B's start took
    # A's repository for one that was there, and no end moved it aside.
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "planted")
    os.mkfifo(ws / "go")
    settings = SandboxSettings(also=("gates",))
    runner = SubprocessRunner(
        str(ws), sandbox=OtherCommandsSandbox(str(ws), lambda: settings, "gates")
    )
    outputs: list[str] = []

    async def plant() -> None:
        command = "git init -q sub && echo yes > planted && read x < go && echo done"
        outputs.append((await runner.run(command, timeout_s=60)).output)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(plant)
        with anyio.fail_after(30):
            read = await anyio.to_thread.run_sync(
                _fifo_read, ws / "planted", abandon_on_cancel=True
            )
            assert read == "yes\n"
            other = await runner.run("echo other", timeout_s=60)
            await anyio.to_thread.run_sync(_fifo_write, ws / "go", "x\n", abandon_on_cancel=True)
    said = other.output + outputs[0]
    assert "done" in outputs[0] and "sub/.git (now sub/.git.rein-quarantine)" in said
    assert not (ws / "sub" / ".git").exists()
    # Between commands, the person's repository is theirs again.
    (ws / "mine").mkdir()
    with anyio.fail_after(30):
        await anyio.run_process(["git", "init", "-q", str(ws / "mine")])
    assert "moved it aside" not in (await runner.run("true", timeout_s=60)).output
    assert (ws / "mine" / ".git").is_dir()
