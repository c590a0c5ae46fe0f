"""clangd's file status (initializationOptions ``clangdFileStatus``): a file
it is building is work in progress until it says "idle". A header's change
rebuilds the files that include it after the header's own publish; with
only the quiet period to go by, a verdict could be taken in between, and
the gate's counterfactual question (the header's earlier text shown, then
its own again) left the including files' diagnostics of the earlier text:
a broken prototype's re-verdict passed (seen once under load)."""

from __future__ import annotations

import time
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from rein.disk.analyzer_client import analyzer_client
from rein.disk.analyzer_notices import CLANGD_FILE_STATUS
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import spec_of
from rein.disk.analyzers import AnalyzerPool
from rein.harness.analyzer_servers import PRESETS


def clangd_analyzer(root: Path) -> tuple[_Analyzer, Callable[[dict[str, str]], None]]:
    """An analyzer of the clangd preset (not started: it runs) and its
    client's handler of clangd's file status."""
    (clangd,) = [p for p in PRESETS if p.name == "clangd"]
    spec = spec_of(clangd)
    assert spec.initialization_options == {"clangdFileStatus": True}
    analyzer = _Analyzer(spec, "clangd", AnalyzerPool(root, [spec]))
    analyzer.alive = True
    status = analyzer_client(analyzer, "clangd").protocol.fm.features[CLANGD_FILE_STATUS]
    return analyzer, status


def test_a_file_clangd_builds_keeps_it_busy_until_it_says_idle(tmp_path: Path) -> None:
    analyzer, status = clangd_analyzer(tmp_path)
    analyzer.versions["main.c"] = 1  # open
    main = (tmp_path / "main.c").as_uri()
    later = time.monotonic() + 60  # the quiet period is long past
    assert analyzer.idle(0.15, later)
    status({"uri": main, "state": "parsing includes, running Build AST"})
    assert not analyzer.idle(0.15, later)
    assert analyzer.busy_until(0.15) is None  # not by time: by its word
    status({"uri": (tmp_path / "vec.h").as_uri(), "state": "idle"})
    assert not analyzer.idle(0.15, later)  # another file's idle ends nothing here
    # As pygls gives an unknown notification's params: a namedtuple.
    status(namedtuple("Object", ["uri", "state"])(main, "idle"))
    assert analyzer.idle(0.15, time.monotonic() + 60)
    # A file closed (deleted) while clangd built it is waited for no more.
    status({"uri": main, "state": "building preamble"})
    analyzer._forget("main.c")
    assert analyzer.idle(0.15, time.monotonic() + 60)


def test_a_status_that_comes_after_the_file_was_closed_ends_its_build(tmp_path: Path) -> None:
    """A file closed right after a change gets no status after its close:
    one already on its way ("file is queued") kept clangd busy for good
    (every wait ran to its bound)."""
    analyzer, status = clangd_analyzer(tmp_path)
    analyzer.versions["main.c"] = 2
    main = (tmp_path / "main.c").as_uri()
    status({"uri": main, "state": "parsing includes"})
    analyzer._forget("main.c")
    status({"uri": main, "state": "file is queued"})
    assert not analyzer.progress
    assert analyzer.idle(0.15, time.monotonic() + 60)


def test_a_path_clangd_spells_otherwise_is_the_same_file(tmp_path: Path) -> None:
    """clangd 14 leaves a colon in its URIs (``d:x%20y``), Python's as_uri
    quotes it (``d%3Ax%20y``): the close of a file it was building must
    end that build all the same."""
    analyzer, status = clangd_analyzer(tmp_path)
    (tmp_path / "d:x y").mkdir()
    analyzer.versions["d:x y/m.c"] = 1
    clangds = "file://" + quote(f"{tmp_path.resolve()}/d:x y/m.c", safe="/:")
    assert clangds != (tmp_path / "d:x y" / "m.c").as_uri()
    status({"uri": clangds, "state": "building AST"})
    assert not analyzer.idle(0.15, time.monotonic() + 60)
    analyzer._forget("d:x y/m.c")
    assert analyzer.idle(0.15, time.monotonic() + 60)
