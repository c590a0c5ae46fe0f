"""``rein bench checkpoints`` measures real edits with and without a
capture into a real checkpoints.db (the figure in docs/performance.md)."""

from __future__ import annotations

import json
import subprocess

from rein.bench.checkpoints import bench_checkpoints
from tests.forkserver import REIN


def test_the_bench_times_edits_without_and_with_checkpoints() -> None:
    off, on = bench_checkpoints(edits=5, size_kb=2)
    assert (off["checkpoints"], on["checkpoints"]) == ("off", "on")
    assert off["edits"] == on["edits"] == 5
    assert 0 < off["median_ms"] <= off["p90_ms"]
    assert 0 < on["median_ms"] <= on["p90_ms"]
    assert on["added_median_ms"] == round(on["median_ms"] - off["median_ms"], 3)


def test_rein_bench_checkpoints_prints_json_rows() -> None:
    out = subprocess.run(
        [*REIN, "bench", "checkpoints", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["checkpoints"] for r in rows] == ["off", "on"]
