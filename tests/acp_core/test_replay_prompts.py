"""A stored transcript as the updates ``session/load`` replays
(rein.acp.replay), the prompt's content blocks as a run's text and a run's
end as a stop reason (rein.acp.prompts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError, helpers
from acp.schema import AudioContentBlock, ImageContentBlock

from rein.acp.prompts import prompt_text, stop_reason
from rein.acp.replay import replay_messages
from rein.harness import RunResult
from rein.harness.messages import (
    AssistantMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


def test_replay_shows_what_the_person_and_the_model_said(tmp_path: Path) -> None:
    messages = [
        UserMessage(content="<workspace tree>", origin="bootstrap"),
        UserMessage(content="fix app.py"),
        AssistantMessage(
            content=(
                ThinkingPart(thinking="look first"),
                TextPart(text="Reading."),
                ToolCall(id="c1", name="read_file", arguments={"path": "app.py"}),
                ToolCall(id="c2", name="run_command", arguments={"command": "false"}),
            )
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read_file", content="x = 1"),
        ToolResultMessage(
            tool_call_id="c2", tool_name="run_command", content="exit 1", is_error=True
        ),
        UserMessage(content="Repair: undefined name", origin="repair"),
        UserMessage(content="use pathlib", origin="steer"),
        AssistantMessage(
            content=(ToolCall(id="c3", name="edit_file", arguments={"path": "app.py"}),)
        ),
    ]
    updates = replay_messages(messages, tmp_path)
    assert [u.session_update for u in updates] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call",
        "user_message_chunk",
        "tool_call",
    ]
    assert updates[0].content.text == "fix app.py"
    assert updates[5].content.text == "use pathlib"
    read, run, edit = updates[3], updates[4], updates[6]
    assert (read.title, read.status, read.content[0].content.text) == (
        "Read app.py",
        "completed",
        "x = 1",
    )
    assert read.locations[0].path == str(tmp_path / "app.py")
    assert (run.kind, run.status) == ("execute", "failed")
    # A call a crash left without a result.
    assert edit.status == "failed" and "interrupted" in edit.content[0].content.text


def test_prompt_blocks_become_the_runs_text(tmp_path: Path) -> None:
    blocks = [
        helpers.text_block("Explain this:"),
        helpers.resource_link_block("app.py", f"file://{tmp_path}/src/app.py"),
        helpers.resource_link_block("x", "https://example.com/spec"),
        # A mention of lines, as Zed sends a selection it does not embed.
        helpers.resource_link_block("app.py (10-20)", f"file://{tmp_path}/src/app.py#L10:20"),
        helpers.resource_block(
            helpers.embedded_text_resource(f"file://{tmp_path}/notes.md", "- a note")
        ),
    ]
    assert prompt_text(blocks, tmp_path) == (
        "Explain this:\n[file: src/app.py]\n[file: https://example.com/spec]\n"
        "[file: src/app.py#L10:20]\n"
        f'<resource uri="file://{tmp_path}/notes.md">\n- a note\n</resource>'
    )


@pytest.mark.parametrize(
    ("block", "field"),
    [
        pytest.param(
            ImageContentBlock(type="image", data="AA", mime_type="image/png"),
            "prompt[1]",
            id="image",
        ),
        pytest.param(
            AudioContentBlock(type="audio", data="AA", mime_type="audio/wav"),
            "prompt[1]",
            id="audio",
        ),
        pytest.param(
            helpers.resource_block(helpers.embedded_blob_resource("file:///a.bin", "AA")),
            "prompt[1]",
            id="blob",
        ),
    ],
)
def test_content_rein_does_not_take_is_refused_by_its_index(
    tmp_path: Path, block: object, field: str
) -> None:
    with pytest.raises(RequestError) as error:
        prompt_text([helpers.text_block("see"), block], tmp_path)
    assert error.value.code == -32602 and error.value.data == {"field": field}


def test_an_empty_prompt_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RequestError) as error:
        prompt_text([helpers.text_block("  ")], tmp_path)
    assert error.value.data == {"field": "prompt"}


@pytest.mark.parametrize(
    ("status", "error", "last_stop", "reason"),
    [
        pytest.param("completed", None, "stop", "end_turn", id="completed"),
        pytest.param("aborted", "cancelled by the client", "aborted", "cancelled", id="aborted"),
        pytest.param(
            "failed",
            "reached the limit of 3 model turns for one run (harness.maxModelTurnsPerRun)",
            "tool_use",
            "max_turn_requests",
            id="turn-cap",
        ),
        pytest.param("completed", None, "length", "max_tokens", id="length"),
        pytest.param("failed", "the provider failed", "error", "end_turn", id="failed"),
        pytest.param("waiting", None, "tool_use", "end_turn", id="waiting"),
    ],
)
def test_stop_reasons(status: str, error: str | None, last_stop: str, reason: str) -> None:
    result = RunResult(run_id="r", status=status, error=error)  # type: ignore[arg-type]
    messages = [UserMessage(content="go"), AssistantMessage(stop_reason=last_stop)]  # type: ignore[arg-type]
    assert stop_reason(result, messages) == reason
