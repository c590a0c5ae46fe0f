"""The manager against real stdio servers: start, call, crash, hang, abort,
list_changed, schema checks, stop."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from rein.mcp.config import McpServerSpec
from rein.mcp.manager import McpManager, ServerStatus
from tests.mcp.conftest import time_spec, toolbox_spec


class States:
    """Every state event, and a way to wait for one."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        self._changed = asyncio.Condition()

    def __call__(self, status: ServerStatus) -> None:
        self.seen.append((status.spec.name, status.state, status.error))
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, server: str, state: str, after: int = 0) -> str | None:
        async with asyncio.timeout(30), self._changed:
            while True:
                for name, seen, error in self.seen[after:]:
                    if (name, seen) == (server, state):
                        return error
                await self._changed.wait()


async def _no_wait(_: float) -> None:
    return None


@pytest.fixture
async def managed() -> AsyncIterator[tuple[McpManager, States]]:
    manager = McpManager([toolbox_spec(timeout_s=1.0)], restart_backoff_s=(0.0,), sleep=_no_wait)
    states = States()
    manager.subscribe(states)
    yield manager, states
    await manager.aclose()


async def test_one_server_lists_calls_errors_images_and_goes_on_after_a_hang(
    managed: tuple[McpManager, States],
) -> None:
    """One started server for every call that leaves it running."""
    manager, states = managed
    await manager.ensure_started()
    assert [s for _, s, _ in states.seen] == ["starting", "running"]
    names = [t.name for t in manager.tool_infos()]
    assert names == [
        "crash",
        "echo",
        "env",
        "fail",
        "garble",
        "grow",
        "hang",
        "hang_started",
        "image",
        "pid",
        "wait_cancelled",
    ]
    result = await manager.call_tool("box", "echo", {"text": "hi"})
    assert (result.content, result.is_error) == ("echo: hi", False)
    assert result.details == {"mcpServer": "box", "mcpTool": "echo"}

    # An error result and an image.
    failed = await manager.call_tool("box", "fail", {"reason": "because"})
    assert failed.is_error
    assert "failed on purpose: because" in failed.content
    image = await manager.call_tool("box", "image", {})
    assert not image.is_error
    assert "[image 1: image/png" in image.content
    assert [i.mime_type for i in image.images] == ["image/png"]

    # A hang is cut by the timeout and the server goes on.
    result = await manager.call_tool("box", "hang", {})
    assert result.is_error
    assert "timeout of 1 s" in result.content
    assert result.details["failure"] == "timeout"
    assert (await manager.call_tool("box", "echo", {"text": "x"})).content == "echo: x"


async def test_a_crash_mid_call_is_an_error_result_and_the_server_restarts(
    managed: tuple[McpManager, States],
) -> None:
    manager, states = managed
    await manager.ensure_started()
    mark = len(states.seen)
    result = await manager.call_tool("box", "crash", {})
    assert result.is_error
    assert "stopped while running crash" in result.content
    assert result.details["failure"] == "closed"
    error = await states.wait_for("box", "failed", mark)
    assert error is not None and error.startswith("crashed:")
    await states.wait_for("box", "running", mark)
    assert manager.servers["box"].restarts == 1
    again = await manager.call_tool("box", "echo", {"text": "back"})
    assert again.content == "echo: back"


async def test_cancelling_a_call_cancels_it_on_the_server_too() -> None:
    manager = McpManager([toolbox_spec(timeout_s=600.0)])
    try:
        await manager.ensure_started()
        call = asyncio.create_task(manager.call_tool("box", "hang", {}))
        assert (await manager.call_tool("box", "hang_started", {})).content == "hanging"
        call.cancel()
        async with asyncio.timeout(5):
            with pytest.raises(asyncio.CancelledError):
                await call
        # The server got notifications/cancelled: its handler was cancelled.
        cancelled = await manager.call_tool("box", "wait_cancelled", {})
        assert (cancelled.content, cancelled.is_error) == ("cancelled", False)
    finally:
        await manager.aclose()


