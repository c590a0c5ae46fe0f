"""``rein bench gates``: how long the analyzer gate waits after the analyzers'
last publishDiagnostics, next to the analyzers' own time.

A temporary copy of examples/project; real analyzers (ruff server and
basedpyright); N edits, each followed by a fresh-diagnostics verdict from the
DiagnosticsCoordinator (quiet period 150 ms).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.generations import MutationLog, TrackedWorkspace

__all__ = ["bench_gates"]


async def _measure(root: Path, edits: int, quiet_ms: int) -> dict[str, Any]:
    log = MutationLog()
    disk = DiskWorkspace(root)
    workspace = TrackedWorkspace(disk, log)
    coordinator: DiagnosticsCoordinator | None = None

    def changed(paths: list[str]) -> None:
        assert coordinator is not None
        coordinator.notify_diagnostics_changed(paths)

    pool = AnalyzerPool(root, on_diagnostics_changed=changed)
    coordinator = DiagnosticsCoordinator(pool, quiet_ms=quiet_ms, max_wait_ms=10_000)
    log.subscribe(coordinator.notify_mutation)
    log.subscribe(pool.on_mutation)
    delays: list[float] = []
    analyzer: list[float] = []
    gate: list[float] = []
    await pool.start()
    try:
        await pool.wait_settled(60)
        base = (root / "inventory.py").read_text()
        for i in range(edits):
            text = base + f"\n\nVALUE_{i} = {i}\n" + ("print(undefined_name)\n" if i % 2 else "")
            started = time.monotonic()
            mutation = await workspace.write_text("inventory.py", text)
            snap = await coordinator.snapshot(min_generation=mutation.generation)
            verdict = time.monotonic()
            last = pool.last_publish_at.get("inventory.py", verdict)
            delays.append((verdict - last) * 1000)
            analyzer.append((last - started) * 1000)
            gate.append((verdict - started) * 1000)
            assert not snap.stale
    finally:
        await pool.stop()
    return {
        "edits": edits,
        "analyzers": "+".join(pool.names()),
        "quiet_ms": quiet_ms,
        "verdict_delay_ms_p50": round(statistics.median(delays), 1),
        "verdict_delay_ms_max": round(max(delays), 1),
        "analyzer_ms_p50": round(statistics.median(analyzer), 1),
        "gate_ms_p50": round(statistics.median(gate), 1),
    }


def bench_gates(edits: int = 10, quiet_ms: int = 150) -> list[dict[str, Any]]:
    from rein.demo import examples_dir

    tmp = Path(tempfile.mkdtemp(prefix="rein-bench-gates-"))
    try:
        root = tmp / "project"
        shutil.copytree(examples_dir() / "project", root)
        return [anyio.run(_measure, root, edits, quiet_ms)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
