"""The providers benchmark runs end to end (small, so it stays fast)."""

from __future__ import annotations

import json

import pytest

from rein.bench.providers import GOAL_CHUNKS_PER_S, bench_providers
from tests.providers.conftest import _no_real_keys  # noqa: F401  (autouse here, as in tests/providers)


def test_bench_providers_measures_both_providers(capsys: pytest.CaptureFixture[str]) -> None:
    rows = bench_providers(True, chunks=300, repeats=1)
    assert [r["provider"] for r in rows] == ["openai", "anthropic"]
    assert all(r["chunks"] == 300 and r["chunks_per_s"] > 0 for r in rows)
    assert all(r["goal"] == GOAL_CHUNKS_PER_S for r in rows)
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == rows


def test_bench_core_runs_the_tool_the_tests_use(monkeypatch: pytest.MonkeyPatch) -> None:
    from rein.bench.core import bench_core_one
    from rein.bench.tools import FixedReadTool
    from tests import fakes

    assert fakes.FixedReadTool is FixedReadTool  # one definition
    paths: list[str] = []
    execute = FixedReadTool.execute

    async def counting(self, args, ctx):  # type: ignore[no-untyped-def]
        paths.append(args.path)
        return await execute(self, args, ctx)

    monkeypatch.setattr(FixedReadTool, "execute", counting)
    row = bench_core_one(3)
    assert row["n"] == 3
    assert paths == ["f0.py", "f1.py", "f2.py"]
