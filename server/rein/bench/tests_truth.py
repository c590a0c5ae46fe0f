"""The project's full suite for ``rein bench tests --corpus``
(:mod:`rein.bench.tests_corpus`): each seed's truth (the suite's run with
it, cached on disk) and the pristine suite's time, measured between the
verdicts (:class:`FullSuiteClock`) so that both are timed under the same
load."""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rein.bench.corpus import corpus_cache
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec, run_tests
from rein.testgate.shadow import ShadowTree, build_shadow

__all__ = ["TRUTH_IDS", "FullSuiteClock", "Truths", "full_suite", "truth_cache_file"]

#: Bumped when the gate's test ids change (2: pytest's own node ids, not
#: ones rebuilt from JUnit): a cached truth must name tests as the gate does.
TRUTH_IDS = 2
#: Timed runs of the pristine suite wanted between a project's verdicts
#: (one more before them, one after).
FULL_BETWEEN = 3


class Truths:
    """The full suite's verdict per seed, cached on disk."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self.data: dict[str, Any] = {}
        if file is not None and file.exists():
            self.data = json.loads(file.read_text(encoding="utf-8"))

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.data.get(key)
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.data[key] = value
        if self.file is not None:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.file.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True), encoding="utf-8")
            tmp.replace(self.file)


def truth_cache_file(name: str, version: str) -> Path:
    import pytest

    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    file = f"{name}-{version}-{py}-pytest{pytest.__version__}-ids{TRUTH_IDS}.json"
    return corpus_cache() / "tests-truth" / file


async def full_suite(
    runner: SubprocessRunner,
    spec: RunnerSpec,
    root: Path,
    overlay: dict[str, str | None],
    limit: float,
) -> tuple[set[str], float, str | None]:
    """The failing tests of the whole suite with ``overlay``, its wall time,
    and why it could not judge (None: it could)."""
    shadow = build_shadow(root, overlay)
    try:
        started = time.monotonic()
        run = await run_tests(runner, spec, shadow, None, limit)
        wall = time.monotonic() - started
    finally:
        shadow.remove()
    return {r.node_id for r in run.failing}, wall, run.unverified


class FullSuiteClock:
    """The pristine full suite, run (cold, in a shadow, as a truth run) once
    before a project's verdicts, after every ``every``-th of them and once
    after the last: the verdicts and the suite they are compared with are
    timed in the same process, environment and niceness, under the load of
    the same stretch of time.

    The runs share one kept shadow tree, whose compiled modules stay as
    the person's own ``__pycache__`` would between their runs of
    ``pytest`` (bytecode written whatever ``PYTHONDONTWRITEBYTECODE`` says,
    as the gate's runs have it): the reference is the median of the runs
    after the first, which compiles (the first alone when it is the only
    one)."""

    def __init__(self, root: Path, spec: RunnerSpec, edits: int, every: int | None = None) -> None:
        self.root, self.spec = root, spec
        self.runner = SubprocessRunner(str(root))
        self.every = every or max(1, math.ceil(edits / FULL_BETWEEN))
        self.walls: list[float] = []
        self.failures: list[str] = []
        self._tree: ShadowTree | None = None

    async def run(self, limit: float = 600.0) -> set[str] | None:
        """One timed run; its failing tests, None when it could not judge."""
        if self._tree is None:
            self._tree = ShadowTree(self.root)
        shadow = self._tree.sync({})
        started = time.monotonic()
        run = await run_tests(self.runner, self.spec, shadow, None, limit)
        wall = time.monotonic() - started
        if run.unverified is not None:
            self.failures.append(run.unverified)
            return None
        self.walls.append(wall)
        return {r.node_id for r in run.failing}

    def close(self) -> None:
        """Delete the kept shadow tree."""
        if self._tree is not None:
            self._tree.remove()
            self._tree = None

    async def after(self, verdicts: int, limit: float) -> None:
        """After the ``verdicts``-th verdict: a run when it is due."""
        if verdicts % self.every == 0:
            await self.run(limit)

    @property
    def median(self) -> float:
        """The median of the runs after the first (see the class docstring)."""
        later = self.walls[1:] or self.walls
        return statistics.median(later) if later else 0.0
