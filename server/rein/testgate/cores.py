"""The first run over the machine's cores: the selected tests in shares,
each forked from the kept pytest process at once.

A verdict's first run of hundreds of tests (click's ``core.py``,
Markdown's block parser) was one forked pytest while the machine's other
cores sat idle. When the warm pytest takes the run directly
(:mod:`rein.testgate.direct`) and the tests are many enough to pay for
another fork (:data:`SPLIT_FROM_S` of the tests' own time, estimated),
:meth:`Cores.plan` cuts them into shares, one per worker
(``gates.tests.workers``: "auto" is the cores this process may run on,
at most :data:`AUTO_MAX`; 1 turns it off), each a pytest forked from the
kept process with its own report, its own named tests and files, its own
temporary folder and record (:mod:`rein.testgate.runner` runs them and
merges their reports into one run's).

The shares are balanced by the tests' time where an earlier report of the
gate's gave it (:meth:`Cores.learn`: setup, call and teardown, the report
plugin's ``duration``), by their count otherwise; a test file goes to one
share whole (its import and module fixtures paid once) unless it alone is
more than a share's part and its tests are named (then its tests are
shared). The order of the tests within a share is the run's own.

Not split: a run of the whole suite (its files are pytest's to find), a
run pytest-xdist's workers take, a project whose own configuration runs
pytest-xdist (``-n`` in its ``addopts`` or ``PYTEST_ADDOPTS``: its own
workers), a run through the warm client or cold (an interpreter's start
each: the fork is what makes a share cheap).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rein.testgate.pytest_config import addopts
from rein.testgate.recorder import RawCoverage, Where

__all__ = [
    "AUTO_MAX",
    "SPLIT_FROM_S",
    "Cores",
    "Share",
    "durations_in",
    "merged_coverage",
    "own_xdist",
    "workers_for",
]

#: At most this many shares for "auto".
AUTO_MAX = 4
#: The tests' own time (estimated) from which a run is split, and the
#: least time of each share: a share costs its fork of the kept process,
#: its pytest session's start and the import of its files, 0.04-0.07 s at
#: a load of 10 and 0.12-0.2 s of a click clean verdict's first run at a
#: load of 4 (0.2 s: docs/performance.md, tg18a), paid on the other core.
SPLIT_FROM_S = 0.4
#: A test's time when no report gave it: a typical unit test's, with its
#: setup and teardown (click's median 1.1 ms, Markdown's 0.9 ms).
UNKNOWN_TEST_S = 0.0015
#: A whole test file's when none of its tests' times is known (toolz's
#: and cachetools's files: 0.01-0.04 s each, loaded or not).
UNKNOWN_FILE_S = 0.02


@dataclass(frozen=True, slots=True)
class Share:
    """One fork's part of the run: its targets (test files or node ids)
    and, with a per-test choice, the tests it runs of them."""

    targets: tuple[str, ...]
    only: tuple[str, ...] | None


def workers_for(setting: int | Literal["auto"]) -> int:
    """How many forks may share a first run: the cores this process may
    run on, capped at ``setting`` (or :data:`AUTO_MAX`)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    cap = AUTO_MAX if setting == "auto" else setting
    return max(1, min(cores, cap))


def durations_in(text: str) -> dict[str, float]:
    """Each test's time (its phases' sum) in a report's JSON lines."""
    times: dict[str, float] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or row.get("kind") != "test":
            continue
        took = row.get("duration")
        if isinstance(took, int | float) and took >= 0:
            node = str(row.get("nodeid", ""))
            times[node] = times.get(node, 0.0) + float(took)
    return times


def merged_coverage(records: Sequence[RawCoverage | None]) -> RawCoverage | None:
    """The shares' records as one run's (None when one is missing: that
    share's run ended early). What ran outside the tests, or at a test
    file's import, in any share is the run's."""
    if any(record is None for record in records):
        return None
    whole = [r for r in records if r is not None]
    if len(whole) == 1:
        return whole[0]
    merged = RawCoverage()
    imports: dict[str, frozenset[Where]] = {}
    collected: dict[str, tuple[str, ...]] = {}
    for record in whole:
        merged.tests.update(record.tests)
        merged.opaque.update(record.opaque)
        merged.reads.update(record.reads)
        merged.shared |= record.shared
        merged.test_lines.update(record.test_lines)
        _add_lines(merged.shared_lines, record.shared_lines)
        for file, lines in record.import_lines.items():
            _add_lines(merged.import_lines.setdefault(file, {}), lines)
        for file, ran in record.imports.items():
            imports[file] = imports.get(file, frozenset()) | ran
        for file, nodes in record.collected.items():
            collected[file] = tuple(dict.fromkeys((*collected.get(file, ()), *nodes)))
    merged.imports, merged.collected = imports, collected
    merged.files = tuple(sorted({f for r in whole for f in r.files}))
    return merged


def _add_lines(into: dict[Where, frozenset[int]], lines: dict[Where, frozenset[int]]) -> None:
    for where, ran in lines.items():
        into[where] = into[where] | ran if where in into else ran


def own_xdist(root: Path) -> bool:
    """The project's own configuration runs pytest-xdist's workers."""
    for word in addopts(root):
        if word in ("-n", "--numprocesses", "-pxdist") or word.startswith(
            ("--numprocesses=", "--dist", "-n")
        ):
            return True
    return False


@dataclass(slots=True)
class _Unit:
    """Tests that go to one share together: a file's, or one test."""

    file: str
    names: list[str]
    weight: float


