"""When a crashed analyzer is started again: after an exponential backoff,
at most :data:`MAX_RESTARTS` times within :data:`RESTART_WINDOW_S`; past
that it stays off for :data:`COOL_DOWN_S` and is then tried again with a
fresh budget. An analyzer that crashes now and then is always restarted; one
that crashes in a loop costs a few restarts a minute, not a busy loop.

:class:`RestartBudget` only counts (times are the caller's monotonic
seconds, so a test drives it with a clock of its own);
:class:`AnalyzerRestarts` is the pool's part that reports each crash,
waits, restarts, and counts a failed restart as one more crash.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rein.disk.analyzer_server import _Analyzer

log = logging.getLogger(__name__)

__all__ = [
    "COOL_DOWN_S",
    "FIRST_BACKOFF_S",
    "MAX_BACKOFF_S",
    "MAX_RESTARTS",
    "RESTART_WINDOW_S",
    "AnalyzerRestarts",
    "RestartBudget",
    "RestartPlan",
    "RestartPolicy",
]

#: Restarts allowed within :data:`RESTART_WINDOW_S` before a cool-down.
MAX_RESTARTS = 5
#: The window the restarts are counted in (seconds).
RESTART_WINDOW_S = 60.0
#: The wait before the first restart in a window; doubled for each next one.
FIRST_BACKOFF_S = 0.5
#: The longest wait before a restart.
MAX_BACKOFF_S = 8.0
#: How long an analyzer that spent its budget stays off before it is tried again.
COOL_DOWN_S = 300.0


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """The numbers of the budget (the module's constants by default)."""

    max_restarts: int = MAX_RESTARTS
    window_s: float = RESTART_WINDOW_S
    first_backoff_s: float = FIRST_BACKOFF_S
    max_backoff_s: float = MAX_BACKOFF_S
    cool_down_s: float = COOL_DOWN_S


@dataclass(frozen=True, slots=True)
class RestartPlan:
    """What to do after one crash."""

    #: How long to wait before starting it again.
    delay_s: float
    #: The budget is spent: the wait is the cool-down.
    cool_down: bool
    #: Crashes within the window, this one included.
    crashes: int
    #: This restart's number within the window (1-based; 0 for a cool-down).
    attempt: int


class RestartBudget:
    """The restarts of one analyzer within the window."""

    def __init__(self, policy: RestartPolicy | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self._restarts: deque[float] = deque()

    def crashed(self, now: float) -> RestartPlan:
        """It crashed (or could not be started again) at ``now``: when to
        start it again. Restart n within the window waits
        ``first_backoff_s * 2 ** (n - 1)`` (at most ``max_backoff_s``); the
        crash after ``max_restarts`` of them waits the cool-down, after
        which the window starts empty."""
        policy = self.policy
        while self._restarts and now - self._restarts[0] >= policy.window_s:
            self._restarts.popleft()
        done = len(self._restarts)
        if done >= policy.max_restarts:
            self._restarts.clear()
            return RestartPlan(policy.cool_down_s, True, done + 1, 0)
        self._restarts.append(now)
        delay = min(policy.first_backoff_s * 2**done, policy.max_backoff_s)
        return RestartPlan(delay, False, done + 1, done + 1)


class AnalyzerRestarts:
    """Starts crashed analyzers again, each with its own budget.

    A crash is reported at once (``report``: the pool's report, which the
    hosts show and log) with when it is started again; while it waits, the
    analyzer is not alive, so every snapshot is stale and says why
    ("restarting", or its ``failure`` during a cool-down). ``changed``
    wakes those waiting for the pool to settle."""

    def __init__(
        self,
        policy: RestartPolicy,
        *,
        report: Callable[[str], None],
        changed: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.policy = policy
        self._report = report
        self._changed = changed
        self._clock = clock
        #: Waits out a backoff or a cool-down (a test ends them when it says).
        self._sleep = sleep
        self._budgets: dict[str, RestartBudget] = {}
        #: Restarts waiting or under way, by analyzer name.
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._closed = False

    def crashed(self, analyzer: _Analyzer, what: str) -> None:
        """``analyzer`` ``what`` ("exited (code -9)"): say so and start it
        again after the budget's wait."""
        name = analyzer.spec.name
        if self._closed or name in self._pending:
            return  # stopping, or a restart under way (its failure is its own)
        plan = self._budgets.setdefault(name, RestartBudget(self.policy)).crashed(self._clock())
        analyzer.restarts += 1
        # What it owed, and every file it was told changed since it opened it
        # (what it had found there, a new error of the run among them, is
        # lost with it), is stale until it runs again (see
        # pool_status.missing_diagnostics); files it only opened stand.
        analyzer.changed_while_down.update(analyzer.awaiting)
        analyzer.changed_while_down.update(p for p, v in analyzer.versions.items() if v > 1)
        analyzer.awaiting.clear()
        analyzer.progress.clear()
        analyzer.diagnostics.clear()
        window = f"{self.policy.window_s:g} s"
        if plan.cool_down:
            analyzer.failure = (
                f"{name} {what}, {plan.crashes} times within {window}; "
                f"off for {plan.delay_s:g} s, then tried again"
            )
            self._report(
                f"analyzer {name} {what}, {plan.crashes} times within {window}; "
                f"it stays off for {plan.delay_s:g} s, then is tried again"
            )
        else:
            analyzer.failure = None  # restarting
            self._report(
                f"analyzer {name} {what}; restarting it in {plan.delay_s:g} s "
                f"(restart {plan.attempt} of {self.policy.max_restarts} within {window})"
            )
        self._changed()
        self._pending[name] = asyncio.ensure_future(
            self._restart_later(analyzer, plan.delay_s, plan.cool_down)
        )

    async def _restart_later(self, analyzer: _Analyzer, delay_s: float, cooled: bool) -> None:
        name = analyzer.spec.name
        await self._sleep(delay_s)
        try:
            await analyzer.restart()
        except Exception as exc:
            log.debug("restarting %s failed", name, exc_info=True)
            await analyzer.stop()  # nothing half-started stays up while it waits
            del self._pending[name]
            self.crashed(analyzer, f"could not be restarted ({exc})")
            return
        del self._pending[name]
        if cooled:
            self._report(f"analyzer {name} runs again after its cool-down")
        self._changed()

    def pending(self, name: str) -> asyncio.Task[None] | None:
        """The restart of the analyzer ``name`` that waits or runs, if any
        (a question for it may wait for it: :mod:`rein.disk.pool_navigator`)."""
        return self._pending.get(name)

    async def settled(self) -> None:
        """Returns once no restart waits or runs (tests)."""
        while self._pending:
            await asyncio.gather(*self._pending.values(), return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel every restart that waits or runs (the pool stops)."""
        self._closed = True
        for task in self._pending.values():
            task.cancel()
        await asyncio.gather(*self._pending.values(), return_exceptions=True)
        self._pending.clear()
