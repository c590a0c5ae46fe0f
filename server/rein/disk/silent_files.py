"""Files a publishing analyzer owes and stopped working on: asked by pull.

basedpyright in open-files mode (django, over 1,000 files) never published
``contrib/sites/models.py`` and three of its importers again once the
module had been renamed away and back and the files closed and opened
again, at any version sent: its progress ended, it answered every request,
it published the other files. Waiting on a publish that will not come ends
at ``gates.analyzer.settleTimeoutMs`` (:mod:`rein.disk.owed_publishes`)
with the files stale and the verdict unverified.

It answers a pull of such a file (``textDocument/diagnostic``: it analyses
the file then, :mod:`rein.disk.file_checks`), so the diagnostics can be had
without the publish: once an analyzer that publishes has no progress open,
has said nothing for :data:`SILENT_S` and still owes a file (owed that long
too), the file is asked for by pull, once per debt. Only a server that
answers pulls is asked (``answers_pulls``: it offers them, or is
basedpyright's shape); clangd, gopls (configured to be pulled, offering
none) and a server that only publishes are left to the settle bound. The
pull is bounded by what is left of the settle bound, so a file is never
stale sooner than without the pull, and a pull not answered in time says
so naming that bound (``gates.analyzer.settleTimeoutMs``). An answer
settles the debt (the analyzer's ``_pull``), and so does a publish that
comes while the pull is out (the pull's later timeout then says nothing:
only the latest question of a file still owed may leave it stale). An
answer from a server that did not know the file (no result id: it did not
analyse it; basedpyright answers so while its workspace is being set up)
leaves the file owed, from when it was first owed, and asked again once
the server is silent again; past the settle bound it is stale, saying so.

An analyzer with a pull of its own not answered yet is not silent: it is
checking a file for it (basedpyright shows no progress meanwhile; at a
cold start under load, one such check took 26 s). Asked then, every file
it owed at its start would be pulled, each pull queued ahead of the cold
gate's next questions and replacing those out (only a file's latest
question counts): a cold rename's baseline waited 51 s, of which 17 s for
a file no verdict needed. A question shows it working only within the
request bound (``gates.analyzer.requestTimeoutMs``) or its own, shorter
one, and only while it is its file's latest: a gate's pull is bounded by
what is left of the settle bound, and one the server dropped would
otherwise keep every other file owed from being asked until then (they
ended stale, never asked). Once no question shows it working, the silence
counts again. Past that bound, a question still out may be a check that
takes longer (basedpyright at a cold start under load, checking a file for
a gate's question: over 10 s) as well as one the server dropped, so one
owed file is asked, not all (a probe, queued behind it): answered first,
the question out is taken as dropped (:class:`~rein.disk.analyzer_pull.LatestPulls`)
and every owed file is asked at the next silence; answered after it, the
server was working. A file whose latest question is out (a gate's) is
never asked so: the pull would replace that question. Asking every owed
file whenever a question ran past 10 s brought back the 31 pulls of every
toolz file at a cold start (``rein bench gates --corpus --cold``,
2026-12-06).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Protocol

from rein.disk.analyzer_pull import LatestPulls

__all__ = ["BOUND", "SILENT_S", "PulledAnalyzer", "SilentFiles"]

log = logging.getLogger(__name__)

#: Quiet this long (no progress open, nothing published or answered) while
#: owing a file, an analyzer that publishes is asked for it by pull.
#: basedpyright publishes an open file within a second of its progress
#: ending; its analysis of one large file shows as progress.
SILENT_S = 10.0
#: What bounds a silent file's pull (named in the reason it is stale).
BOUND = "what was left of gates.analyzer.settleTimeoutMs"


class _Debts(Protocol):
    @property
    def since(self) -> dict[str, float]: ...
    def items(self) -> Iterable[tuple[str, int]]: ...
    def __contains__(self, path: object) -> bool: ...
    def __setitem__(self, path: str, version: int) -> None: ...


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class PulledAnalyzer(Protocol):
    @property
    def spec(self) -> _Named: ...
    @property
    def alive(self) -> bool: ...
    @property
    def pull(self) -> bool: ...
    @property
    def answers_pulls(self) -> bool: ...
    @property
    def answered_blind(self) -> set[str]: ...
    @property
    def progress(self) -> set[str]: ...
    @property
    def last_activity(self) -> float: ...
    @property
    def awaiting(self) -> _Debts: ...
    @property
    def versions(self) -> dict[str, int]: ...
    @property
    def unanswered(self) -> dict[str, str]: ...
    @property
    def pulls(self) -> LatestPulls: ...
    def repull(self, path: str, bound_s: float = 0.0, bound: str = "") -> None: ...
    def note_activity(self) -> None: ...


class SilentFiles:
    """Asks a silent analyzer by pull for the files it owes (see the module)."""

    def __init__(self, limit_s: float, silent_s: float = SILENT_S) -> None:
        #: The settle bound (a debt is given up this long after it was made).
        self.limit_s = limit_s
        self.silent_s = silent_s
        #: analyzer -> path -> (the version asked, when its pull's debt was
        #: made, when the debt it replaced was first made)
        self._asked: dict[PulledAnalyzer, dict[str, tuple[int, float, float]]] = {}

    def ask(self, analyzers: Iterable[PulledAnalyzer], now: float | None = None) -> float | None:
        """Pull what silent analyzers owe; note the answers that came
        without an analysis. Returns when the next debt may be pulled
        (monotonic seconds), None when none can be by time."""
        now = time.monotonic() if now is None else now
        next_at: float | None = None
        for analyzer in analyzers:
            asked = self._asked.setdefault(analyzer, {})
            self._answered(analyzer, asked, now)
            if not analyzer.alive or analyzer.pull or analyzer.progress:
                continue  # pulled anyway, or working: a progress end is heard
            if not analyzer.answers_pulls:
                continue  # a question would wait out its bound
            working = analyzer.pulls.working_until(now)
            if working is not None:
                # Working on a question (a cold gate's pulls: basedpyright
                # shows no progress while it checks a file for one), not
                # silent. Asked now, every file owed would queue ahead of
                # the questions that come next, and replace those out (only
                # a file's latest counts). A question counts so within the
                # request bound only: one the server dropped says nothing.
                next_at = working if next_at is None else min(next_at, working)
                continue
            # A question out past its window: the server is checking a file
            # for it still, or dropped it. One file is asked (a probe,
            # queued behind it); answered first, the question is dropped.
            probe = analyzer.pulls.overdue(now)
            owed = analyzer.awaiting
            for path, version in list(owed.items()):
                since = owed.since.get(path, now)
                entry = asked.get(path)
                if entry is not None and entry[:2] == (version, since):
                    continue  # asked for this debt: its pull is bounded
                if analyzer.pulls.asking(path):
                    continue  # asked (a gate's question): a pull would replace it
                at = max(analyzer.last_activity, since) + self.silent_s
                if at > now:
                    next_at = at if next_at is None else min(next_at, at)
                    continue
                # A debt owed again keeps its first time (see _answered).
                left = since + self.limit_s - now
                if left <= 0:
                    continue  # given up now (owed_publishes)
                log.warning(
                    "%s has said nothing of %s (version %d) for %.0f s: asked by pull",
                    analyzer.spec.name,
                    path,
                    version,
                    now - since,
                )
                analyzer.repull(path, left, BOUND)
                # The pull owes it anew (a new debt): remembered as asked.
                asked[path] = (version, owed.since.get(path, now), since)
                if probe:
                    break
        return next_at

    def _answered(
        self,
        analyzer: PulledAnalyzer,
        asked: dict[str, tuple[int, float, float]],
        now: float,
    ) -> None:
        for path, (version, _since, began) in list(asked.items()):
            if path in analyzer.awaiting:
                continue  # not answered yet (or owed again: asked again if silent)
            del asked[path]
            if (
                not analyzer.alive
                or analyzer.versions.get(path) != version
                or path in analyzer.unanswered
                or path not in analyzer.answered_blind
            ):
                continue  # answered, or published (or closed, changed, down)
            if began + self.limit_s > now:
                # It does not know the file yet (a workspace still being set
                # up answers so): owed again, from when it was first owed,
                # and asked again once silent.
                analyzer.awaiting[path] = version
                analyzer.awaiting.since[path] = began
                continue
            analyzer.unanswered[path] = (
                f"{analyzer.spec.name} published nothing for {path} within "
                f"{self.limit_s:g} s and answered its pull without having analysed it"
            )
            analyzer.note_activity()
