"""A publish read after the analyzer's process exited (written before it
died, read after the exit was handled) is not its word: the crash cleared
what it had said, and a late publish put it back, so a snapshot showed a
dead analyzer's diagnostics as if it had looked (seen once in CI as
tests/e2e/test_analyzer_pool.py's restart-budget test failing)."""

from __future__ import annotations

from pathlib import Path

import anyio

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import spec_of
from rein.disk.analyzers import AnalyzerPool
from rein.harness.analyzer_servers import PRESETS


def test_a_publish_read_after_the_process_exited_is_dropped(tmp_path: Path) -> None:
    (ruff,) = [p for p in PRESETS if p.name == "ruff"]
    spec = spec_of(ruff)
    analyzer = _Analyzer(spec, "ruff", AnalyzerPool(tmp_path, [spec]))
    analyzer.alive = True
    analyzer.versions["app.py"] = 1
    publish = {
        "uri": (tmp_path / "app.py").as_uri(),
        "version": 1,
        "diagnostics": [
            {
                "range": {
                    "start": {"line": 0, "character": 6},
                    "end": {"line": 0, "character": 20},
                },
                "severity": 1,
                "code": "F821",
                "source": "Ruff",
                "message": "Undefined name `undefined_name`",
            }
        ],
    }
    analyzer.on_publish(publish)
    assert [d.code for d in analyzer.diagnostics["app.py"]] == ["F821"]
    # Its process exited (the pool's crash handling clears what it said).
    analyzer._stopping = True  # the pool is not told here: no restart
    anyio.run(analyzer.on_exit, -9)
    analyzer.diagnostics.clear()
    analyzer.on_publish(publish)
    assert analyzer.diagnostics == {}
