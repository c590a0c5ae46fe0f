"""``rein bench lsp --sessions N --turns T`` runs (at tiny sizes): every
session completes over real HTTP against the mock server, every event
arrives with gap-free seq, and the server holds one HTTP client."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rein.bench.lsp import _load

pytestmark = pytest.mark.e2e


async def test_the_load_bench_runs_sessions_at_once_with_gap_free_seq(tmp_path: Path) -> None:
    row = await asyncio.wait_for(_load(tmp_path, sessions=3, turns=4, steers=10), 120)
    assert row["completed"] == 3, row["error"]
    assert row["seq_gap_free"] is True
    assert row["turns_total"] >= 3 * 4 + 3
    assert row["events"] > row["turns_total"]
    assert row["http_clients"] == 1 and row["progress_tokens"] == 0
    assert row["steer_rtt_ms_p99"] is not None and row["idle_steer_rtt_ms_p99"] is not None
    assert row["rss_after_mb"] > 0
