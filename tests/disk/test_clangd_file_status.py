"""clangd's file status (initializationOptions ``clangdFileStatus``): a file
it is building is work in progress until it says "idle". A header's change
rebuilds the files that include it after the header's own publish; with
only the quiet period to go by, a verdict could be taken in between, and
the gate's counterfactual question (the header's earlier text shown, then
its own again) left the including files' diagnostics of the earlier text:
a broken prototype's re-verdict passed (seen once under load)."""

from __future__ import annotations

import time
from pathlib import Path

from rein.disk.analyzer_client import analyzer_client
from rein.disk.analyzer_notices import CLANGD_FILE_STATUS
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import spec_of
from rein.disk.analyzers import AnalyzerPool
from rein.harness.analyzer_servers import PRESETS


def test_a_file_clangd_builds_keeps_it_busy_until_it_says_idle(tmp_path: Path) -> None:
    (clangd,) = [p for p in PRESETS if p.name == "clangd"]
    spec = spec_of(clangd)
    assert spec.initialization_options == {"clangdFileStatus": True}
    pool = AnalyzerPool(tmp_path, [spec])
    analyzer = _Analyzer(spec, "clangd", pool)
    analyzer.alive = True
    status = analyzer_client(analyzer, "clangd").protocol.fm.features[CLANGD_FILE_STATUS]
    main = (tmp_path / "main.c").as_uri()
    later = time.monotonic() + 60  # the quiet period is long past
    assert analyzer.idle(0.15, later)
    status({"uri": main, "state": "parsing includes, running Build AST"})
    assert not analyzer.idle(0.15, later)
    assert analyzer.busy_until(0.15) is None  # not by time: by its word
    status({"uri": (tmp_path / "vec.h").as_uri(), "state": "idle"})
    assert not analyzer.idle(0.15, later)  # another file's idle ends nothing here
    status({"uri": main, "state": "idle"})
    assert analyzer.idle(0.15, time.monotonic() + 60)
    # A file closed (deleted) while clangd built it is waited for no more.
    status({"uri": main, "state": "building preamble"})
    analyzer._forget("main.c")
    assert analyzer.idle(0.15, time.monotonic() + 60)
