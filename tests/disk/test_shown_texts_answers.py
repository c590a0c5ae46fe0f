"""A verdict over a changed file and its importers, in a workspace checked
open file by open file, takes every importer's answer fresh: never an answer
given while the analyzers were shown the changed file as it was (the
command's baseline, the counterfactual question), nor one from before the
change (in-process, :class:`~tests.fakes.pull_analyzer.FileByFileServer`:
basedpyright's shape, which publishes the changed file at once and its
importers only when it gets to them, or when asked).

The merge's sympy bench (2026-12-06) passed the ``is_random`` command edit
with 12 importer lines broken: in open-files mode, a command's baseline is
taken with the changed file shown as it was (``AnalyzerPool.snapshot_with``)
and only the changed file was owed afterwards, so the verdict's wait ended
with its publish and took the importers' answers given with the earlier
text shown (clean) for theirs now."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rein.analysis.whole_snapshot import whole_snapshot
from rein.disk.analyzers import AnalyzerPool
from rein.harness.ports import DiagnosticsSnapshot, Mutation
from tests.fakes.pull_analyzer import FileByFileServer, pool_over_file_by_file

BEFORE = "def is_random(x):\n    return True\n"
AFTER = "def is_random_x(x):\n    return True\n"
USER = "from pkg.rv import is_random\n\nprint(is_random(1))\n"
BROKEN = '"is_random" is unknown import symbol'
#: A bound on each wait (the waits end on answers, not on time).
BOUND_S = 30.0


async def _pool(root: Path) -> tuple[AnalyzerPool, FileByFileServer]:
    """A large workspace (open files only) with ``pkg/rv.py`` and its
    importer ``pkg/user.py`` open in basedpyright's analyzer over the fake."""
    (root / "pkg").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/rv.py").write_text(BEFORE)
    (root / "pkg/user.py").write_text(USER)
    pool, analyzer, server = await pool_over_file_by_file(root)
    await pool.ensure_open(["pkg/rv.py"])
    assert "pkg/user.py" in analyzer.versions
    assert await pool.wait_idle(BOUND_S)
    return pool, server


def _said(snap: DiagnosticsSnapshot, path: str) -> list[str]:
    return [d.message for d in snap.diagnostics if d.path == path]


def _command(pool: AnalyzerPool, generation: int) -> None:
    """``sed -i`` renames ``is_random`` in ``pkg/rv.py`` (seen by the watcher)."""
    (pool.root / "pkg/rv.py").write_text(AFTER)
    pool.on_mutation(Mutation(generation, ("pkg/rv.py",), "external"))


async def test_the_verdict_after_a_commands_baseline_takes_the_importers_answers_now(
    tmp_path: Path,
) -> None:
    # Old: after the baseline (the earlier text shown, then the text now
    # shown again), only pkg/rv.py was owed: the verdict's wait ended with
    # its publish and took pkg/user.py's answer with the earlier text shown
    # (clean) for its answer now: passed, the importer broken.
    pool, _server = await _pool(tmp_path)
    _command(pool, 1)
    paths = ["pkg/rv.py", "pkg/user.py"]
    baseline = await pool.snapshot_with({"pkg/rv.py": BEFORE}, paths, BOUND_S)
    assert baseline is not None and not baseline.stale, baseline
    assert _said(baseline, "pkg/user.py") == []  # before the command
    verdict, settled = await whole_snapshot(pool, ["pkg/rv.py"], 1, BOUND_S, None, ["pkg/user.py"])
    assert settled and not verdict.stale, verdict.stale_reason
    assert _said(verdict, "pkg/user.py") == [BROKEN]


async def test_the_commands_baseline_asks_the_importers_with_the_earlier_text_shown(
    tmp_path: Path,
) -> None:
    # Old: the baseline's wait ended with the changed file's publish and
    # took the importer's answer from before the earlier text was shown:
    # here the one given after the command (broken), so its error was
    # pre-existing and never blocked.
    pool, server = await _pool(tmp_path)
    _command(pool, 1)
    await pool.snapshot_files(["pkg/user.py"], BOUND_S)  # asked after the command: broken
    asked = len(server.pulls)
    baseline = await pool.snapshot_with(
        {"pkg/rv.py": BEFORE}, ["pkg/rv.py", "pkg/user.py"], BOUND_S
    )
    assert baseline is not None and not baseline.stale, baseline
    assert _said(baseline, "pkg/user.py") == []
    user = (pool.root / "pkg/user.py").as_uri()
    assert user in server.pulls[asked:]


