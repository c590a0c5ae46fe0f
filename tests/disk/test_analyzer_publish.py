"""What the pool keeps of an analyzer's publishDiagnostics (in process, no
analyzer runs): an unchanged publish keeps the same objects, which the
analyzer gate counts on to skip files nothing changed in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool


def _publish(root: Path, message: str, version: int | None = None) -> dict[str, Any]:
    return {
        "uri": (root / "pkg" / "m.py").as_uri(),
        "version": version,
        "diagnostics": [
            {
                "range": {
                    "start": {"line": 2, "character": 4},
                    "end": {"line": 2, "character": 9},
                },
                "severity": 1,
                "code": "reportUndefinedVariable",
                "source": "basedpyright",
                "message": message,
            }
        ],
    }


def test_an_unchanged_publish_keeps_the_same_diagnostics_and_a_changed_one_replaces_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    pool = AnalyzerPool(tmp_path)
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)

    analyzer.on_publish(_publish(tmp_path, '"nmae" is not defined'))
    first = analyzer.diagnostics["pkg/m.py"]
    assert [(d.path, d.line, d.message) for d in first] == [
        ("pkg/m.py", 2, '"nmae" is not defined')
    ]

    analyzer.on_publish(_publish(tmp_path, '"nmae" is not defined'))
    again = analyzer.diagnostics["pkg/m.py"]
    assert again is first

    analyzer.on_publish(_publish(tmp_path, '"name2" is not defined'))
    changed = analyzer.diagnostics["pkg/m.py"]
    assert [d.message for d in changed] == ['"name2" is not defined']

    # after the file's diagnostics were dropped, the same publish is converted again
    analyzer.diagnostics.clear()
    analyzer.on_publish(_publish(tmp_path, '"name2" is not defined'))
    assert [d.message for d in analyzer.diagnostics["pkg/m.py"]] == ['"name2" is not defined']


def test_a_uri_outside_the_workspace_is_not_the_pools_and_stays_so(tmp_path: Path) -> None:
    pool = AnalyzerPool(tmp_path / "ws")
    outside = (tmp_path / "other.py").as_uri()
    assert pool.relative(outside) is None
    assert pool.relative(outside) is None
    inside = (tmp_path / "ws" / "a" / "b.py").as_uri()
    assert pool.relative(inside) == "a/b.py"
    assert pool.relative("untitled:Untitled-1") is None
