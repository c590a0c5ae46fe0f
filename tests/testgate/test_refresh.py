"""Stale records made again off the verdict's path (:mod:`rein.testgate.refresh`):
a test whose only record was made while the run's change was in place runs
at every later verdict until it is recorded again; after the judgement
that met it, the gate records it again on the code before the run, and the
next verdict leaves it out. A judgement stops a refresh under way."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rein.process.kept import KeptProcessLauncher
from rein.testgate.coverage_index import CoverageIndex
from rein.testgate.picking import Picker
from rein.testgate.recorder import RawCoverage
from rein.testgate.refresh import Refresh
from rein.testgate.selection import TestSelection
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict

MOD = "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n"
TESTS = (
    "from mod import f, g\n\n\n"
    "def test_f():\n    assert f(1) == 2\n\n\n"
    "def test_g():\n    assert g(2) == 4\n"
)
T = "tests/test_mod.py"


async def test_a_stale_record_is_made_again_after_the_judgement_that_met_it(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {"mod.py": MOD, T: TESTS})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        # A seed in f, judged by the names (no record yet): its run records
        # test_f running f as seeded.
        await changed(gate, workspace, "mod.py", MOD.replace("x + 1", "x + 2"))
        seeded = await verdict(gate, workspace, "mod.py")
        assert [b.message.split(" failed")[0] for b in seeded.blockers] == [f"{T}::test_f"]
        gate.on_validated(2)
        workspace.buffers["mod.py"] = (MOD, 2)  # undone
        assert await gate.warm_ready(60)

        # A change of g: test_f never ran g, but its only record says it
        # ran an f that is not f any more: it runs; then it is recorded again.
        await changed(gate, workspace, "mod.py", MOD.replace("x * 2", "x * 3"))
        first = await verdict(gate, workspace, "mod.py")
        assert first.detail.startswith("1 of 2 tests passed"), first.detail
        assert "selected by coverage: 1 tests ran a changed function (mod.py:f, " in first.detail
        assert [b.message.split(" failed")[0] for b in first.blockers] == [f"{T}::test_g"]
        await gate.refresh.settled()
        assert gate.refresh.ended == 1
        # No verdict's phase, warm run or sight of the workspace.
        assert "refresh_pytest" not in gate.timings and "refresh" not in gate.warm_runs
        assert gate._picker.stale_tests(10) == []
        gate.on_validated(2)
        workspace.buffers["mod.py"] = (MOD, 2)

        # Another change of g: test_f's record is good now, and it stays out.
        await changed(gate, workspace, "mod.py", MOD.replace("x * 2", "x * 4"))
        again = await verdict(gate, workspace, "mod.py")
        assert again.detail.startswith("0 of 1 tests passed"), again.detail
        assert [b.message.split(" failed")[0] for b in again.blockers] == [f"{T}::test_g"]
    finally:
        await gate.close()


def _stale_picker(tmp_path: Path) -> Picker:
    """A picker whose one record of test_f was made with f seeded."""
    picker = Picker(tmp_path)
    seeded = MOD.replace("x + 1", "x + 2")
    raw = RawCoverage(
        tests={f"{T}::test_f": frozenset({("mod.py", 1)})},
        collected={T: (f"{T}::test_f",)},
        files=("mod.py", T),
    )
    picker.record(raw, {"mod.py": seeded, T: TESTS})
    selection = TestSelection(files=(T,), run_all=False, reason="", total_files=1)
    (tmp_path / T).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / T).write_text(TESTS, encoding="utf-8")
    picked = picker.pick(selection, {"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))})
    assert picked.by_coverage and picked.only == (f"{T}::test_f",)
    return picker


def test_the_picker_keeps_the_stale_tests_until_a_record_or_a_refresh_of_them(
    tmp_path: Path,
) -> None:
    picker = _stale_picker(tmp_path)
    assert picker.stale_tests(10) == [f"{T}::test_f"]
    picker.refreshed([f"{T}::test_f"])
    assert picker.stale_tests(10) == []
    picker = _stale_picker(tmp_path / "again")
    picker.record(
        RawCoverage(tests={f"{T}::test_f": frozenset({("mod.py", 1)})}, files=("mod.py", T)),
        {"mod.py": MOD, T: TESTS},
    )
    assert picker.stale_tests(10) == []


class _HeldRuns:
    """A refresh's runs that end only when told, and whose kill takes until
    ``killed`` is set (a fake of ShadowRuns)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.killed = asyncio.Event()
        self.killed.set()
        self.cancelled = 0
        self.stopping = asyncio.Event()
        self.runs = 0

    async def refresh(self, nodes: object, baseline: object, deadline: float) -> bool:
        self.runs += 1
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            self.stopping.set()
            await self.killed.wait()
            raise
        return True


async def _started(runs: _HeldRuns) -> None:
    async with asyncio.timeout(30):
        await runs.started.wait()
    runs.started.clear()


async def test_stopping_a_refresh_stops_its_run_and_its_tests_stay_stale(tmp_path: Path) -> None:
    picker = _stale_picker(tmp_path)
    runs = _HeldRuns()
    refresh = Refresh(runs, picker, 60.0)  # type: ignore[arg-type]
    refresh.start({})
    await _started(runs)
    await refresh.stop()
    assert runs.cancelled == 1 and refresh.ended == 0
    assert picker.stale_tests(10) == [f"{T}::test_f"]
    refresh.start({})
    await _started(runs)
    runs.release.set()
    await refresh.settled()
    assert (runs.runs, refresh.ended, picker.stale_tests(10)) == (2, 1, [])


