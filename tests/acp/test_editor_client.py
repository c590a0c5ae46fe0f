"""The test editor itself: the ACP scenario tests trust its buffers, its
terminals and its scripted permission answers, so they are checked here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, ToolCallUpdate

from tests.fakes.acp_client import FakeAcpClient

OPTIONS = [
    PermissionOption(option_id="a1", name="Allow", kind="allow_once"),
    PermissionOption(option_id="a2", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="r1", name="Reject", kind="reject_once"),
]


async def test_reads_see_the_unsaved_buffer_and_writes_stay_in_it(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("one\ntwo\nthree\n")
    editor = FakeAcpClient(tmp_path, run_commands=True)
    assert (await editor.read_text_file("s", str(target))).content == "one\ntwo\nthree\n"
    assert (await editor.read_text_file("s", str(target), line=2, limit=1)).content == "two\n"
    await editor.write_text_file("s", str(target), "new\n")
    assert (await editor.read_text_file("s", str(target))).content == "new\n"
    assert target.read_text() == "one\ntwo\nthree\n"  # not saved
    editor.save(target)
    assert target.read_text() == "new\n"
    with pytest.raises(RequestError):
        await editor.read_text_file("s", "relative.py")
    assert [m for m, _ in editor.calls] == ["fs/read_text_file"] * 2 + ["fs/write_text_file"] + [
        "fs/read_text_file"
    ] * 2


async def test_terminals_are_real_processes_with_truncated_output(tmp_path: Path) -> None:
    editor = FakeAcpClient(tmp_path, run_commands=True)
    made = await editor.create_terminal(
        "s",
        sys.executable,
        args=["-c", "import sys; sys.stdout.write('x' * 50 + 'END'); sys.exit(3)"],
        cwd=str(tmp_path),
        output_byte_limit=10,
    )
    exit_status = await editor.wait_for_terminal_exit("s", made.terminal_id)
    assert exit_status.exit_code == 3
    output = await editor.terminal_output("s", made.terminal_id)
    assert output.output == "xxxxxxxEND"
    assert output.truncated
    assert output.exit_status is not None and output.exit_status.exit_code == 3
    await editor.release_terminal("s", made.terminal_id)
    assert editor.terminals[made.terminal_id].released
    with pytest.raises(RequestError):  # a released terminal is gone
        await editor.terminal_output("s", made.terminal_id)


async def test_a_killed_terminal_reports_its_signal(tmp_path: Path) -> None:
    editor = FakeAcpClient(tmp_path, run_commands=True)
    made = await editor.create_terminal("s", "sleep", args=["30"])
    assert (await editor.terminal_output("s", made.terminal_id)).exit_status is None
    await editor.kill_terminal("s", made.terminal_id)
    output = await editor.terminal_output("s", made.terminal_id)
    assert output.exit_status is not None and output.exit_status.signal == "signal 9"
    await editor.aclose()


async def test_permission_answers_follow_the_script(tmp_path: Path) -> None:
    editor = FakeAcpClient(
        tmp_path, run_commands=True, permissions=["allow_always", "reject_once", "cancelled"]
    )
    call = ToolCallUpdate(tool_call_id="t1", title="Run `ls`")
    answers = [(await editor.request_permission("s", call, OPTIONS)).outcome for _ in range(3)]
    assert isinstance(answers[0], AllowedOutcome) and answers[0].option_id == "a2"
    assert isinstance(answers[1], AllowedOutcome) and answers[1].option_id == "r1"
    assert isinstance(answers[2], DeniedOutcome)
    with pytest.raises(AssertionError, match="unscripted permission request"):
        await editor.request_permission("s", call, OPTIONS)


async def test_wait_for_returns_an_update_recorded_before_or_after(tmp_path: Path) -> None:
    from acp.helpers import update_agent_message_text

    editor = FakeAcpClient(tmp_path, run_commands=True)
    await editor.session_update("s", update_agent_message_text("hello "))
    first = await editor.wait_for("s", lambda u: u["sessionUpdate"] == "agent_message_chunk")
    assert first["content"] == {"type": "text", "text": "hello "}
    with pytest.raises(TimeoutError):
        await editor.wait_for("s", lambda u: u["sessionUpdate"] == "plan", bound=0.05)
    await editor.session_update("s", update_agent_message_text("world"))
    assert editor.said("s") == "hello world"
