"""The delta coalescer both hosts put in front of their senders: deltas of
one kind merged, a change of kind or any other event flushes first (order
kept), the timer flushes on its own, outside a loop nothing waits."""

from __future__ import annotations

import asyncio

from rein.harness.events import Event, MessageDelta, TurnStart
from rein.session.coalesce import DeltaCoalescer


def _shape(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.kind, e.delta) if isinstance(e, MessageDelta) else (e.type, "") for e in events]


async def test_deltas_of_one_kind_are_merged_until_another_event() -> None:
    out: list[Event] = []
    coalescer = DeltaCoalescer(out.append, interval_s=3600)
    for piece in ("Hel", "lo", " you"):
        coalescer(MessageDelta(kind="text", delta=piece))
    assert out == []
    coalescer(MessageDelta(kind="thinking", delta="hm"))
    coalescer(MessageDelta(kind="thinking", delta="m"))
    coalescer(TurnStart(turn=2))
    assert _shape(out) == [("text", "Hello you"), ("thinking", "hmm"), ("turn_start", "")]


async def test_tool_call_argument_deltas_are_not_merged() -> None:
    out: list[Event] = []
    coalescer = DeltaCoalescer(out.append, interval_s=3600)
    coalescer(MessageDelta(kind="text", delta="a"))
    coalescer(MessageDelta(kind="tool_call", delta='{"pa', tool_call_id="c1"))
    assert _shape(out) == [("text", "a"), ("tool_call", '{"pa')]


async def test_the_timer_flushes_pending_deltas() -> None:
    flushed = asyncio.Event()
    out: list[Event] = []

    def emit(event: Event) -> None:
        out.append(event)
        flushed.set()

    coalescer = DeltaCoalescer(emit, interval_s=0.001)
    coalescer(MessageDelta(kind="text", delta="a"))
    coalescer(MessageDelta(kind="text", delta="b"))
    await asyncio.wait_for(flushed.wait(), 5)
    assert _shape(out) == [("text", "ab")]


def test_outside_an_event_loop_every_delta_passes_at_once() -> None:
    out: list[Event] = []
    coalescer = DeltaCoalescer(out.append)
    coalescer(MessageDelta(kind="text", delta="a"))
    assert _shape(out) == [("text", "a")]
