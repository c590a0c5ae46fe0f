"""Which files the pool's whole-workspace snapshot holds for every analyzer
(``AnalyzerPool.in_whole_snapshot``): the analyzer gate judges a file
against the run-start snapshot, once a setting changed, only where it does
(rein.analysis.setting_changes). ruff has no workspace diagnostic mode: it
reports only the files start-up opens (the first ``maxFiles``)."""

from __future__ import annotations

from pathlib import Path

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool

SPECS = {spec.name: spec for spec in DEFAULT_ANALYZERS}


async def _pool(root: Path, names: list[str], **kw: int | bool) -> AnalyzerPool:
    pool = AnalyzerPool(root, [SPECS[n] for n in names], quiet_ms=0, **kw)  # type: ignore[arg-type]
    await pool.prepare()
    pool.analyzers = [_Analyzer(SPECS[n], n, pool) for n in names]
    return pool


async def test_ruff_holds_the_start_up_files_only_basedpyright_every_file(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("x = 1\n")
    both = await _pool(tmp_path, ["ruff", "basedpyright"], max_files=2, defer_workspace=False)
    assert not both.large
    assert [both.in_whole_snapshot(p) for p in ("a.py", "b.py", "c.py")] == [True, True, False]
    alone = await _pool(tmp_path, ["basedpyright"], max_files=2, defer_workspace=False)
    assert alone.in_whole_snapshot("c.py")
    large = await _pool(tmp_path, ["basedpyright"], workspace_max_files=2, defer_workspace=False)
    assert large.large and not large.in_whole_snapshot("a.py")
    deferred = await _pool(tmp_path, ["basedpyright"], defer_workspace=True)
    assert deferred.deferring and not deferred.in_whole_snapshot("a.py")