@dataclass(slots=True)
class _Sums:
    """Learned times summed three ways (see :meth:`Cores._summed`)."""

    by_file: dict[str, float]
    #: ``file::Class`` (any part before a ``::``) -> its tests' times.
    by_prefix: dict[str, float]
    #: A node id without its ``[params]`` -> its cases' times.
    by_base: dict[str, float]

    @staticmethod
    def of(durations: dict[str, float]) -> _Sums:
        by_file: dict[str, float] = {}
        by_prefix: dict[str, float] = {}
        by_base: dict[str, float] = {}
        for node, time in durations.items():
            file = node.split("::")[0]
            by_file[file] = by_file.get(file, 0.0) + time
            base = node.split("[")[0]
            by_base[base] = by_base.get(base, 0.0) + time
            at = node.find("::")
            while at >= 0:
                prefix = node[:at]
                by_prefix[prefix] = by_prefix.get(prefix, 0.0) + time
                at = node.find("::", at + 1)
        return _Sums(by_file, by_prefix, by_base)


class Cores:
    """How a gate's first runs are shared among forks (see the module docstring)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        #: Node id -> its time in the gate's last report that ran it.
        self.durations: dict[str, float] = {}
        self._sums: _Sums | None = None

    def learn(self, durations: dict[str, float]) -> None:
        """The times of a run's tests (:func:`durations_in`)."""
        self.durations.update(durations)
        self._sums = None

    def _summed(self) -> _Sums:
        """The learned times summed by file, by node-id prefix and by
        parametrized base, made once after each :meth:`learn` (a plan
        weighs thousands of names: each a scan of every time was
        quadratic, seconds on the event loop for a large suite)."""
        if self._sums is None:
            self._sums = _Sums.of(self.durations)
        return self._sums

    def _file_weight(self, file: str, names: Sequence[str] | None) -> float:
        if names is None:  # the whole file: the tests of it a report timed
            known = self._summed().by_file.get(file)
            return known if known is not None else UNKNOWN_FILE_S
        return sum(self._weight(n) for n in names)

    def _weight(self, name: str) -> float:
        if name in self.durations:
            return self.durations[name]
        sums = self._summed()
        if "::" in name:  # a class's node id: its timed tests
            inner = sums.by_prefix.get(name)
            if inner is not None:
                return inner
        params = sums.by_base.get(name)
        return params if params is not None else UNKNOWN_TEST_S

    def plan(
        self,
        targets: Sequence[str] | None,
        only: Sequence[str] | None,
        *,
        whole: Iterable[str] = (),
    ) -> list[Share] | None:
        """The shares of a first run of ``targets`` (``only``: its named
        tests), None when it is not worth more than one fork; a file of
        ``whole`` (collected whole for its record) is never cut."""
        if self.workers < 2 or not targets:
            return None
        units = self._units(targets, only)
        total = sum(u.weight for u in units)
        count = min(self.workers, int(total / (SPLIT_FROM_S / 2)), len(units))
        if total < SPLIT_FROM_S or count < 2:
            return None
        part = total / count
        kept = set(whole)
        cut: list[_Unit] = []
        for unit in units:
            cuttable = unit.file not in kept and unit.file not in unit.names
            if only is not None and unit.weight > part and cuttable:
                cut += [_Unit(unit.file, [name], self._weight(name)) for name in unit.names]
            else:
                cut.append(unit)
        if len(cut) < count:
            return None
        # The heaviest first, each to the lightest share (balanced within
        # the heaviest unit's time).
        loads = [0.0] * count
        owner: dict[int, int] = {}
        for at in sorted(range(len(cut)), key=lambda i: -cut[i].weight):
            share = min(range(count), key=loads.__getitem__)
            owner[at] = share
            loads[share] += cut[at].weight
        # A target file no named test is of (the narrowing collects it for
        # its import of a changed name: an ImportError there blocks) goes to
        # the lightest share, collected only.
        named = {u.file for u in units}
        extra: dict[int, list[str]] = {}
        for file in targets if only is not None else ():
            if file not in named and "::" not in file:
                extra.setdefault(min(range(count), key=loads.__getitem__), []).append(file)
        shares: list[Share] = []
        for share in range(count):
            mine = [cut[i] for i in range(len(cut)) if owner[i] == share]
            files = list(dict.fromkeys(u.file for u in mine))
            files += extra.get(share, ())
            if only is None:
                names = [n for u in mine for n in u.names]
                shares.append(Share(tuple(names), None))
            else:
                order = {name: at for at, name in enumerate(only)}
                names = sorted((n for u in mine for n in u.names), key=order.__getitem__)
                shares.append(Share(tuple(files), tuple(names)))
        return shares

    def _units(self, targets: Sequence[str], only: Sequence[str] | None) -> list[_Unit]:
        """The run's tests by file, in the run's order, weighed."""
        named = only if only is not None else targets
        if only is None and not any("::" in t for t in targets):
            return [_Unit(t, [t], self._file_weight(t, None)) for t in targets]
        by_file: dict[str, list[str]] = {}
        for name in named:
            by_file.setdefault(name.split("::")[0], []).append(name)
        units: list[_Unit] = []
        for file, names in by_file.items():
            whole = file in names  # a file's own path: all its tests
            weight = self._file_weight(file, None) if whole else self._file_weight(file, names)
            units.append(_Unit(file, names, weight))
        return units
