"""``rein bench checkpoints``: what capturing checkpoints adds to an edit.

A temporary folder on disk and one file of about ``size_kb`` KB of source,
rewritten ``edits`` times through the headless workspace (an atomic write),
once without checkpoints and once with a capture into a real
``checkpoints.db``: per edit, the median and 90th percentile in milliseconds
and the difference. A warm-up pass comes first (the first fsyncs of a new
folder are slow).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from rein.checkpoints.capture import CheckpointCapture
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.events import RunStart
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.run.run_record import RunRecord, recording
from rein.store.checkpoints import SqliteCheckpointStore

__all__ = ["bench_checkpoints"]


def _source(size_kb: int) -> str:
    lines: list[str] = []
    i = 0
    while sum(len(line) for line in lines) < size_kb * 1024:
        lines.append(f"def f{i}(x):\n    return x * {i}\n\n")
        i += 1
    return "".join(lines)


async def _edits(capture: bool, edits: int, source: str) -> list[float]:
    with tempfile.TemporaryDirectory() as ws, tempfile.TemporaryDirectory() as storage:
        (Path(ws) / "m.py").write_text(source)
        log = MutationLog()
        workspace = TrackedWorkspace(DiskWorkspace(ws), log)
        store = SqliteCheckpointStore.open(storage) if capture else None
        if store is not None:
            capturing = CheckpointCapture(store, workspace, "ses_bench", mutations=log)
            capturing.attach()
            capturing.on_event(RunStart(run_id="run_bench", prompt="bench"))
        record = RunRecord(run_id="run_bench")
        record.turn = 1
        times: list[float] = []
        try:
            with recording(record):
                for i in range(edits):
                    started = time.perf_counter()
                    await workspace.write_text("m.py", f"{source}# edit {i}\n")
                    times.append(time.perf_counter() - started)
        finally:
            if store is not None:
                store.close()
        return times


def _row(name: str, times: list[float]) -> dict[str, Any]:
    ordered = sorted(times)
    return {
        "checkpoints": name,
        "edits": len(times),
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p90_ms": round(ordered[int(len(ordered) * 0.9)] * 1000, 3),
    }


def bench_checkpoints(edits: int = 300, size_kb: int = 9) -> list[dict[str, Any]]:
    source = _source(size_kb)

    async def main() -> list[dict[str, Any]]:
        await _edits(False, 20, source)  # warm-up
        off = _row("off", await _edits(False, edits, source))
        on = _row("on", await _edits(True, edits, source))
        off["added_median_ms"] = 0.0
        on["added_median_ms"] = round(on["median_ms"] - off["median_ms"], 3)
        return [off, on]

    return anyio.run(main)
