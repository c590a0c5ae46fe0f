"""``rein bench``: measured costs of the harness. Figures go to docs/performance.md.

``core``: N scripted turns, each one ``read_file`` call returning a fixed
2,000-character string at once, events on and one subscriber. Each N runs in
a fresh interpreter so peak RSS belongs to that N alone.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio

from rein.harness import Agent, HarnessConfig
from rein.harness.ports import ModelDelta, ModelRequest
from rein.providers.replay import ReplayModel

__all__ = ["CORE_SIZES", "bench_core", "bench_core_one"]

CORE_SIZES = (50, 200, 1000)


class _TimedModel:
    """Wraps a model and stamps the start of every model call."""

    def __init__(self, inner: ReplayModel) -> None:
        self.inner = inner
        self.stamps: list[float] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.stamps.append(time.perf_counter())
        return self.inner.stream(request)


def bench_core_one(n: int, features: bool = False) -> dict[str, Any]:
    """One run of ``n`` tool turns. ``features``: with the Agent API's
    optional parts switched on (an external steering source and probe, an
    async listener, the idle watchdog), to show they cost nothing per turn."""
    from rein.bench.tools import FixedReadTool

    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"f{i}.py"}}]} for i in range(n)
    ]
    turns.append({"text": "done"})
    model = _TimedModel(ReplayModel(turns, record=False))
    agent = Agent(
        model,
        tools=[FixedReadTool()],
        config=HarnessConfig(
            max_model_turns_per_run=n + 1, run_idle_timeout_ms=900_000 if features else 0
        ),
    )
    count = 0

    def listener(event: object) -> None:
        nonlocal count
        count += 1

    agent.subscribe(listener)
    if features:

        async def inbox() -> list[str]:
            return []

        async def probe() -> bool:
            return False

        async def async_listener(event: object) -> None:
            return None

        agent.external_steering_source = inbox
        agent.external_steering_probe = probe
        agent.subscribe(async_listener)

    async def main() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        result = await agent.prompt("benchmark")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        assert result.status == "completed", result.error
        return elapsed, cpu

    wall, cpu = anyio.run(main)
    gaps = [b - a for a, b in zip(model.stamps, model.stamps[1:], strict=False)]
    window = min(50, len(gaps))
    return {
        "n": n,
        "features": features,
        "us_per_turn": round(wall / n * 1e6, 2),
        # CPU time: what the harness costs, less swayed by a busy machine.
        "cpu_us_per_turn": round(cpu / n * 1e6, 2),
        "early_gap_us": round(statistics.median(gaps[:window]) * 1e6, 2),
        "late_gap_us": round(statistics.median(gaps[-window:]) * 1e6, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "events": count,
    }


def bench_core(sizes: tuple[int, ...] = CORE_SIZES) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        for spec in (str(n), f"{n}+features"):
            out = subprocess.run(
                [sys.executable, "-m", "rein", "bench", "core-one", spec],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            rows.append(json.loads(out))
    return rows
