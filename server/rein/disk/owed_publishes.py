"""Diagnostics an analyzer owes and never sends: given up after a bound.

An analyzer owes diagnostics for each version of a file sent to it
(``_Analyzer.awaiting``), and :meth:`~rein.disk.analyzers.AnalyzerPool.
wait_idle` waits while anything is owed. A pull has its own bound (a
request not answered within ``gates.analyzer.requestTimeoutMs`` leaves the
file stale, saying why); a publish has no request that could time out. So
a server that never publishes for a file made every wait on the pool run
its whole bound, for the rest of the session: django's warm probes, the
``sed`` case right after the module rename of the same file (validated,
its files closed, then opened again): basedpyright in open-files mode never
published ``contrib/sites/models.py`` and three of its importers again, at
any version sent, and the verdict waited out the bench's 900 s bound at
every wait.

A debt owed for :attr:`OwedPublishes.limit_s` (the settle bound,
``gates.analyzer.settleTimeoutMs``) since it was made is given up: the
file is unanswered, with a reason naming the server and the file, so the
snapshot says it is stale and why (the verdict is never "passed":
unverified, or blocked and saying it is stale); a later publish or answer
for it makes it fresh again.

Before that, a file owed by an analyzer that went silent is asked for by
pull (:mod:`rein.disk.silent_files`): basedpyright answers a pull of a file
it no longer publishes, so the verdict is exact rather than stale.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Protocol

from rein.disk.silent_files import PulledAnalyzer, SilentFiles

__all__ = ["OwedFiles", "OwedPublishes"]


class OwedFiles(dict[str, int]):
    """path -> the version whose diagnostics are owed, and since when
    (monotonic seconds, :attr:`since`): a debt's clock starts when it is
    made (a version sent, a file opened, a pull asked again)."""

    def __init__(self) -> None:
        super().__init__()
        self.since: dict[str, float] = {}

    def __setitem__(self, path: str, version: int) -> None:
        super().__setitem__(path, version)
        self.since[path] = time.monotonic()

    def __delitem__(self, path: str) -> None:
        super().__delitem__(path)
        self.since.pop(path, None)

    def pop(self, path: str, *default: Any) -> Any:
        self.since.pop(path, None)
        return super().pop(path, *default)

    def clear(self) -> None:
        super().clear()
        self.since.clear()


class _Owing(PulledAnalyzer, Protocol):
    @property
    def awaiting(self) -> OwedFiles: ...
    def give_up(self, path: str, version: int, reason: str) -> None: ...


class OwedPublishes:
    """Gives up the debts older than :attr:`limit_s`."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        #: Asks a silent analyzer for what it owes before it is given up.
        self.silent = SilentFiles(limit_s)

    def expire(self, analyzers: Iterable[_Owing], now: float | None = None) -> float | None:
        """Ask silent analyzers for what they owe (:attr:`silent`), give up
        the debts owed for :attr:`limit_s`; returns when the next debt left
        may be asked for or expires (monotonic seconds), None when none is owed."""
        now = time.monotonic() if now is None else now
        analyzers = list(analyzers)
        next_at = self.silent.ask(analyzers, now)
        for analyzer in analyzers:
            if not analyzer.alive:
                continue
            owed = analyzer.awaiting
            for path, version in list(owed.items()):
                at = owed.since.get(path, now) + self.limit_s
                if at <= now:
                    analyzer.give_up(
                        path,
                        version,
                        f"{analyzer.spec.name} sent no diagnostics for {path} within {self.limit_s:g} s",
                    )
                else:
                    next_at = at if next_at is None else min(next_at, at)
        return next_at
