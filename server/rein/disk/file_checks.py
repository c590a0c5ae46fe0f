"""Diagnostics of a few files while the analyzers still analyse the whole
workspace: a cold session's first change.

basedpyright in ``diagnosticMode: workspace`` analyses every file before it
says it is done (:meth:`~rein.disk.analyzers.AnalyzerPool.wait_idle`): on a
cold start that takes far longer than the command line's check of the
changed files and their importers. It publishes its diagnostics, but it
answers a pull of one file (``textDocument/diagnostic``) too, by analysing
that file then, between two passes of its workspace analysis: so a few
files' diagnostics can be had without waiting for the rest, as in a
workspace analysed file by file.

:func:`open_with_importers` opens files and the files that import them (the
pool's import scan, built on first use in a workspace analysed as a whole
too) in every analyzer that owns them; :func:`wait_files` asks every analyzer
for those files' diagnostics afresh and waits for each answer, asking again
while an analyzer answered without having analysed the file (an analyzer
with a workspace mode answers without a result id while it does not know
the file yet: its workspace is still being set up). Only analyzers
configured to answer pulls can do this; with another one the pool cannot
tell (``False``).

A command's change (seen after it happened) is judged the same way: every
file's text is read before the command runs (:func:`read_texts`), and the
changed files and their importers are asked for with the analyzers shown
the changed files' earlier texts (:func:`snapshot_files_with`), then as
they are now. Meanwhile the pool marks those texts as shown
(:class:`EarlierTexts`): the model's next turn may ask the same servers to
navigate (the baseline is taken in the background), and they would answer
on the earlier texts (references at the old lines; a rename refused, the
file having changed since); the pool navigator waits for them to be shown
as they are again.

basedpyright ends its progress when it answered such a pull, though its
workspace analysis goes on at its next pass: it is not idle for
:data:`~rein.disk.pull_answers.PULL_GRACE_S` after the answer, or the
run-start snapshot would be taken in that gap, before the workspace was
analysed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.file_presence import FilePresence
from rein.disk.import_roots import outside_the_scan, unmodelled_roots
from rein.disk.importers import ImportIndex
from rein.disk.prior_texts import TextMemory
from rein.disk.python_environment import PythonEnvironment
from rein.disk.ruff_extends import RuffExtends
from rein.harness.gating.analyzer_inputs import AnalyzerInput, analyzer_input, custom_analyzers
from rein.harness.ports import DiagnosticsSnapshot

__all__ = [
    "ASK_AGAIN_S",
    "EarlierTexts",
    "answers_per_file",
    "never_there",
    "open_with_importers",
    "pull_again",
    "read_texts",
    "show_asked_again",
    "snapshot_files",
    "snapshot_files_with",
    "wait_files",
]

#: An analyzer that answered without knowing a file is asked again after this.
ASK_AGAIN_S = 0.2


class EarlierTexts:
    """Whether the analyzers are being shown files' earlier texts (a
    command's baseline: :func:`snapshot_files_with`), and a wait until they
    are not."""

    def __init__(self) -> None:
        self._showing = 0
        self._cleared = asyncio.Event()
        self._cleared.set()

    @property
    def shown(self) -> bool:
        return self._showing > 0

    @contextlib.contextmanager
    def showing(self) -> Iterator[None]:
        """Marked as shown while inside (nested: until the last one ends)."""
        self._showing += 1
        self._cleared.clear()
        try:
            yield
        finally:
            self._showing -= 1
            if not self._showing:
                self._cleared.set()

    async def gone(self, timeout_s: float) -> bool:
        """Wait, at most ``timeout_s``, until no earlier text is shown; False
        when one still is."""
        if self._showing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._cleared.wait(), timeout_s)
        return not self._showing


class AnalyzerPool(Protocol):
    """What these need of :class:`~rein.disk.analyzers.AnalyzerPool`."""

    analyzers: list[_Analyzer]
    imports: ImportIndex | None
    cold_imports: ImportIndex | None
    existing: set[str]
    texts: TextMemory | None
    large: bool
    requested: list[str]
    max_importers: int
    importers_unopened: list[str]
    shown_earlier: EarlierTexts
    presence: FilePresence
    ruff_extends: RuffExtends
    python_env: PythonEnvironment
    specs: list[AnalyzerSpec]

    def read(self, path: str) -> str | None: ...
    def skipped(self, path: str) -> bool: ...
    def covers(self, path: str) -> bool: ...
    async def check_environment(self) -> None: ...
    async def started(self) -> None: ...
    def activity(self) -> asyncio.Event: ...
    async def wait_idle(self, timeout_s: float) -> bool: ...
    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot: ...


def answers_per_file(pool: AnalyzerPool) -> bool:
    """Every running analyzer is configured to answer pulls (``diagnostics:
    "pull"``), analysing the file then (not tsserver, whose answer waits for
    its project), and offers them (its ``diagnosticProvider``) or has a
    whole-workspace mode (basedpyright answers a pull though it publishes in
    workspace mode and registers the method only later). A server that
    offers no pull (clangd, gopls) left every question to its bound (120 s
    each)."""
    alive = [a for a in pool.analyzers if a.alive]
    return bool(alive) and all(
        a.spec.pull and not a.spec.tsserver and (a.pull or a.spec.diagnostic_mode_setting)
        for a in alive
    )


def _index(pool: AnalyzerPool) -> ImportIndex:
    if pool.imports is not None:
        return pool.imports
    if pool.cold_imports is None:
        pool.cold_imports = ImportIndex(sorted(pool.existing), pool.read)
    return pool.cold_imports


async def open_with_importers(pool: AnalyzerPool, paths: Sequence[str]) -> list[str]:
    """Open ``paths`` and their importers (at most ``max_importers`` each;
    those past it are not opened but listed in ``importers_unopened``) in every analyzer that owns them. Returns
    the importers, not ``paths`` themselves, in order: those a started
    analyzer covers (a Go file's importers while gopls is not found are
    nobody's to check)."""
    await pool.started()
    index = _index(pool)
    if not index.built:
        await asyncio.to_thread(index.build)  # reads every file: off the event loop
    roots = await asyncio.to_thread(pool.python_env.roots) or ()
    importers: list[str] = []
    for path in paths:
        if pool.skipped(path) or pool.read(path) is None:
            continue
        every = index.importers(path, sys.maxsize, roots)
        for other in every[: pool.max_importers]:
            if other not in paths and other not in importers and pool.covers(other):
                importers.append(other)
        for left in every[pool.max_importers :]:
            # Not opened: owed to later rounds (the verdict says it is partial).
            if left not in paths and left not in pool.importers_unopened:
                pool.importers_unopened.append(left)
    for target in [*paths, *importers]:
        if pool.skipped(target) or pool.read(target) is None:
            continue
        if target not in pool.requested:
            pool.requested.append(target)
        for analyzer in pool.analyzers:
            if analyzer.alive and analyzer.owns(target) and target not in analyzer.versions:
                analyzer.open(target)
    return importers


def analyses_open_files_only(pool: AnalyzerPool) -> bool:
    """The workspace is past ``workspace_max_files``: basedpyright checks
    the open files only (:class:`~rein.analysis.closure.OpenFilesOnly`)."""
    return pool.large


async def importer_closure(pool: AnalyzerPool, paths: Sequence[str]) -> set[str] | None:
    """``paths`` and every file whose analysis may depend on them (their
    importers, transitively: :meth:`ImportIndex.closure`); None when that
    cannot be known from the import scan: a changed path the analyzers read
    is no Python module (a setting, a stub marker, an environment's or
    another language's file may change how anything is analysed,
    :func:`~rein.harness.gating.analyzer_inputs.analyzer_input`). A file no
    analyzer reads (prose, a backup, a log, data) reaches nothing, nor a
    path that never was a file (:func:`never_there`). With an analyzer
    that is no preset every file but a module is read (:func:`input_kind`).
    Nor is it known for a module under a folder basedpyright resolves
    imports from that the scan does not model (``typings/``, ``extraPaths``:
    :mod:`rein.disk.import_roots`)."""
    kinds = {p: input_kind(pool, p) for p in paths if not never_there(pool, p)}
    code = [p for p, kind in kinds.items() if kind != "unread"]
    if not paths or any(kind == "read" for kind in kinds.values()):
        return None
    if not code:
        return set()
    roots = unmodelled_roots(pool.read)
    if any(kinds[p] == "module" and outside_the_scan(p, roots) for p in code):
        return None  # imported by a name the scan does not know (:mod:`rein.disk.import_roots`)
    installed = await asyncio.to_thread(pool.python_env.roots)
    if installed is None:
        return None  # the environment's folders are not known (:mod:`rein.disk.python_environment`)
    paths = code
    index = _index(pool)
    if not index.built:
        await asyncio.to_thread(index.build)  # reads every file: off the event loop
    return index.closure(paths, installed)


def input_kind(pool: AnalyzerPool, path: str) -> AnalyzerInput:
    """What the changed ``path`` is to the pool's analyzers: a configured
    analyzer that is no preset may read any file
    (:func:`~rein.harness.gating.analyzer_inputs.analyzer_input`); a file
    ruff's settings ``extend`` is read, whatever its name
    (:mod:`rein.disk.ruff_extends`)."""
    if path in pool.ruff_extends.named():
        return "read"
    return analyzer_input(path, custom=custom_analyzers(s.name for s in pool.specs))


def never_there(pool: AnalyzerPool, path: str) -> bool:
    """``path`` is no file now and was none before the run changed it
    (``sed -i``'s temporary file): no change (:mod:`rein.disk.file_presence`)."""
    return pool.presence.never_there(path)


#: What bounds :func:`wait_files`' questions, as a timeout's reason names
#: it: its callers' bound (the cold gate's waits: the settle bound), not
#: one request's (``gates.analyzer.requestTimeoutMs``).
WAIT_BOUND = "what was left of gates.analyzer.settleTimeoutMs"


async def wait_files(pool: AnalyzerPool, paths: Sequence[str], timeout_s: float) -> bool:
    """Ask each analyzer that has one of ``paths`` open for its diagnostics
    now, and wait until each answered having analysed it. False on timeout,
    or when an analyzer cannot be asked file by file. A command's install
    into the analyzers' environment is told first."""
    await pool.started()
    await pool.check_environment()
    if not answers_per_file(pool):
        return False
    deadline = time.monotonic() + timeout_s
    for analyzer in pool.analyzers:
        for path in paths:
            if analyzer.alive and analyzer.file_by_file and analyzer.owns(path):
                # Not open (a resumed session's changed file: nothing opened
                # it in this process): opened, else it would be judged on
                # nothing. One that does not exist is not opened.
                if path not in analyzer.versions and not pool.skipped(path):
                    analyzer.open(path)
                if path in analyzer.versions and path not in pool.requested:
                    pool.requested.append(path)
    asked = [(a, p) for a in pool.analyzers if a.alive for p in paths if p in a.versions]
    for analyzer, path in asked:
        # Bounded by the caller's bound, not one request's: basedpyright
        # answers once its workspace is set up, which takes longer than
        # gates.analyzer.requestTimeoutMs on a loaded machine.
        analyzer.repull(path, timeout_s, WAIT_BOUND, answered=True)
    while True:
        live = [(a, p) for a, p in asked if a.alive and p in a.versions]
        owed = [(a, p) for a, p in live if p in a.awaiting]
        timed_out = [(a, p) for a, p in live if (a, p) not in owed and p in a.unanswered]
        unknown = [(a, p) for a, p in live if (a, p) not in owed + timed_out and not a.analysed(p)]
        if not owed and not timed_out and not unknown:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if timed_out and not owed:
            # It did not answer within its bound (a loaded machine): asking
            # again would only queue more analyses; its workspace analysis
            # is waited for instead, then it is asked once more.
            if not await pool.wait_idle(left):
                return False
            for analyzer, path in timed_out + unknown:
                analyzer.repull(
                    path, max(deadline - time.monotonic(), 0.001), WAIT_BOUND, answered=True
                )
            continue
        if unknown and not owed:
            # It answered without knowing the file yet (its workspace is
            # still being set up): asked again a moment later, unless the
            # analyzer asked it again meanwhile itself (its analysis stopped
            # and was resumed, or the server asked for a refresh: owed
            # again, or answered with a result already). Asked a third
            # time, the analyzer's question's answer would be dropped (only
            # a file's latest question counts) and the wait run out.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pool.activity().wait(), min(left, ASK_AGAIN_S))
            for analyzer, path in unknown:
                if path in analyzer.awaiting or analyzer.analysed(path):
                    continue
                analyzer.repull(
                    path, max(deadline - time.monotonic(), 0.001), WAIT_BOUND, answered=True
                )
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(pool.activity().wait(), left)


async def snapshot_files(
    pool: AnalyzerPool, paths: Sequence[str], timeout_s: float
) -> DiagnosticsSnapshot:
    """:func:`wait_files`, then what the analyzers said of ``paths`` (stale
    when one did not answer in time)."""
    answered = await wait_files(pool, paths, timeout_s)
    snap = await pool.snapshot(paths)
    if answered or snap.stale:
        return snap
    return replace(
        snap, stale=True, stale_reason="the analyzers did not answer within the settle bound"
    )


async def read_texts(pool: AnalyzerPool) -> Callable[[str], str | None]:
    """Every file's text now (read off the event loop, kept compressed):
    what a command is about to change. Returns a file's text then (None: no
    such file, or too long to keep)."""
    if pool.texts is not None:
        return pool.texts.frozen()  # a large workspace's, kept up to date
    memory = TextMemory(pool.read)
    await asyncio.to_thread(memory.remember, sorted(pool.existing))
    return memory.text


async def snapshot_files_with(
    pool: AnalyzerPool, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
) -> DiagnosticsSnapshot:
    """:func:`snapshot_files` of ``paths`` with the analyzers that have them
    open shown ``texts`` instead of those files' contents (nothing is
    written; stale when a shown file changed meanwhile: the analyzers were
    shown it as it is); the contents are shown again before it returns, and ``paths``
    pulled again: their answers kept until then are of the texts shown, and
    an analyzer that is pulled publishes nothing of its own when a file
    they import is shown again (a later snapshot would take the shown
    world's errors, a break the run made in them missing, for today's)."""
    await pool.started()
    shown = [
        (a, p) for p in texts for a in pool.analyzers if a.alive and a.owns(p) and p in a.versions
    ]
    # The files asked about are shown again to each server shown other
    # texts (show_asked_again).
    servers = list({id(a): a for a, _ in shown}.values())
    others = [p for p in paths if p not in texts]
    beside = await _open_importers(pool, servers, [p for _, p in shown], {*texts, *others})
    with pool.shown_earlier.showing():
        try:
            for analyzer, path in shown:
                analyzer.change(path, texts[path])
            show_asked_again(servers, others)
            versions = [(a, p, a.versions.get(p)) for a, p in shown]
            snap = await snapshot_files(pool, paths, timeout_s)
            moved = sorted({p for a, p, v in versions if a.versions.get(p) != v})
            if moved and not snap.stale:
                # Changed meanwhile (the watcher heard the command's change
                # only now): the analyzers were shown its text now, and the
                # answers may be of it, not of the earlier text.
                why = f"{', '.join(moved)} changed while its earlier text was shown"
                return replace(snap, stale=True, stale_reason=why)
            return snap
        finally:
            for analyzer, path in shown:
                analyzer.change(path)
            if shown:
                pull_again(pool.analyzers, others, servers)
                # Checked too while the texts were shown (open files are
                # checked in the background), not asked: parsed afresh.
                show_asked_again(servers, beside)


async def _open_importers(
    pool: AnalyzerPool, servers: Sequence[_Analyzer], shown: Sequence[str], besides: set[str]
) -> list[str]:
    """The files that import one of ``shown`` (the import scan's direct
    importers, when the scan is built: at most ``max_importers`` of each,
    the ones a change opens) and that one of ``servers`` has open, other
    than ``besides``. basedpyright checks its open files in the
    background, so an importer nobody asked about was checked with the
    texts shown too, and kept what it met of them until parsed again:
    django's ``connection.py``, open as an importer of ``functional.py``,
    answered the verdict with its ``iter(self.settings)`` error as of both
    the text shown (``cached_property`` resolved) and the text now, and
    the second blocked as new (issue 32's probes)."""
    index = _index(pool)
    if not shown or not servers or not index.built:
        return []
    roots = await asyncio.to_thread(pool.python_env.roots) or ()
    open_in = {p for a in servers for p in a.versions}
    found: list[str] = []
    for path in shown:
        # A small workspace has every file open: its other importers are
        # not re-sent (each a re-check that later waits would wait for:
        # click's core.py has 44), as a change does not open them.
        for other in index.importers(path, sys.maxsize, roots)[: pool.max_importers]:
            if other in open_in and other not in besides and other not in found:
                found.append(other)
    return found


def show_asked_again(servers: Sequence[_Analyzer], paths: Sequence[str]) -> None:
    """Each of ``paths`` shown again to each of ``servers`` (those that were
    shown other texts): what a server met in them while checking other files
    is of the texts before (:meth:`~rein.disk.analyzer_server._Analyzer.show_again`)."""
    for analyzer in servers:
        for path in paths:
            analyzer.show_again(path)


def pull_again(
    analyzers: Sequence[_Analyzer], paths: Sequence[str], shown_to: Sequence[_Analyzer] = ()
) -> None:
    """Ask each of ``analyzers`` that has one of ``paths`` open for its
    diagnostics afresh (owed until answered): what it holds of them is its
    answer while other texts were shown; those ``shown_to`` them are shown
    ``paths`` again (what they met in them is of the texts shown). An
    answer given without an analysis (no result id:
    :class:`~rein.disk.analyzer_findings.Findings`) leaves the file stale,
    saying so, never clean."""
    for analyzer in analyzers:
        for path in paths:
            if analyzer.alive and path in analyzer.versions:
                analyzer.findings.expect_analysis(path)
                if not (any(analyzer is a for a in shown_to) and analyzer.show_again(path)):
                    analyzer.repull(path, answered=True)
