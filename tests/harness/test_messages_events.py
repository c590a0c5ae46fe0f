from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import ValidationError

from rein.harness.events import (
    EventAdapter,
    MessageEnd,
    RunEnd,
    ToolCallEnd,
    event_json_schema,
)
from rein.harness.messages import (
    AssistantMessage,
    MessageAdapter,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    dump_messages,
    load_messages,
)
from tests.forkserver import REIN


def test_messages_round_trip_through_json() -> None:
    messages = [
        UserMessage(content="fix the bug"),
        AssistantMessage(
            content=(
                ThinkingPart(thinking="let me look", signature="sig=="),
                TextPart(text="Reading."),
                ToolCall(id="c1", name="read_file", arguments={"path": "a.py"}),
            ),
            stop_reason="tool_use",
            usage=Usage(input_tokens=12, output_tokens=3, cache_read_tokens=4),
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read_file", content="1\tx", is_error=False),
    ]
    restored = load_messages(dump_messages(messages))
    assert restored == messages
    assistant = restored[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.text == "Reading."
    assert assistant.thinking == "let me look"
    assert [c.name for c in assistant.tool_calls] == ["read_file"]
    assert assistant.content[0].signature == "sig=="  # type: ignore[union-attr]


def test_message_union_is_discriminated_by_role() -> None:
    msg = MessageAdapter.validate_python(
        {"role": "tool", "tool_call_id": "x", "tool_name": "t", "content": "c"}
    )
    assert isinstance(msg, ToolResultMessage)
    with pytest.raises(ValidationError):
        MessageAdapter.validate_python({"role": "system", "content": "no such role"})


def test_messages_are_frozen() -> None:
    msg = UserMessage(content="a")
    with pytest.raises(ValidationError):
        msg.content = "b"  # type: ignore[misc]


def test_empty_assistant_detection() -> None:
    assert AssistantMessage().is_empty()
    assert AssistantMessage(content=(TextPart(text="  "),)).is_empty()
    assert AssistantMessage(content=(ThinkingPart(thinking="hm"),)).is_empty()
    assert not AssistantMessage(content=(ToolCall(id="a", name="b"),)).is_empty()


def test_events_round_trip_and_are_discriminated() -> None:
    events = [
        RunEnd(run_id="r", status="failed", reason="boom", turns=2),
        ToolCallEnd(tool_call_id="c", name="t", is_error=True, content="x"),
        MessageEnd(message=UserMessage(content="hi")),
    ]
    for event in events:
        data = json.loads(event.model_dump_json())
        assert EventAdapter.validate_python(data) == event
    with pytest.raises(ValidationError):
        EventAdapter.validate_python({"type": "no_such_event"})


def test_event_schema_lists_every_event_type() -> None:
    schema = event_json_schema()
    types = set(schema["discriminator"]["mapping"])
    assert {
        "agent_start",
        "agent_end",
        "run_start",
        "run_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_delta",
        "message_end",
        "tool_call_start",
        "tool_call_update",
        "tool_call_end",
        "steering_applied",
        "follow_up_started",
        "error",
    } <= types


def test_rein_schema_events_cli_prints_the_schema() -> None:
    out = subprocess.run(
        [*REIN, "schema", "events"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == json.loads(json.dumps(event_json_schema()))


def test_core_imports_no_foreign_io_libraries() -> None:
    code = (
        "import sys, rein.harness, rein.harness.run.loop, rein.harness.agent, rein.harness.ports\n"
        "import rein.harness.tools, rein.harness.events, rein.harness.messages\n"
        "import pkgutil, importlib, rein.harness as h\n"
        "for m in pkgutil.iter_modules(h.__path__): importlib.import_module('rein.harness.' + m.name)\n"
        "bad = [m for m in ('pygls', 'lsprotocol', 'httpx', 'sqlite3', 'httpx_sse') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the core imported {out.stdout.strip()}"
