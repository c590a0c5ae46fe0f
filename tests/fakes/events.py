"""Event listeners that keep a run's events, and a check of their nesting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel

from rein.harness.events import Event


class EventLog:
    """A listener that keeps every event; helpers to query them."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, type_: str) -> list[Any]:
        return [e for e in self.events if e.type == type_]

    def gate_results(self, gate: str) -> list[Any]:
        """The ``gate_result`` events of one gate, in order."""
        return [e for e in self.of("gate_result") if e.gate == gate]


class WaitingEventLog(EventLog):
    """An EventLog a test can wait on: ``wait_for(predicate)`` returns once
    ``predicate(events)`` holds, failing after ``limit_s``."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = anyio.Event()

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(
        self, predicate: Callable[[list[Event]], bool], limit_s: float = 5.0
    ) -> None:
        with anyio.fail_after(limit_s):
            while not predicate(self.events):
                await self._changed.wait()


def assert_well_formed(types: Sequence[str]) -> None:
    """Every *_start has its *_end, properly nested for agent/run/turn/message."""
    open_counts: dict[str, int] = {}
    ends = {"gate_result": "gate_end"}
    for t in (ends.get(t, t) for t in types):
        if t.endswith("_start") and t != "follow_up_started":
            key = t[: -len("_start")]
            open_counts[key] = open_counts.get(key, 0) + 1
        elif t.endswith("_end"):
            key = t[: -len("_end")]
            assert open_counts.get(key, 0) > 0, f"{t} without a matching start in {types}"
            open_counts[key] -= 1
    assert all(v == 0 for v in open_counts.values()), f"unclosed: {open_counts} in {types}"
