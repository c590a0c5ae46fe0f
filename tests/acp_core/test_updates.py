"""Rein events in, ACP ``session/update`` objects out (rein.acp.updates):
locations, edit diffs from the text before and after, bounded output tails,
terminals, gates and repairs as tool calls, the plan, usage, subagent lines,
errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rein.acp.updates import (
    OUTPUT_TAIL_CHARS,
    UpdateMapper,
)
from rein.harness.events import (
    Blocker,
    ErrorEvent,
    GateResult,
    GateStart,
    McpServerState,
    PlanStep,
    PlanUpdated,
    RepairAttempt,
    RunEnd,
    SubagentActivity,
    ToolCallEnd,
    ToolCallStart,
    ToolCallUpdate,
    TurnEnd,
)
from rein.harness.messages import Usage


@pytest.fixture
def files() -> dict[str, str]:
    return {"app.py": "x = 1\n"}


@pytest.fixture
def mapper(tmp_path: Path, files: dict[str, str]) -> UpdateMapper:
    return UpdateMapper(tmp_path, files.get, lambda: 128_000)


def test_a_tool_call_starts_in_progress_with_its_location(
    mapper: UpdateMapper, tmp_path: Path
) -> None:
    [update] = mapper(
        ToolCallStart(
            tool_call_id="c1", name="read_file", arguments={"path": "app.py", "offset": 3}
        )
    )
    assert update.session_update == "tool_call"
    assert (update.tool_call_id, update.status, update.kind) == ("c1", "in_progress", "read")
    assert [(loc.path, loc.line) for loc in update.locations] == [(str(tmp_path / "app.py"), 3)]
    assert update.raw_input == {"path": "app.py", "offset": 3}


@pytest.mark.parametrize("offset", [-3, 0, True, "7"])
def test_an_offset_that_is_no_line_still_shows_the_call_without_one(
    mapper: UpdateMapper, tmp_path: Path, offset: object
) -> None:
    # The model's arguments as it sent them (the tool refuses them later):
    # 0 went out as line 0 (ACP's lines are 1-based), true as line 1.
    [update] = mapper(
        ToolCallStart(
            tool_call_id="c1", name="read_file", arguments={"path": "app.py", "offset": offset}
        )
    )
    assert update.session_update == "tool_call"
    assert [(loc.path, loc.line) for loc in update.locations] == [(str(tmp_path / "app.py"), None)]


def test_an_edit_ends_with_a_diff_of_before_and_after(
    mapper: UpdateMapper, files: dict[str, str], tmp_path: Path
) -> None:
    mapper(ToolCallStart(tool_call_id="e1", name="edit_file", arguments={"path": "app.py"}))
    files["app.py"] = "x = 2\n"
    [end] = mapper(ToolCallEnd(tool_call_id="e1", name="edit_file", is_error=False, content="ok"))
    assert end.status == "completed"
    [diff] = end.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff",
        str(tmp_path / "app.py"),
        "x = 1\n",
        "x = 2\n",
    )


def test_a_new_file_has_no_old_text_and_a_failed_edit_shows_its_error(
    mapper: UpdateMapper, files: dict[str, str]
) -> None:
    mapper(ToolCallStart(tool_call_id="w1", name="write_file", arguments={"path": "new.py"}))
    files["new.py"] = "y = 1\n"
    [end] = mapper(ToolCallEnd(tool_call_id="w1", name="write_file", is_error=False, content=""))
    assert end.content[0].old_text is None and end.content[0].new_text == "y = 1\n"
    mapper(ToolCallStart(tool_call_id="e2", name="edit_file", arguments={"path": "app.py"}))
    [failed] = mapper(
        ToolCallEnd(tool_call_id="e2", name="edit_file", is_error=True, content="no match")
    )
    assert failed.status == "failed"
    assert [c.type for c in failed.content] == ["content"]
    assert failed.content[0].content.text == "no match"


def test_command_output_is_a_bounded_tail_until_a_terminal_takes_over(
    mapper: UpdateMapper,
) -> None:
    mapper(ToolCallStart(tool_call_id="r1", name="run_command", arguments={"command": "make"}))
    mapper(ToolCallUpdate(tool_call_id="r1", name="run_command", text="a" * OUTPUT_TAIL_CHARS))
    [update] = mapper(ToolCallUpdate(tool_call_id="r1", name="run_command", text="END"))
    text = update.content[0].content.text
    assert text.endswith("aEND") and "3 earlier characters" in text
    [ref] = mapper(
        ToolCallUpdate.model_construct(
            type="tool_call_update",
            tool_call_id="r1",
            name="run_command",
            kind="terminal",
            text="term-1",
        )
    )
    assert ref.content[0].type == "terminal" and ref.content[0].terminal_id == "term-1"
    assert mapper(ToolCallUpdate(tool_call_id="r1", name="run_command", text="more")) == []
    [end] = mapper(
        ToolCallEnd(tool_call_id="r1", name="run_command", is_error=False, content="exit 0")
    )
    assert [c.type for c in end.content] == ["terminal", "content"]


def test_gates_and_repairs_are_tool_calls(mapper: UpdateMapper) -> None:
    [start] = mapper(GateStart(gate="analyzer", generation=3))
    assert (start.title, start.kind, start.status) == ("Check: analyzer", "think", "in_progress")
    blocker = Blocker(gate="analyzer", message="undefined name 'y'", path="app.py", line=2)
    [blocked] = mapper(
        GateResult(gate="analyzer", passed=False, status="blocked", blockers=[blocker])
    )
    assert blocked.tool_call_id == start.tool_call_id and blocked.status == "failed"
    assert blocked.content[0].content.text == "- app.py:3: undefined name 'y'"
    [repair] = mapper(RepairAttempt(attempt=1, max_attempts=3, blockers=[blocker]))
    assert (repair.title, repair.kind, repair.status) == ("Repair 1/3", "other", "in_progress")
    closed, again = mapper(GateStart(gate="analyzer", generation=4))
    assert (closed.tool_call_id, closed.status) == (repair.tool_call_id, "completed")
    assert again.tool_call_id != start.tool_call_id
    [unverified] = mapper(
        GateResult(gate="analyzer", passed=False, status="unverified", detail="no analyzer")
    )
    assert unverified.status == "completed"
    assert unverified.content[0].content.text == "unverified: no analyzer"
    mapper(RepairAttempt(attempt=2, max_attempts=3))
    [ended] = mapper(RunEnd(run_id="r", status="failed"))
    assert ended.status == "completed"


def test_the_plan_usage_subagents_and_errors(mapper: UpdateMapper) -> None:
    steps = [
        PlanStep(id="1", description="read", status="done"),
        PlanStep(id="2", description="edit", status="running"),
        PlanStep(id="3", description="test", status="failed"),
        PlanStep(id="4", description="docs"),
    ]
    [plan] = mapper(PlanUpdated(steps=steps))
    assert [(e.content, e.status, e.priority) for e in plan.entries] == [
        ("read", "completed", "medium"),
        ("edit", "in_progress", "medium"),
        ("Failed: test", "completed", "medium"),
        ("docs", "pending", "medium"),
    ]
    [usage] = mapper(TurnEnd(turn=1, usage=Usage(input_tokens=900, output_tokens=100)))
    assert (usage.session_update, usage.used, usage.size) == ("usage_update", 1000, 128_000)
    assert mapper(TurnEnd(turn=2)) == []
    child = {"type": "tool_call_start", "name": "read_file", "arguments": {"path": "a.py"}}
    [line] = mapper(SubagentActivity(child_id="k", name="reader", tool_call_id="t1", event=child))
    assert line.tool_call_id == "t1" and line.content[0].content.text == "▸ Read a.py"
    [said] = mapper(ErrorEvent(message="the provider refused", where="model"))
    assert said.session_update == "agent_message_chunk"
    assert "the provider refused" in said.content.text


def test_the_witnessed_text_before_a_write_is_the_diffs_old_text(
    mapper: UpdateMapper, files: dict[str, str]
) -> None:
    mapper(ToolCallStart(tool_call_id="e1", name="edit_file", arguments={"path": "app.py"}))
    mapper.before_change("other.py", "not this file")
    mapper.before_change("app.py", "x = 1\n# unsaved buffer\n")
    files["app.py"] = "x = 2\n# unsaved buffer\n"
    [end] = mapper(ToolCallEnd(tool_call_id="e1", name="edit_file", is_error=False, content=""))
    assert end.content[0].old_text == "x = 1\n# unsaved buffer\n"
    # Outside a running edit a witnessed text changes nothing.
    mapper.before_change("app.py", "late")
    mapper(ToolCallStart(tool_call_id="e2", name="edit_file", arguments={"path": "app.py"}))
    files["app.py"] = "x = 3\n"
    [end] = mapper(ToolCallEnd(tool_call_id="e2", name="edit_file", is_error=False, content=""))
    assert end.content[0].old_text == "x = 2\n# unsaved buffer\n"


def test_usage_reports_the_context_fill_and_the_sessions_cost_while_known(
    mapper: UpdateMapper,
) -> None:
    from rein.harness.events import ContextShare

    turn = Usage(input_tokens=9000, output_tokens=200)

    def ended(number: int, used: int, cost: float | None = None) -> Any:
        share = ContextShare(used=used, window=200_000, share=used / 200_000)
        [update] = mapper(TurnEnd(turn=number, usage=turn, cost=cost, context=share))
        return update

    first = ended(1, 9000, cost=0.03)
    assert (first.used, first.size) == (9000, 200_000)
    assert first.cost is not None and (first.cost.amount, first.cost.currency) == (0.03, "USD")
    second = ended(2, 9500, cost=0.02)
    assert second.used == 9500 and second.cost is not None and second.cost.amount == 0.05
    # A turn whose price is unknown: the session's cost is not known any more.
    third = ended(3, 9800)
    assert third.cost is None
    [fourth] = mapper(TurnEnd(turn=4, usage=turn, cost=0.01))
    assert fourth.cost is None


@pytest.mark.parametrize(
    ("content", "display", "shown"),
    [
        pytest.param("# R\n\n- one", "markdown", "# R\n\n- one", id="markdown"),
        pytest.param("| a |\n|---|\n| 1 |", "table", "| a |\n|---|\n| 1 |", id="table"),
        pytest.param("-old\n+new\n", "diff", "```diff\n-old\n+new\n```", id="diff"),
        pytest.param('{"a": [1]}', "json", '```json\n{\n  "a": [\n    1\n  ]\n}\n```', id="json"),
        pytest.param('{"a": [', "json", '```json\n{"a": [\n```', id="json-cut-short"),
        pytest.param("x\n```\ny", "diff", "````diff\nx\n```\ny\n````", id="fence-in-it"),
        pytest.param("# not markdown", "text", "# not markdown", id="text"),
    ],
)
def test_a_tool_result_shows_by_its_display_kind(
    mapper: UpdateMapper, content: str, display: Any, shown: str
) -> None:
    mapper(ToolCallStart(tool_call_id="t1", name="report", arguments={}))
    [end] = mapper(
        ToolCallEnd(
            tool_call_id="t1", name="report", is_error=False, content=content, display=display
        )
    )
    assert end.content[0].content.text == shown


def test_a_failed_tool_results_error_is_text_whatever_the_display(mapper: UpdateMapper) -> None:
    mapper(ToolCallStart(tool_call_id="t2", name="report", arguments={}))
    [end] = mapper(
        ToolCallEnd(tool_call_id="t2", name="report", is_error=True, content="boom", display="json")
    )
    assert end.content[0].content.text == "boom"


def test_an_mcp_server_that_did_not_start_is_a_thought_with_its_reason(
    mapper: UpdateMapper,
) -> None:
    # Defect: the state was not mapped: an editor never heard that a server
    # it passed failed (only rein acp's stderr log said so).
    failed = McpServerState(server="db", state="failed", error="boom", source="acp")
    [update] = mapper(failed)
    assert update.session_update == "agent_thought_chunk"
    assert update.content.text == "MCP server db failed: boom\n"
    skipped = McpServerState(server="x", state="skipped", error="not trusted", source="mcp.json")
    assert [u.content.text for u in mapper(skipped)] == ["MCP server x skipped: not trusted\n"]
    for state in ("starting", "running"):
        assert mapper(McpServerState(server="db", state=state, source="acp")) == []
