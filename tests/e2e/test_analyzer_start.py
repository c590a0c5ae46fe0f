"""How the real basedpyright is started: it asks for its settings once
(``workspace/configuration`` at ``initialized``) and is not told them
again, which made it set its workspace up a second time; the settings it
asked for are the ones it checks with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rein.disk import analyzer_server
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool

pytestmark = pytest.mark.e2e

BASEDPYRIGHT = [s for s in DEFAULT_ANALYZERS if s.name == "basedpyright"]


async def test_basedpyright_sets_its_workspace_up_once_with_the_settings_it_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Untyped: basedpyright's own default mode ("recommended") reports the
    # missing annotations, the "standard" mode Rein asks for does not.
    (tmp_path / "untyped.py").write_text("def f(x):\n    return x\n")
    asked: list[list[str | None]] = []
    answer = analyzer_server.configuration_answer

    def answering(settings: dict[str, Any], params: Any) -> list[Any]:
        asked.append([item.section for item in params.items])
        return answer(settings, params)

    monkeypatch.setattr(analyzer_server, "configuration_answer", answering)
    async with AnalyzerPool(tmp_path, BASEDPYRIGHT) as pool:
        assert await pool.wait_settled(60)
        snap = await pool.snapshot(["untyped.py"])
    assert not snap.stale
    assert snap.diagnostics == ()
    # One set-up asks for each section once (twice each before).
    assert asked == [["python"], ["basedpyright"]]