async def test_list_changed_is_picked_up_by_refresh(managed: tuple[McpManager, States]) -> None:
    manager, _ = managed
    await manager.ensure_started()
    assert not await manager.refresh()
    await manager.call_tool("box", "grow", {})
    assert manager.servers["box"].stale
    assert await manager.refresh()
    assert "late_tool" in [t.name for t in manager.tool_infos()]


async def test_include_and_exclude_tools() -> None:
    manager = McpManager(
        [toolbox_spec(include_tools=("echo", "fail", "hang"), exclude_tools=("hang",))]
    )
    try:
        await manager.ensure_started()
        assert [t.name for t in manager.tool_infos()] == ["echo", "fail"]
    finally:
        await manager.aclose()


async def test_a_server_that_cannot_start_fails_with_why() -> None:
    spec = McpServerSpec(
        name="bad",
        source="settings",
        transport="stdio",
        command="/nonexistent/mcp-server",
        trusted=True,
    )
    manager = McpManager([spec, toolbox_spec()])
    try:
        await manager.ensure_started()
        snapshot = manager.snapshot()
        by_name = {s["name"]: s for s in snapshot["servers"]}
        assert by_name["bad"]["state"] == "failed"
        assert by_name["bad"]["error"]
        assert by_name["box"]["state"] == "running"
        result = await manager.call_tool("bad", "x", {})
        assert result.is_error and "not running" in result.content
    finally:
        await manager.aclose()


async def test_mcp_server_time_from_pypi() -> None:
    manager = McpManager([time_spec()])
    try:
        await manager.ensure_started()
        assert "get_current_time" in [t.name for t in manager.tool_infos()]
        result = await manager.call_tool("time", "get_current_time", {"timezone": "UTC"})
        assert not result.is_error
        assert '"timezone": "UTC"' in result.content
    finally:
        await manager.aclose()


async def test_stop_ends_the_servers(managed: tuple[McpManager, States]) -> None:
    manager, states = managed
    await manager.ensure_started()
    await manager.aclose()
    assert states.seen[-1][:2] == ("box", "stopped")
    result = await manager.call_tool("box", "echo", {"text": "z"})
    assert result.is_error


#: A server that reads its input and never answers ``initialize``.
SILENT = McpServerSpec(
    name="silent",
    source="settings",
    transport="stdio",
    command=sys.executable,
    args=("-c", "import sys; sys.stdin.read()"),
    trusted=True,
)


async def test_a_server_that_never_answers_fails_at_the_start_bound_and_is_stopped(
    tmp_path: Path,
) -> None:
    # Defect: a start past its bound left the server running (its process
    # and its task, past aclose, until Rein exited), and rein run ended with
    # "Future exception was never retrieved ... RuntimeError".
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    pid_file = tmp_path / "pid"
    code = f"import os, sys; open({str(pid_file)!r}, 'w').write(str(os.getpid())); sys.stdin.read()"
    silent = replace(SILENT, args=("-c", code))
    manager = McpManager([silent], start_timeout_s=1.0)
    try:
        async with asyncio.timeout(15):
            await manager.ensure_started()
        status = manager.servers["silent"]
        assert status.state == "failed"
        assert status.error is not None and "did not start within 1 s" in status.error
        with pytest.raises(ProcessLookupError):  # stopped and reaped
            os.kill(int(pid_file.read_text()), 0)
        assert [t for t in asyncio.all_tasks() if "McpConnection" in repr(t)] == []
    finally:
        await manager.aclose()
        gc.collect()  # a future nobody read says so when it is collected
        loop.set_exception_handler(None)
    assert [c["message"] for c in unhandled] == []


