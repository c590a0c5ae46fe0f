"""The restart budget of a crashed analyzer, on a clock of the test's own:
exponential backoff, at most N restarts a minute, then a cool-down after
which it is tried again with a fresh budget."""

from __future__ import annotations

from pathlib import Path

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_status import missing_diagnostics
from rein.disk.restarts import (
    COOL_DOWN_S,
    MAX_RESTARTS,
    RESTART_WINDOW_S,
    AnalyzerRestarts,
    RestartBudget,
    RestartPlan,
    RestartPolicy,
)


def test_the_waits_double_up_to_the_budget_then_it_cools_down() -> None:
    budget = RestartBudget()
    now = 1_000.0
    plans = []
    for _ in range(MAX_RESTARTS + 1):
        plan = budget.crashed(now)
        plans.append(plan)
        now += plan.delay_s + 1.0  # it ran for a second after each restart
    assert [p.delay_s for p in plans] == [0.5, 1.0, 2.0, 4.0, 8.0, COOL_DOWN_S]
    assert [p.attempt for p in plans] == [1, 2, 3, 4, 5, 0]
    assert [p.cool_down for p in plans] == [False] * MAX_RESTARTS + [True]
    assert plans[-1].crashes == MAX_RESTARTS + 1
    # After the cool-down it is tried again, and a later crash starts a
    # fresh window: a short wait, not another cool-down.
    assert budget.crashed(now) == RestartPlan(0.5, False, 1, 1)


def test_crashes_older_than_the_window_are_forgotten() -> None:
    budget = RestartBudget()
    # One crash every 20 s: never more than three within a minute.
    plans = [budget.crashed(20.0 * n) for n in range(12)]
    assert not any(p.cool_down for p in plans)
    assert max(p.crashes for p in plans) == 3
    assert plans[-1].delay_s == 2.0
    # Quiet for a whole window: the next crash waits the shortest time again.
    assert budget.crashed(20.0 * 11 + RESTART_WINDOW_S).delay_s == 0.5


def test_the_wait_is_capped_and_the_numbers_are_the_policy() -> None:
    policy = RestartPolicy(
        max_restarts=10, window_s=5.0, first_backoff_s=1.0, max_backoff_s=3.0, cool_down_s=7.0
    )
    budget = RestartBudget(policy)
    delays = [budget.crashed(0.0).delay_s for _ in range(10)]
    assert delays == [1.0, 2.0] + [3.0] * 8
    assert budget.crashed(0.0) == RestartPlan(7.0, True, 11, 0)
    one = RestartBudget(RestartPolicy(max_restarts=1))
    assert not one.crashed(0.0).cool_down
    assert one.crashed(1.0).cool_down


async def test_a_crashed_analyzer_leaves_stale_every_file_it_was_told_of(tmp_path: Path) -> None:
    """An analyzer that answered a change (its new error reported) and then
    crashed: the error is gone with it, so the verdict (which asks for no
    file in particular) is missing its part until it runs again, even
    though it owed nothing when it died (the pool's other analyzers keep
    their own part)."""
    pool = AnalyzerPool(tmp_path)
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    analyzer.versions["a.py"] = 2  # told of the run's change, and it answered
    analyzer.versions["b.py"] = 1  # only opened: its part stands
    analyzer.diagnostics["a.py"] = []
    restarts = AnalyzerRestarts(
        RestartPolicy(first_backoff_s=3_600.0), report=lambda _text: None, changed=lambda: None
    )
    analyzer.alive = False
    restarts.crashed(analyzer, "exited (code -9)")
    try:
        missing = missing_diagnostics([analyzer], None)
        assert missing == "diagnostics are missing: basedpyright is restarting", missing
    finally:
        await restarts.aclose()
