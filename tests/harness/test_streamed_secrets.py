"""Streamed tool output never carries a secret split in two (issue 30,
review of item 6): output streams by size as well as by line, so a key can
arrive in two pieces, and a 16 KB event bound can fall inside one. The
redactor sees each key whole: what could be the start of a key waits for
the next piece (``redaction.safe_cut``), and each piece is redacted before
it is cut into events."""

from __future__ import annotations

import pytest

from rein.harness import Agent
from rein.harness.calls.tool_updates import MAX_UPDATE_CHARS, ToolUpdates
from rein.harness.events import Event, ToolCallUpdate
from rein.harness.redaction import REDACTED, REDACTOR, Redactor, safe_cut
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.tools import EchoArgs, FunctionTool

KEY = "sk-proj-" + "A1b2C3d4" * 5
HELD = "hunter2-held-value-0123"


@pytest.fixture
def held_value() -> object:
    REDACTOR.remember(HELD)
    yield HELD
    REDACTOR.forget_all()


def streamed(pieces: list[str]) -> list[str]:
    events: list[Event] = []
    updates = ToolUpdates(events.append, "call-1", "run_command")
    for piece in pieces:
        updates(piece)
    updates.finish()
    return [e.text for e in events if isinstance(e, ToolCallUpdate) and e.kind == "output"]


def leaks(texts: list[str], secret: str) -> list[str]:
    """The events that hold 8 or more characters of ``secret`` in a row."""
    parts = {secret[i : i + 8] for i in range(len(secret) - 7)}
    return [t for t in texts if any(p in t for p in parts)]


def test_a_key_across_the_event_size_bound_is_redacted() -> None:
    # The review's reproduction: one update whose key straddles 16,384.
    text = "x" * (MAX_UPDATE_CHARS - 10) + " " + KEY + " tail\n"
    out = streamed([text])
    assert leaks(out, KEY) == []
    assert "".join(out) == "x" * (MAX_UPDATE_CHARS - 10) + f" {REDACTED} tail\n"
    assert all(len(t) <= MAX_UPDATE_CHARS for t in out)


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param(KEY, id="key-shape"),
        pytest.param(HELD, id="held-value"),
        pytest.param("Bearer abcdefghijklmnopqrstuvwxyz012345", id="bearer"),
    ],
)
@pytest.mark.usefixtures("held_value")
def test_a_secret_split_between_two_pieces_at_any_point_is_redacted(secret: str) -> None:
    line = f"token: {secret} end\n"
    for cut in range(1, len(line)):
        out = streamed([line[:cut], line[cut:]])
        token = secret.split()[-1]
        assert leaks(out, token) == [], (cut, out)
        assert "".join(out) == REDACTOR.redact(line), (cut, out)


def test_a_line_is_not_held_back() -> None:
    # Whole lines go out as they come: nothing waits for the call's end.
    events: list[Event] = []
    updates = ToolUpdates(events.append, "call-1", "run_command")
    updates("collected 3 items\n")
    assert [e.text for e in events if isinstance(e, ToolCallUpdate)] == ["collected 3 items\n"]


def test_a_long_word_without_a_key_is_not_held_whole() -> None:
    events: list[Event] = []
    updates = ToolUpdates(events.append, "call-1", "run_command")
    updates("y" * 100_000)
    sent = sum(len(e.text) for e in events if isinstance(e, ToolCallUpdate))
    assert sent >= 100_000 - 4096


def test_safe_cut_never_falls_inside_a_secret() -> None:
    r = Redactor()
    text = "a b " + KEY
    assert safe_cut(text, redactor=r) == 4  # the key may still be arriving
    assert safe_cut(text + "\n", redactor=r) == len(text) + 1
    assert safe_cut("auth: Bearer ", redactor=r) == len("auth: ")
    long = "z" * 10_000 + KEY[:12]
    assert safe_cut(long, hold=100, redactor=r) == len(long) - 100


async def test_a_tools_streamed_key_split_across_updates_never_reaches_an_event() -> None:
    # Through the loop: the tool sends the key in two updates, with no
    # newline between, as run_command's size flush does.
    def chatty(_args: EchoArgs, ctx: object) -> str:
        update = ctx.update  # type: ignore[attr-defined]
        update("progress " + KEY[:20])
        update(KEY[20:] + " done")
        return "ok"

    model = ReplayModel(
        [{"tool_calls": [{"name": "chatty", "arguments": {"text": ""}}]}, {"text": "done"}]
    )
    agent = Agent(model, tools=[FunctionTool("chatty", chatty)])
    events = EventLog()
    agent.subscribe(events)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    output = [u.text for u in events.of("tool_call_update") if u.kind == "output"]
    assert leaks(output, KEY) == []
    assert "".join(output) == f"progress {REDACTED} done"