async def test_whoever_waits_for_a_refresh_to_stop_can_be_stopped_itself(tmp_path: Path) -> None:
    """review (HIGH): a judgement ahead made stale while it waited for the
    refresh's kill went on to run its tests; the stop must let it go."""
    runs = _HeldRuns()
    refresh = Refresh(runs, _stale_picker(tmp_path), 60.0)  # type: ignore[arg-type]
    refresh.start({})
    await _started(runs)
    runs.killed.clear()  # the refresh's kill takes a while
    judgement = asyncio.ensure_future(refresh.stop())
    async with asyncio.timeout(30):
        await runs.stopping.wait()  # the refresh was told to stop
    judgement.cancel()
    runs.killed.set()
    async with asyncio.timeout(30):
        await asyncio.wait([judgement])
    assert judgement.cancelled()


async def test_no_refresh_when_the_run_changed_a_data_file_or_a_text_before_is_unknown(
    tmp_path: Path,
) -> None:
    runs = _HeldRuns()
    runs.release.set()
    refresh = Refresh(runs, _stale_picker(tmp_path), 60.0)  # type: ignore[arg-type]
    refresh.start({"mod.py": MOD, "data.json": "{}"})
    refresh.start({"mod.py": MOD}, ["other.py"])
    await refresh.settled()
    assert runs.runs == 0
    refresh.start({"mod.py": MOD})
    await refresh.settled()
    assert (runs.runs, refresh.ended) == (1, 1)


def test_a_whole_suites_record_outlives_small_ones_past_the_bound() -> None:
    index = CoverageIndex(max_snapshots=2)
    texts = {"mod.py": MOD, T: TESTS}.get
    every = (f"{T}::test_f", f"{T}::test_g", f"{T}::test_h")
    index.add(
        RawCoverage(
            tests={n: frozenset({("mod.py", 1)}) for n in every},
            collected={T: every},
            files=("mod.py", T),
        ),
        texts,
    )
    for name in ("test_f", "test_g"):  # two small records since, each of one test
        index.add(
            RawCoverage(tests={f"{T}::{name}": frozenset({("mod.py", 5)})}, files=("mod.py", T)),
            texts,
        )
    assert len(index) == 2
    choice = index.choose({"mod.py": (MOD, MOD.replace("x + 1", "x + 5"))}, [T], texts)
    # The whole suite's record is kept (test_h's only one) and the older
    # small one went: test_f, which ran another path there, is unrecorded
    # (not judged by the whole suite's); test_g's newest ran g only.
    assert choice.selected == {T: [f"{T}::test_h"]}
    assert choice.unrecorded == {T: [f"{T}::test_f"]}


def _raw(tests: dict[str, int], listed: tuple[str, ...] = ()) -> RawCoverage:
    """A record of :data:`T`'s tests, each running the function at a line
    of :data:`MOD` (1: f, 5: g); ``listed``: the file's tests it lists."""
    return RawCoverage(
        tests={f"{T}::{n}": frozenset({("mod.py", line)}) for n, line in tests.items()},
        collected={T: tuple(f"{T}::{n}" for n in listed)} if listed else {},
        files=("mod.py", T),
    )


def test_past_the_bound_the_newest_record_stays_whatever_its_size() -> None:
    index = CoverageIndex(max_snapshots=1)
    texts = {"mod.py": MOD, T: TESTS}.get
    index.add(_raw({"test_f": 1, "test_g": 5, "test_h": 1}, ("test_f", "test_g", "test_h")), texts)
    index.add(_raw({"test_g": 5}), texts)
    choice = index.choose({"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))}, [T], texts)
    assert len(index) == 1
    assert choice.unknown == [T]  # the whole suite's list went with it, not the newest


def test_a_record_void_before_the_run_goes_first_past_the_bound() -> None:
    index = CoverageIndex(max_snapshots=2)
    old = "LIMIT = 3\n\n\n" + MOD
    index.add(
        _raw({"test_f": 4, "test_g": 8, "test_h": 4}, ("test_f", "test_g", "test_h")),
        {"mod.py": old, T: TESTS}.get,
    )
    texts = {"mod.py": MOD, T: TESTS}.get
    index.add(_raw({"test_f": 1}, ("test_f", "test_g", "test_h")), texts)
    # The module changed at module level since the whole suite's record.
    index.choose({"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))}, [T], texts)
    index.add(_raw({"test_g": 5}), texts)
    assert len(index) == 2
    choice = index.choose({"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))}, [T], texts)
    # The void record went although it held the most tests of its own.
    assert choice.unrecorded == {T: [f"{T}::test_h"]}
    assert choice.selected == {T: [f"{T}::test_g"]}


def test_a_dropped_record_leaves_a_test_of_another_older_path_unrecorded() -> None:
    index = CoverageIndex(max_snapshots=2)
    texts = {"mod.py": MOD, T: TESTS}.get
    every = ("test_f", "test_g", "test_h")
    index.add(_raw({"test_f": 5, "test_g": 5, "test_h": 1}, every), texts)  # test_f: g
    index.add(_raw({"test_f": 1}), texts)  # test_f since: f, another path
    index.add(_raw({"test_g": 5}), texts)  # the newest; the second goes
    assert len(index) == 2
    choice = index.choose({"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))}, [T], texts)
    # Not judged by the older path (it ran g there): unrecorded, chosen by names.
    assert choice.unrecorded == {T: [f"{T}::test_f"]}
    assert choice.selected == {T: [f"{T}::test_g"]}
