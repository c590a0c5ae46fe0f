"""run_command: streaming, head+tail output, exit codes, and the whole
process group ended on timeout and on cancellation."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.tools import ToolEnvironment, ToolResult
from rein.process.groups import group_alive
from rein.tools import RunCommandTool
from rein.tools.command import _FLUSH_BYTES
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.tools import ToolCallRecorder


def pid_running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait for init)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


@pytest.fixture
def command_env(root: Path) -> ToolEnvironment:
    return ToolEnvironment(
        workspace=DiskWorkspace(root),
        settings=ToolSettings(approval=ApprovalSettings(command="allow")),
    )


@pytest.fixture
def run(command_env: ToolEnvironment) -> ToolCallRecorder:
    return ToolCallRecorder(command_env)


def _pids(text: str) -> list[int]:
    return [int(word) for word in text.split() if word.isdigit()]


async def test_output_and_exit_code(run: ToolCallRecorder, root: Path) -> None:
    result = await run.run(RunCommandTool(), command="pwd; echo oops >&2; exit 3")
    assert result.is_error
    assert result.content.splitlines() == [
        "$ pwd; echo oops >&2; exit 3",
        str(root),
        "oops",
        "[exit code 3]",
    ]
    assert result.details["exit_code"] == 3
    assert result.details["timed_out"] is False
    ok = await run.run(RunCommandTool(), command="true")
    assert not ok.is_error and ok.content == "$ true\n[exit code 0]"


async def test_updates_stream_batched_lines(run: ToolCallRecorder) -> None:
    result = await run.run(RunCommandTool(), command="seq 1 2000")
    expected = "".join(f"{i}\n" for i in range(1, 2001))
    assert run.output() == expected
    outputs = [text for text, kind in run.updates if kind == "output"]
    assert len(outputs) < 20, "updates must be batched, not one per line"
    assert all(text.endswith("\n") for text in outputs)
    assert result.content.endswith("1999\n2000\n[exit code 0]")


async def test_lines_stream_before_the_command_ends(
    command_env: ToolEnvironment, root: Path
) -> None:
    ready = anyio.Event()
    calls = ToolCallRecorder(
        command_env, on_update=lambda text, kind: ready.set() if "ready" in text else None
    )
    script = "echo ready; while [ ! -f go ]; do sleep 0.01; done; echo done"
    result: list[ToolResult] = []

    async def call() -> None:
        result.append(await calls.run(RunCommandTool(), command=script, timeout=20))

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        with anyio.fail_after(10):
            await ready.wait()
        assert not result, "the command is still running when its first line arrives"
        (root / "go").touch()
    assert result[0].content.splitlines()[1:] == ["ready", "done", "[exit code 0]"]


async def test_long_output_keeps_head_and_tail(run: ToolCallRecorder) -> None:
    tool = RunCommandTool(head_chars=100, tail_chars=100)
    result = await run.run(tool, command="seq 1 10000")
    lines = result.content.splitlines()
    assert lines[1:4] == ["1", "2", "3"]
    assert lines[-2:] == ["10000", "[exit code 0]"]
    assert any("characters cut from the middle of the output" in line for line in lines)
    assert result.details["output_chars"] == len("".join(f"{i}\n" for i in range(1, 10001)))
    assert len(result.content) < 400


#: What one read of the pipe can add to a batch past the size flush.
PIPE_READ = 65_536


async def test_output_without_newlines_streams_in_bounded_pieces(run: ToolCallRecorder) -> None:
    # 20 MB and not one newline: it streams as it comes, in batches of about
    # 4 KB (one pipe read at most past it), not as one 20 MB update at the
    # end (whose search for a newline made the command superlinear).
    size = 20_000_000
    result = await run.run(RunCommandTool(), command=f"head -c {size} /dev/zero | tr '\\0' x")
    outputs = [text for text, kind in run.updates if kind == "output"]
    assert sum(map(len, outputs)) == size and set("".join(outputs)) == {"x"}
    assert max(map(len, outputs)) <= _FLUSH_BYTES + PIPE_READ
    assert len(outputs) >= size // (_FLUSH_BYTES + PIPE_READ)
    assert result.details["output_chars"] == size and result.details["exit_code"] == 0
    assert len(result.content) < 15_000 and result.content.endswith("x\n[exit code 0]")


async def test_a_long_line_streams_by_size_and_lines_stay_whole(run: ToolCallRecorder) -> None:
    # A 10,000-character line between short ones: sent whole or in 4 KB
    # pieces once that long; the short lines around it arrive as lines.
    script = "print('a'); print('b' * 10000); print('c')"
    await run.run(RunCommandTool(), command=f'python3 -c "{script}"')
    outputs = [text for text, kind in run.updates if kind == "output"]
    assert "".join(outputs) == "a\n" + "b" * 10000 + "\nc\n"
    assert all(len(text) <= _FLUSH_BYTES + PIPE_READ for text in outputs)


async def test_timeout_kills_the_process_group(run: ToolCallRecorder) -> None:
    result = await run.run(RunCommandTool(), command="sleep 60 & echo $! $$; wait", timeout=1.0)
    child, leader = _pids(result.content.splitlines()[1])
    assert result.is_error
    assert result.details["timed_out"] is True
    assert "[Timed out after 1 s" in result.content
    assert not pid_running(child)
    assert not group_alive(leader)


async def test_processes_ignoring_sigterm_get_sigkill(run: ToolCallRecorder) -> None:
    tool = RunCommandTool(grace_s=0.2)
    result = await run.run(tool, command="trap '' TERM; sleep 60 & echo $! $$; wait", timeout=1.0)
    child, leader = _pids(result.content.splitlines()[1])
    assert result.details["timed_out"] is True
    assert not pid_running(child)
    assert not group_alive(leader)


async def test_background_leftovers_are_stopped(run: ToolCallRecorder) -> None:
    with anyio.fail_after(20):
        result = await run.run(RunCommandTool(), command="sleep 60 & echo $!", timeout=30)
    (child,) = _pids(result.content.splitlines()[1])
    assert result.details["exit_code"] == 0
    assert "left running in the background were stopped" in result.content
    assert not pid_running(child)


async def test_a_process_in_a_session_of_its_own_is_stopped_too(run: ToolCallRecorder) -> None:
    """``setsid`` leaves the process group that is ended; a daemon's double
    fork leaves its parent too. Both outlived the run before."""
    command = (
        "setsid sleep 61 </dev/null >/dev/null 2>&1 & echo $!; "
        "( setsid sh -c 'sleep 62 & echo $!' </dev/null 2>/dev/null & ) | head -1"
    )
    with anyio.fail_after(20):
        result = await run.run(RunCommandTool(), command=command, timeout=30)
    lines = result.content.splitlines()
    pids = [int(line) for line in lines[1:] if line.isdigit()]
    assert len(pids) == 2, result.content
    assert result.details["exit_code"] == 0
    assert not [pid for pid in pids if pid_running(pid)]
    assert "[Rein stopped 2 process(es) the command left running in a session" in result.content


async def test_cancellation_kills_the_group_and_propagates(command_env: ToolEnvironment) -> None:
    pids: list[int] = []
    started = anyio.Event()

    def on_update(text: str, kind: str) -> None:
        pids.extend(_pids(text))
        started.set()

    calls = ToolCallRecorder(command_env, on_update=on_update)
    finished: list[ToolResult] = []

    async def call() -> None:
        finished.append(await calls.run(RunCommandTool(), command="sleep 60 & echo $! $$; wait"))

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(10):
                await started.wait()
            assert pids and all(pid_running(pid) for pid in pids)
            scope.cancel()
    assert scope.cancelled_caught
    assert finished == [], "a cancelled call re-raises instead of returning"
    child, leader = pids
    assert not pid_running(child)
    assert not group_alive(leader)


async def test_empty_command(run: ToolCallRecorder) -> None:
    result = await run.run(RunCommandTool(), command="   ")
    assert result.is_error and result.content == "The command is empty."


async def test_steering_ends_a_long_command_softly_with_its_output_so_far(
    run: ToolCallRecorder,
) -> None:
    """Issue 15: run_command awaits steering_arrived; a steer ends the
    command (and its children) and the result says why, with the output so far."""

    def steer_once_started(text: str, kind: str) -> None:
        if "started" in text:
            run.steering.set()

    run._on_update = steer_once_started
    result = await run.run(
        RunCommandTool(), command="echo started; sleep 60; echo never", timeout=120
    )
    output = result.content.splitlines()[1:]
    assert output[0] == "started" and not any("never" in line for line in output)
    assert "the person sent a message" in result.content
    assert result.details["stopped_for_steering"] is True
    assert result.details["timed_out"] is False


async def test_the_change_hooks_hear_of_a_command_before_it_runs(root: Path) -> None:
    """The before-change callbacks are awaited with no paths before the
    command starts (the analyzer gate's run-start baseline must predate
    what it writes)."""
    from rein.harness.generations import MutationLog, TrackedWorkspace

    workspace = TrackedWorkspace(DiskWorkspace(root), MutationLog())
    heard: list[tuple[tuple[str, ...], bool]] = []

    async def before(paths: tuple[str, ...]) -> None:
        heard.append((paths, (root / "made.txt").exists()))

    workspace.before_change(before)
    env = ToolEnvironment(
        workspace=workspace,
        settings=ToolSettings(approval=ApprovalSettings(command="allow")),
    )
    result = await ToolCallRecorder(env).run(RunCommandTool(), command="echo hi > made.txt")
    assert not result.is_error, result.content
    assert heard == [((), False)]
    assert (root / "made.txt").read_text() == "hi\n"
