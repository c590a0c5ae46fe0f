"""The providers benchmark runs end to end (small, so it stays fast)."""

from __future__ import annotations

import json

import pytest

from rein.providers.bench import GOAL_CHUNKS_PER_S, bench_providers


def test_bench_providers_measures_both_providers(capsys: pytest.CaptureFixture[str]) -> None:
    rows = bench_providers(True, chunks=300, repeats=1)
    assert [r["provider"] for r in rows] == ["openai", "anthropic"]
    assert all(r["chunks"] == 300 and r["chunks_per_s"] > 0 for r in rows)
    assert all(r["goal"] == GOAL_CHUNKS_PER_S for r in rows)
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == rows