async def test_a_server_whose_output_is_not_json_rpc_says_so_when_it_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Defect: the SDK's traceback ("Failed to parse JSONRPC message") on
    # stderr, then "did not start within 30 s" with no word of the cause.
    banner = replace(
        SILENT,
        args=("-c", "print('Listening on port 8080', flush=True); import sys; sys.stdin.read()"),
    )
    manager = McpManager([banner], start_timeout_s=1.0)
    try:
        async with asyncio.timeout(15):
            await manager.ensure_started()
        assert manager.servers["silent"].error == (
            "did not start within 1 s; its output is not JSON-RPC: 'Listening on port 8080'"
        )
    finally:
        await manager.aclose()
    assert [r for r in caplog.records if "JSONRPC" in r.getMessage()] == []


async def test_a_cancelled_start_stops_the_waiting_server_and_the_next_start_retries_only_it() -> (
    None
):
    manager = McpManager([toolbox_spec(), SILENT], start_timeout_s=600.0)
    states = States()
    manager.subscribe(states)
    try:
        starting = asyncio.ensure_future(manager.ensure_started())
        await states.wait_for("box", "running")
        await states.wait_for("silent", "starting")
        box = manager.servers["box"].connection
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
        assert manager.servers["silent"].state == "stopped"
        assert "cancelled" in (manager.servers["silent"].error or "")
        assert manager.servers["box"].state == "running"
        # The next start tries the silent server again and leaves the box alone.
        mark = len(states.seen)
        again = asyncio.ensure_future(manager.ensure_started())
        await states.wait_for("silent", "starting", mark)
        again.cancel()
        with pytest.raises(asyncio.CancelledError):
            await again
        assert manager.servers["box"].connection is box
        assert [name for name, state, _ in states.seen[mark:] if state == "starting"] == ["silent"]
    finally:
        await manager.aclose()


async def test_servers_added_later_start_at_once_when_the_others_run(
    managed: tuple[McpManager, States],
) -> None:
    manager, _states = managed
    assert await manager.add([toolbox_spec("early")]) == ["early"]
    await manager.ensure_started()
    assert {s.spec.name: s.state for s in manager.servers.values()} == {
        "box": "running",
        "early": "running",
    }
    # Added after the start: started by add itself; a known name keeps its server.
    assert await manager.add([toolbox_spec("late"), toolbox_spec("box")]) == ["late"]
    assert manager.servers["late"].state == "running"
    result = await manager.call_tool("late", "echo", {"text": "later"})
    assert (result.content, result.is_error) == ("echo: later", False)


async def test_a_line_that_is_not_utf8_does_not_break_the_connection() -> None:
    """A server that prints one line of invalid UTF-8: the SDK's strict
    decoding killed its reader, and every later call waited out the
    server's timeout (here 30 s); decoded with replacement, they answer."""
    manager = McpManager([toolbox_spec(timeout_s=30.0)])
    try:
        async with asyncio.timeout(10):
            await manager.ensure_started()
            garbled = await manager.call_tool("box", "garble", {})
            assert (garbled.content, garbled.is_error) == ("garbled", False)
            for text in ("one", "two"):
                answer = await manager.call_tool("box", "echo", {"text": text})
                assert answer.content == f"echo: {text}"
        assert manager.servers["box"].state == "running"
        assert manager.servers["box"].restarts == 0
    finally:
        await manager.aclose()


async def test_a_server_that_dies_while_idle_is_restarted_and_reported(
    managed: tuple[McpManager, States],
) -> None:
    """Killed between calls (its output ends, nobody is waiting for an
    answer): the manager notices at once, says so and restarts it, so the
    next call answers instead of failing as "stopped while running"."""
    manager, states = managed
    await manager.ensure_started()
    pid = int((await manager.call_tool("box", "pid", {})).content)
    mark = len(states.seen)
    os.kill(pid, signal.SIGKILL)
    error = await states.wait_for("box", "failed", mark)
    assert error is not None and error.startswith("crashed: ") and "output ended" in error, error
    assert error.endswith("; restarting it")  # the state says it all: the log is not needed
    await states.wait_for("box", "running", mark)
    assert manager.servers["box"].restarts == 1
    again = await manager.call_tool("box", "echo", {"text": "back"})
    assert (again.content, again.is_error) == ("echo: back", False)
