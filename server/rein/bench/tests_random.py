"""A blocker the truth does not name, looked at again before it counts as
false (``rein bench tests --corpus``).

A seed's truth is one run of the full suite with it. A seed can make a test
fail at random (cachetools' ``RRCache`` evicts a random key: a seed in its
``__init__`` made ``RRCacheTest::test_update`` fail about one run in three),
and that one run may have seen it pass. The gate that then blocks on it is
right: the test never failed before the seed. So a blocker naming a test the
truth does not is run :data:`RUNS` times with the seed and :data:`RUNS`
times without it, cold, each in a fresh shadow: failing at least once with
it and never without it, it is one the seed breaks at random and is added to
the seed's truth (``sometimes``, cached with it); otherwise it stays a false
blocker. Recall still counts only the seeds whose one truth run saw a test
fail."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rein.bench.tests_scores import Case
from rein.bench.tests_seeds import apply
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec, run_tests
from rein.testgate.shadow import build_shadow

__all__ = ["RUNS", "failures_of", "node_named", "random_breaks"]

#: Runs with the seed and without it.
RUNS = 5


def node_named(message: str) -> str | None:
    """The pytest node id a blocker's message starts with (None: it names
    no test, e.g. a file that cannot be collected)."""
    head = message.split(" ", 1)[0]
    return head if "::" in head else None


async def failures_of(
    runner: SubprocessRunner,
    spec: RunnerSpec,
    root: Path,
    overlay: dict[str, str | None],
    node: str,
    limit: float,
    runs: int = RUNS,
) -> int | None:
    """How many of ``runs`` runs of ``node`` fail with ``overlay`` (None: a
    run could not judge)."""
    failed = 0
    for _ in range(runs):
        shadow = build_shadow(root, overlay)
        try:
            run = await run_tests(runner, spec, shadow, [node], limit)
        finally:
            shadow.remove()
        if run.unverified is not None:
            return None
        failed += any(r.node_id == node for r in run.failing)
    return failed


async def random_breaks(
    case: Case,
    known: dict[str, Any],
    runner: SubprocessRunner,
    spec: RunnerSpec,
    root: Path,
    limit: float,
    say: Callable[[str], None],
    runs: int = RUNS,
) -> None:
    """``case``'s blockers the truth does not name, each run again with the
    seed and without it: one the seed breaks at random joins the seed's truth
    (``known["sometimes"]``, which the caller caches) and is no false
    blocker any more."""
    seeded = apply((root / case.mutation.path).read_text(encoding="utf-8"), case.mutation)
    sometimes = set(known.get("sometimes", []))
    for message in list(case.false_blockers):
        node = node_named(message)
        if node is None:
            continue
        overlay: dict[str, str | None] = {case.mutation.path: seeded}
        with_seed = await failures_of(runner, spec, root, overlay, node, limit, runs)
        without = await failures_of(runner, spec, root, {}, node, limit, runs)
        say(f"    {node}: failed {with_seed} of {runs} with the seed, {without} without it")
        if with_seed and without == 0:
            sometimes.add(node)
            case.false_blockers.remove(message)
    known["sometimes"] = sorted(sometimes)
