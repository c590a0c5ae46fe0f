"""After a file-set change (a file created, deleted or renamed) in a
workspace analysed as a whole, the changed modules' importers asked afresh.

basedpyright in ``diagnosticMode: workspace`` is told of the change by a
``workspace/didChangeWatchedFiles`` (:mod:`rein.disk.pool_environment`);
it re-resolves every import and republishes only the files whose
diagnostics changed, saying nothing of the others, so nothing tells that it
is done. Its open files were owed a republish for
:data:`~rein.disk.owed_refresh.ENVIRONMENT_GRACE_S` only: under load
(flask's ``delete_file`` of ``sansio/app.py`` at a load of 9) it had not
re-checked six of the deleted module's importers when that passed, and the
verdict read their diagnostics from before the change ("1 blocking", not
stale).

So the pool remembers the created and deleted paths (:meth:`FileSetImporters.changed`)
and, at its next wait for idle, asks each analyzer that watches files and
answers pulls for the diagnostics of those modules' importers (the pool's
import scan, :class:`~rein.disk.importers.ImportIndex`), opening the ones not
open: basedpyright handles the watched-files notice before the pull (it
drops its import cache and marks every file dirty then), so its answer is
of the new file set. Each is owed until answered, bounded by the pool's
settle bound (``gates.analyzer.settleTimeoutMs``); one not answered by then
leaves its file stale, saying why: the verdict is never "passed" on answers
from before the change. Only a file-set change pays, and only for the
changed modules' importers.

When the importers cannot be known from the scan (a changed path is a file
the analyzers read that is no module, a module under a folder the scan
does not model, or the environment's folders are unknown:
:func:`~rein.disk.file_checks.importer_closure`'s cases), the wider, slower
path is taken: every file of the workspace is asked (logged, with why).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence

from rein.disk.analyzer_server import _Analyzer
from rein.disk.file_checks import AnalyzerPool, _index, input_kind, never_there
from rein.disk.import_roots import outside_the_scan, unmodelled_roots

__all__ = ["SETTLE_BOUND", "FileSetImporters"]

log = logging.getLogger(__name__)

#: What bounds the questions, as a timeout's reason names it.
SETTLE_BOUND = "gates.analyzer.settleTimeoutMs"


class FileSetImporters:
    """The created and deleted paths whose importers are still to be
    asked (see the module)."""

    def __init__(self) -> None:
        self.pending: list[str] = []
        self._lock = asyncio.Lock()

    def changed(self, paths: Sequence[str]) -> None:
        """``paths`` were created or deleted (a rename: both)."""
        self.pending.extend(p for p in paths if p not in self.pending)

    async def ask(self, pool: AnalyzerPool, bound_s: float) -> list[str]:
        """Ask the pending paths' importers afresh in every analyzer that
        watches files and answers pulls, each owed until answered within
        ``bound_s``. Returns the importers asked. A call meanwhile waits
        for this one (its debts are registered before the pool can be seen
        idle)."""
        async with self._lock:
            paths, self.pending = self.pending, []
            askers = [a for a in pool.analyzers if a.alive and a.watches_files and _asks(a)]
            if not paths or not askers:
                return []
            found = await importers_of(pool, paths)
            if isinstance(found, str):
                # Not known: every file asked (the wider path), never the grace alone.
                log.info("after a file-set change %s: every file is asked", found)
                found = sorted(pool.existing - set(paths))
            asked: list[str] = []
            for analyzer in askers:
                for path in found:
                    if not analyzer.owns(path) or pool.skipped(path):
                        continue
                    if path not in analyzer.versions:
                        analyzer.open(path)  # not open: opened, then asked
                    if path not in analyzer.versions:
                        continue  # no such file (gone meanwhile)
                    # An answer given without an analysis leaves it stale.
                    analyzer.findings.expect_analysis(path)
                    analyzer.repull(path, bound_s, SETTLE_BOUND, answered=True)
                    asked.append(path)
            return sorted(set(asked))


def _asks(analyzer: _Analyzer) -> bool:
    """It answers a pull by analysing the file then (basedpyright, whether
    it publishes or not: :func:`~rein.disk.file_checks.answers_per_file`)."""
    spec = analyzer.spec
    return spec.pull and not spec.tsserver and (analyzer.pull or bool(spec.diagnostic_mode_setting))


async def importers_of(pool: AnalyzerPool, paths: Sequence[str]) -> list[str] | str:
    """The files importing one of the modules among ``paths`` (created or
    deleted), not ``paths`` themselves; a str: why they cannot be known."""
    kinds = {p: input_kind(pool, p) for p in paths if not never_there(pool, p)}
    read = sorted(p for p, kind in kinds.items() if kind == "read")
    if read:
        return f"of {', '.join(read)} (what it changes is not known from the import scan)"
    modules = [p for p, kind in kinds.items() if kind == "module"]
    if not modules:
        return []
    roots = unmodelled_roots(pool.read)
    outside = sorted(p for p in modules if outside_the_scan(p, roots))
    if outside:
        return f"of {', '.join(outside)} (imported by names the import scan does not know)"
    installed = await asyncio.to_thread(pool.python_env.roots)
    if installed is None:
        return "(the Python environment's folders are not known)"
    index = _index(pool)
    if not index.built:
        await asyncio.to_thread(index.build)  # reads every file: off the event loop
    found = {i for p in modules for i in index.importers(p, sys.maxsize, installed)}
    return sorted(found - set(paths))
