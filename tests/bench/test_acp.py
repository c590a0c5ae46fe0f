"""``rein bench acp`` runs end to end (one sample of each command, so it
stays fast) and prints what it measured."""

from __future__ import annotations

import json
import subprocess

import pytest

from rein.bench.acp import _p95, bench_acp
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e


def test_the_bench_times_both_commands_to_their_initialize_result() -> None:
    [row] = bench_acp(1)
    assert row["samples"] == 1
    assert row["acp_init_ms_p50"] > 0 and row["lsp_init_ms_p50"] > 0
    assert row["acp_init_ms_p95"] == row["acp_init_ms_p50"]  # one sample
    assert row["ratio_p50"] == pytest.approx(
        row["acp_init_ms_p50"] / row["lsp_init_ms_p50"], abs=0.01
    )
    assert row["sdk_floor_ms_p50"] > 0


def test_the_cli_prints_one_json_row() -> None:
    out = subprocess.run(
        [*REIN, "bench", "acp", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    [row] = [json.loads(line) for line in out.splitlines()]
    assert set(row) == {
        "samples",
        "acp_init_ms_p50",
        "acp_init_ms_p95",
        "lsp_init_ms_p50",
        "lsp_init_ms_p95",
        "ratio_p50",
        "sdk_floor_ms_p50",
        "ratio_to_floor_p50",
    }


def test_p95_is_the_nearest_rank() -> None:
    assert _p95([float(v) for v in range(1, 21)]) == 19.0
    assert _p95([3.0, 1.0, 2.0]) == 3.0


def test_no_samples_is_an_error() -> None:
    with pytest.raises(ValueError, match="samples must be at least 1, got 0"):
        bench_acp(0)
