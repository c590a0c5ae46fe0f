"""Real basedpyright asked about a file while another is shown a different
text: its answer holds nothing of the texts before.

basedpyright records an error it meets in a file's code while checking
another file (inferring a return type through an import) with that file,
and reports it at the file's next check, even after the file the error came
from changed back. sympy's ``sed`` case: ``rv.py`` checked after the
command lazily met ``crv.py``'s ``from sympy.stats.rv import is_random``;
shown as before the command, ``crv.py``'s baseline still said
'"is_random" is unknown import symbol', so the break the command made there
was taken for an error it found and never blocked."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.file_checks import open_with_importers, snapshot_files, snapshot_files_with
from rein.disk.open_files import ensure_open
from tests.e2e.headless_gate import only_server

pytestmark = pytest.mark.e2e

BASEDPYRIGHT = DEFAULT_ANALYZERS[1]

#: ``pkg/a.py`` before the run: ``use`` infers its type through ``b.G.m``,
#: whose return type is ``f``'s, imported from here.
BEFORE = (
    "def f():\n    return 1\n\n\ndef use():\n    from pkg.b import G\n\n    return G().m() + 1\n"
)
#: After a command renamed ``f``: ``b.py``'s import of it is broken.
AFTER = BEFORE.replace("def f()", "def g()")
IMPORTER = "from pkg.a import f\n\n\nclass G:\n    def m(self):\n        return f()\n"
BROKEN = '"f" is unknown import symbol'


@asynccontextmanager
async def _started(pool: AnalyzerPool) -> AsyncIterator[AnalyzerPool]:
    """``pool`` started and done with its first analysis; stopped after."""
    await pool.start()
    try:
        assert await pool.wait_initial(60)
        yield pool
    finally:
        await pool.stop()


def _errors(snapshot, path: str) -> list[str]:
    return [d.message for d in snapshot.diagnostics if d.path == path and d.severity == 1]


def _package(root: Path, a: str) -> None:
    """``pkg/a.py`` as ``a``, and ``pkg/b.py`` importing ``f`` from it."""
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "a.py").write_text(a)
    (root / "pkg" / "b.py").write_text(IMPORTER)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0"\n')


@pytest.mark.parametrize("large", [True, False], ids=["open-files", "workspace"])
async def test_an_importer_asked_with_its_import_shown_as_before_has_none_of_the_errors_after(
    tmp_path: Path, large: bool
) -> None:
    _package(tmp_path, AFTER)
    # Open files only, as in a large workspace: nothing checked unasked (it
    # failed so before the fix); or the whole workspace, every file open and
    # checked (b.py's own check there comes after a.py's and takes what
    # a.py's left in it: this one passed before too).
    async with _started(
        AnalyzerPool(tmp_path, [BASEDPYRIGHT], workspace_max_files=1 if large else 1_000)
    ) as pool:
        assert pool.large == large
        # a.py checked as it is now, alone: its check meets b.py's import.
        await ensure_open(pool, ["pkg/a.py"], importers=False)
        now = await snapshot_files(pool, ["pkg/a.py"], 60)
        assert not now.stale
        await ensure_open(pool, ["pkg/b.py"], importers=False)
        before = await pool.snapshot_with({"pkg/a.py": BEFORE}, ["pkg/a.py", "pkg/b.py"], 60)
        assert before is not None and not before.stale, before
        assert _errors(before, "pkg/b.py") == []
        # Shown as it is again, b.py's break is there.
        after = await pool.snapshot_answered(["pkg/b.py"], 60)
        assert not after.stale
        assert _errors(after, "pkg/b.py") == [BROKEN]


async def test_an_importer_asked_again_after_other_texts_were_shown_has_none_of_their_errors(
    tmp_path: Path,
) -> None:
    _package(tmp_path, BEFORE)
    async with _started(AnalyzerPool(tmp_path, [BASEDPYRIGHT], workspace_max_files=1)) as pool:
        await ensure_open(pool, ["pkg/a.py", "pkg/b.py"], importers=False)
        assert _errors(await snapshot_files(pool, ["pkg/b.py", "pkg/a.py"], 60), "pkg/b.py") == []
        # Shown a text that breaks b.py: b.py asked first, a.py's check after
        # it meets b.py's import (broken then).
        shown = await snapshot_files_with(pool, {"pkg/a.py": AFTER}, ["pkg/b.py", "pkg/a.py"], 60)
        assert not shown.stale, shown.stale_reason
        assert _errors(shown, "pkg/b.py") == [BROKEN]
        now = await snapshot_files(pool, ["pkg/b.py"], 60)
        assert not now.stale
        assert _errors(now, "pkg/b.py") == []


@pytest.mark.parametrize("large", [True, False], ids=["open-files", "workspace"])
async def test_an_open_importer_not_asked_has_none_of_the_errors_of_the_texts_shown(
    tmp_path: Path, large: bool
) -> None:
    # django's probes: ``connection.py`` (open, importing the changed
    # ``functional.py``) was not among the files asked while the earlier
    # text was shown, and basedpyright checked it then all the same (open
    # files are checked in the background); its next answer held the
    # errors of both texts, and the one of the text shown blocked. Asked
    # file by file: open files only, or a cold verdict in a workspace whose
    # every file is open; each failed so before the fix.
    _package(tmp_path, BEFORE)
    async with _started(
        AnalyzerPool(tmp_path, [BASEDPYRIGHT], workspace_max_files=1 if large else 1_000)
    ) as pool:
        assert pool.large == large
        # a.py opened with its importers, as a change opens them.
        await open_with_importers(pool, ["pkg/a.py"])
        assert _errors(await snapshot_files(pool, ["pkg/b.py", "pkg/a.py"], 60), "pkg/b.py") == []
        shown = await snapshot_files_with(pool, {"pkg/a.py": AFTER}, ["pkg/a.py"], 60)
        assert not shown.stale, shown.stale_reason
        now = await snapshot_files(pool, ["pkg/b.py"], 60)
        assert not now.stale
        assert _errors(now, "pkg/b.py") == []


async def test_no_more_importers_are_sent_again_than_a_change_opens(tmp_path: Path) -> None:
    # A workspace under workspaceMaxFiles has every file open: every
    # importer re-sent was a re-check later waits waited for (review30:
    # click's core.py, 44). As many as a change opens (maxImporters).
    _package(tmp_path, BEFORE)
    (tmp_path / "pkg" / "c.py").write_text(IMPORTER)
    async with _started(
        AnalyzerPool(tmp_path, [BASEDPYRIGHT], workspace_max_files=1_000, max_importers=1)
    ) as pool:
        [server] = pool.analyzers
        assert {"pkg/b.py", "pkg/c.py"} <= set(server.versions)  # every file open
        assert await open_with_importers(pool, ["pkg/a.py"]) == ["pkg/b.py"]
        await snapshot_files(pool, ["pkg/a.py"], 60)
        before = dict(server.versions)
        shown = await snapshot_files_with(pool, {"pkg/a.py": AFTER}, ["pkg/a.py"], 60)
        assert not shown.stale, shown.stale_reason
        sent_again = {p for p in ("pkg/b.py", "pkg/c.py") if server.versions[p] != before[p]}
        assert sent_again == {"pkg/b.py"}


async def test_a_server_that_only_publishes_is_not_shown_an_asked_file_again(
    tmp_path: Path,
) -> None:
    # clangd says nothing of a text it is sent again: shown again, b.c's
    # version stayed owed, the counterfactual waited out its whole bound and
    # answered nothing, and the next wait ran to the owed limit (review29).
    (tmp_path / "a.c").write_text("int f(void) { return 1; }\n")
    (tmp_path / "b.c").write_text("int g(void) { return undefined_x; }\n")
    (tmp_path / "compile_commands.json").write_text(
        json.dumps(
            [
                {
                    "directory": str(tmp_path),
                    "file": str(tmp_path / u),
                    "arguments": ["cc", "-c", u],
                }
                for u in ("a.c", "b.c")
            ]
        )
    )
    config = load_config({"gates": {"analyzer": {"servers": only_server("clangd")}}})
    async with _started(
        AnalyzerPool(tmp_path, workspace_specs(tmp_path, config.gates.analyzer))
    ) as pool:
        await ensure_open(pool, ["a.c", "b.c"], importers=False)
        assert await pool.wait_idle(60), pool.pending()
        shown = await pool.snapshot_with({"a.c": "int f(void) { return 2; }\n"}, ["b.c"], 60)
        assert shown is not None and not shown.stale, shown
        assert [d.message for d in shown.diagnostics] == [
            "Use of undeclared identifier 'undefined_x'"
        ]
        assert pool.pending() == []