async def test_the_verdict_asks_the_importers_of_a_change_afresh(tmp_path: Path) -> None:
    # Old: the verdict on the whole (open-files) workspace waited for the
    # changed file's publish only, and took the importer's answer from
    # before the change (clean), basedpyright not having published it again.
    pool, _server = await _pool(tmp_path)
    _command(pool, 1)
    verdict, settled = await whole_snapshot(pool, ["pkg/rv.py"], 1, BOUND_S, None, ["pkg/user.py"])
    assert settled and not verdict.stale, verdict.stale_reason
    assert _said(verdict, "pkg/user.py") == [BROKEN]


async def test_a_change_seen_while_the_earlier_text_is_shown_makes_the_baseline_stale(
    tmp_path: Path,
) -> None:
    # Old: the watcher's change of pkg/rv.py, heard while its earlier text
    # was shown for the command's baseline, showed the analyzers its text
    # now; the importer's answer (broken) was taken as its baseline.
    pool, server = await _pool(tmp_path)
    (pool.root / "pkg/rv.py").write_text(AFTER)
    user = (pool.root / "pkg/user.py").as_uri()
    heard: list[str] = []

    def the_watcher_hears_it_now(uri: str) -> None:
        if uri == user and not heard:
            heard.append(uri)
            pool.on_mutation(Mutation(1, ("pkg/rv.py",), "external"))

    server.on_pull = the_watcher_hears_it_now
    baseline = await pool.snapshot_with(
        {"pkg/rv.py": BEFORE}, ["pkg/rv.py", "pkg/user.py"], BOUND_S
    )
    assert heard
    assert baseline is not None
    assert baseline.stale or _said(baseline, "pkg/user.py") == [], _said(baseline, "pkg/user.py")


async def test_a_publish_while_the_importers_question_is_out_does_not_answer_it(
    tmp_path: Path,
) -> None:
    """basedpyright checks in the background: a check of the importer begun
    with the command's text (before the earlier text was shown) publishes
    after the baseline's question. Old: that publish settled the file, and
    the baseline took "is_random is unknown import symbol" as there before
    the run (sympy's ``symbolic_multivariate_probability.py:12``, the
    first verdict of the ``is_random`` command edit, 3 runs of 4)."""
    pool, server = await _pool(tmp_path)
    analyzer = pool.analyzers[0]
    _command(pool, 1)
    user = (pool.root / "pkg/user.py").as_uri()
    asked, free = asyncio.Event(), asyncio.Event()

    def the_background_check_ends_now(uri: str) -> None:
        if uri == user and not asked.is_set():
            server.publish_now(user, on_disk=True)  # the command's text: broken
            asked.set()

    server.on_pull = the_background_check_ends_now
    server.hold = free
    baseline = asyncio.ensure_future(
        pool.snapshot_with({"pkg/rv.py": BEFORE}, ["pkg/rv.py", "pkg/user.py"], BOUND_S)
    )
    try:
        await asked.wait()
        assert "pkg/user.py" in analyzer.awaiting  # the question's answer is waited for
        assert not baseline.done()
    finally:
        server.hold = None
        free.set()  # the answers held are given, whatever was asserted
    snap = await baseline
    assert snap is not None and not snap.stale, snap
    assert _said(snap, "pkg/user.py") == []


async def test_the_importers_asked_are_shown_again_with_the_earlier_text_and_after_it(
    tmp_path: Path,
) -> None:
    # basedpyright keeps an error met in an importer's code while checking
    # another file with that importer until the importer is parsed again
    # (tests/e2e/test_shown_again.py, with the real server): each importer
    # asked is sent its text as a new version after the earlier text is
    # shown, and again after the text now is shown again.
    pool, server = await _pool(tmp_path)
    _command(pool, 1)
    user = (tmp_path / "pkg/user.py").as_uri()
    rv = (tmp_path / "pkg/rv.py").as_uri()
    server.sent.clear()
    baseline = await pool.snapshot_with(
        {"pkg/rv.py": BEFORE}, ["pkg/rv.py", "pkg/user.py"], BOUND_S
    )
    assert baseline is not None and not baseline.stale, baseline
    changes = [
        (p.text_document.uri, p.text_document.version, p.content_changes[-1].text)
        for method, p in server.sent
        if method == "textDocument/didChange"
    ]
    versions = [v for uri, v, _text in changes if uri == user]
    assert [(uri, text) for uri, _v, text in changes] == [
        (rv, BEFORE),
        (user, USER),
        (rv, AFTER),
        (user, USER),
    ]
    assert versions == sorted(set(versions))  # each a new version
