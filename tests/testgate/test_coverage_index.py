"""The coverage index: what each test ran, compared with the file before
the run and now, decides which tests a verdict runs, or says why not."""

from __future__ import annotations

from pathlib import Path

from rein.testgate.coverage_index import CoverageIndex, model_of
from rein.testgate.picking import Picker, _under
from rein.testgate.recorder import PARTIAL, RawCoverage, read_coverage
from rein.testgate.selection import TestSelection

MOD = (
    "import os\n\nLIMIT = 3\n\n\n"  # 1-5
    "def f(x):\n    return x + 1\n\n\n"  # 6-9
    "def g(x):\n    return x * 2\n\n\n"  # 10-13
    "class C:\n    size = 1\n\n    @property\n    def h(self):\n"  # 14-18
    "        def inner():\n            return LIMIT\n        return inner()\n"  # 19-21
)
TESTS = "from mod import f, g, C\n\n\ndef test_f():\n    assert f(1)\n"
T = "tests/test_m.py"


def raw(**tests: list[tuple[str, int]] | None) -> RawCoverage:
    """A record of the tests ``test_<name>`` of :data:`T`, each with what it ran."""
    ran = {f"{T}::test_{k}": None if v is None else frozenset(v) for k, v in tests.items()}
    return RawCoverage(
        tests=ran,
        shared=frozenset({("mod.py", 10)}) if "shared_g" in tests else frozenset(),
        collected={T: tuple(ran)},
        files=("mod.py", T),
    )


def index_of(record: RawCoverage, texts: dict[str, str] | None = None) -> CoverageIndex:
    files = {"mod.py": MOD, T: TESTS, **(texts or {})}
    index = CoverageIndex()
    index.add(record, files.get)
    return index


def choose(index: CoverageIndex, now: str, path: str = "mod.py", before: str = MOD):
    disk = {"mod.py": MOD, T: TESTS}
    return index.choose({path: (before, now)}, [T], disk.get)


def test_a_model_sees_functions_and_what_runs_at_import_not_comments_or_moves() -> None:
    model = model_of(MOD)
    assert model is not None
    assert set(model.functions) == {"f", "g", "C.h"}
    # A decorator's line, a nested function's: the method holding them.
    assert [model.function_at(n) for n in (17, 18, 20, 7, 3, 15)] == [
        "C.h",
        "C.h",
        "C.h",
        "f",
        "<module>",
        "<module>",
    ]
    moved = model_of("# a comment\n\n" + MOD.replace("x + 1", "x + 1  # one more"))
    assert moved is not None
    assert (moved.functions, moved.skeleton) == (model.functions, model.skeleton)
    body = model_of(MOD.replace("x * 2", "x * 3"))
    assert body is not None and body.skeleton == model.skeleton
    assert {n for n in model.functions if body.functions[n] != model.functions[n]} == {"g"}
    for module_level in ("LIMIT = 4", "import sys", "size = 2", "@staticmethod"):
        old = {"LIMIT = 4": "LIMIT = 3", "import sys": "import os", "size = 2": "size = 1"}
        text = MOD.replace(old.get(module_level, "@property"), module_level)
        changed = model_of(text)
        assert changed is not None and changed.skeleton != model.skeleton, module_level
    index = CoverageIndex()
    assert index.same_code(MOD, "# a comment\n" + MOD + "\n\n")
    assert not index.same_code(MOD, MOD.replace("x * 2", "x * 3"))
    assert not index.same_code(None, MOD)
    assert model_of("def broken(:\n") is None
    overloads = model_of("def f(): pass\ndef f(x): pass\ndef f(x, y): pass\ndef f(*a): pass\n")
    assert overloads is not None and list(overloads.functions) == ["f", "f#2", "f#3", "f#4"]


def test_the_tests_that_ran_a_changed_function_are_selected_the_others_not() -> None:
    index = index_of(raw(f=[("mod.py", 6), (T, 4)], g=[("mod.py", 10)], h=[("mod.py", 19)]))
    choice = choose(index, MOD.replace("x * 2", "x * 3"))
    assert choice.undecided == {}
    assert choice.selected == {T: [f"{T}::test_g"]}
    assert choice.changed == ["mod.py:g"]
    assert choice.all_recorded  # a run of these tests need not record again
    nested = choose(index, MOD.replace("return LIMIT", "return LIMIT + 1"))
    assert nested.selected == {T: [f"{T}::test_h"]}
    # Comments only: nothing the tests ran changed.
    assert choose(index, MOD + "\n# done\n").selected == {T: []}


def test_a_change_coverage_cannot_decide_is_left_to_the_import_graph_with_why() -> None:
    index = index_of(raw(f=[("mod.py", 6)], g=[("mod.py", 10)], shared_g=[]))
    assert (
        "module level" in choose(index, MOD.replace("LIMIT = 3", "LIMIT = 4")).undecided["mod.py"]
    )
    outside = choose(index, MOD.replace("x * 2", "x * 3")).undecided["mod.py"]
    assert "g ran outside the tests" in outside
    assert (
        "conftest.py"
        in choose(index, "x = 1\n", "tests/conftest.py", "x = 0\n").undecided["tests/conftest.py"]
    )
    assert (
        "no valid coverage record"
        in choose(index, "y = 2\n", "other.py", "y = 1\n").undecided["other.py"]
    )
    # A test file that is gone takes only its own tests with it; a module
    # that is gone voids the record.
    gone = index.choose({"mod.py": (MOD, MOD.replace("x + 1", "x + 2"))}, [], {}.get)
    assert gone.undecided == {}
    assert (
        "no valid coverage record"
        in index.choose({T: (TESTS, TESTS + "#")}, [T], {}.get).undecided[T]
    )
    created = index.choose({"mod.py": (None, MOD)}, [T], {}.get)
    assert "created or deleted" in created.undecided["mod.py"]
    assert "not a Python module" in choose(index, "b", "data.txt", "a").undecided["data.txt"]


def test_a_test_no_run_recorded_and_a_changed_test_file_are_not_decided_by_coverage() -> None:
    record = raw(f=[("mod.py", 6)], traced_away=None)
    record.collected[T] = (*record.collected[T], f"{T}::test_new")
    choice = choose(index_of(record), MOD.replace("x + 1", "x + 2"))
    assert choice.selected == {T: [f"{T}::test_f"]}
    assert choice.unrecorded == {T: [f"{T}::test_traced_away", f"{T}::test_new"]}
    assert not choice.all_recorded
    changed_tests = index_of(record).choose(
        {"mod.py": (MOD, MOD.replace("x + 1", "x + 2")), T: (TESTS, TESTS + "\n")},
        [T],
        {}.get,
    )
    assert changed_tests.unknown == [T]


def test_an_opaque_test_is_never_left_out_by_coverage() -> None:
    record = raw(f=[("mod.py", 6)], child=[(T, 4)])
    record.opaque = {f"{T}::test_child": "it starts a child process"}
    index = index_of(record)
    choice = choose(index, MOD.replace("x * 2", "x * 3"))
    assert choice.selected == {T: []}
    assert choice.opaque == {T: [(f"{T}::test_child", "it starts a child process")]}
    assert choice.all_recorded  # opaque, but recorded: no need to record again
    assert index.opaque_tests([T, "tests/test_other.py"]) == [f"{T}::test_child"]


def test_a_test_that_read_source_text_runs_when_that_text_changed() -> None:
    # parso's tests parse .py data files and its own modules: they depend
    # on those texts, not only on the code they ran.
    data = "tests/cases/case.py"
    record = raw(f=[("mod.py", 6)], read=[(T, 4)])
    record.reads = {f"{T}::test_read": (data,)}
    index = index_of(record, {data: "x = 1\n"})
    disk = {"mod.py": MOD, T: TESTS, data: "x = 1\n"}
    change = {"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))}
    assert index.choose(change, [T], disk.get).selected == {T: []}
    assert index.reading_tests([T], change, disk.get) == []
    # The text it read differs (since the recording, or by the run): it runs.
    disk[data] = "x = 1  # another text\n"
    assert index.choose(change, [T], disk.get).selected == {T: [f"{T}::test_read"]}
    assert index.reading_tests([T], change, disk.get) == [f"{T}::test_read"]


def test_a_test_file_collected_with_no_test_is_known_not_unknown() -> None:
    # Markdown's markdown/test_tools.py (a helper named test_*.py): unknown,
    # it sent every verdict selecting it to the names, and to a recording.
    helper = "tests/test_tools.py"
    record = raw(f=[("mod.py", 6)])
    record.collected[helper] = ()
    index = index_of(record, {helper: "def helper():\n    return 1\n"})
    disk = {"mod.py": MOD, T: TESTS, helper: "def helper():\n    return 1\n"}
    choice = index.choose({"mod.py": (MOD, MOD.replace("x + 1", "x + 2"))}, [T, helper], disk.get)
    assert (choice.unknown, choice.unrecorded) == ([], {})
    assert choice.selected == {T: [f"{T}::test_f"], helper: []}
    assert choice.all_recorded


def test_a_module_level_change_since_the_recording_outside_the_run_voids_the_record() -> None:
    index = index_of(raw(f=[("mod.py", 6)]), {"util.py": "A = 1\n"})
    index.add(
        RawCoverage(
            tests={f"{T}::test_f": frozenset({("mod.py", 6)})},
            collected={T: (f"{T}::test_f",)},
            files=("mod.py", "util.py", T),
        ),
        {"mod.py": MOD, T: TESTS, "util.py": "A = 1\n"}.get,
    )
    disk = {"mod.py": MOD, T: TESTS, "util.py": "A = 2\n"}
    choice = index.choose({"mod.py": (MOD, MOD.replace("x + 1", "x + 2"))}, [T], disk.get)
    # The newer record replaced the older one, and is not used.
    assert "util.py changed at module level" in choice.undecided["mod.py"]
    # A function that differs since the recording (not by the run)
    # selects the tests that ran it too.
    drift = MOD.replace("x * 2", "x * 5")
    index = index_of(raw(f=[("mod.py", 6)], g=[("mod.py", 10)], h=[("mod.py", 18)]))
    choice = index.choose({"mod.py": (drift, drift.replace("x + 1", "x + 2"))}, [T], {T: TESTS}.get)
    assert choice.selected == {T: [f"{T}::test_f", f"{T}::test_g"]}


def test_the_index_is_bounded_and_a_newer_record_replaces_an_older_one() -> None:
    index = CoverageIndex(max_snapshots=2)
    texts = {"mod.py": MOD, T: TESTS}.get
    for n in range(4):
        index.add(raw(**{f"n{n}": [("mod.py", 6)]}), texts)
    assert len(index) == 2
    index.add(raw(n3=[("mod.py", 10)]), texts)
    assert len(index) == 2  # n3's older record replaced; n2's kept
    choice = choose(index, MOD.replace("x * 2", "x * 3"))
    assert choice.selected == {T: [f"{T}::test_n3"]}


def test_a_record_that_cannot_be_read_is_none_and_prefixes_match_as_the_plugin_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "coverage.json"
    assert read_coverage(path) is None
    path.write_text('{"tests": {}}')
    assert read_coverage(path) is None
    assert _under("a.py::C::test_x[1]", ("a.py::C",))
    assert _under("a.py::test_x[1]", ("a.py::test_x",))
    assert not _under("a.py::test_xy", ("a.py::test_x",))


def test_when_the_names_decide_an_opaque_test_runs_too(tmp_path: Path) -> None:
    tests = "from mod import g\n\n\ndef test_g():\n    assert g(1) == 2\n\n\ndef test_child():\n    pass\n"
    (tmp_path / "tests").mkdir()
    (tmp_path / "mod.py").write_text(MOD)
    (tmp_path / T).write_text(tests)
    record = raw(g=[("mod.py", 10)], child=[(T, 8)], shared_g=[])
    record.opaque = {f"{T}::test_child": "it starts a child process"}
    picker = Picker(tmp_path)
    picker.index.add(record, {"mod.py": MOD, T: tests}.get)
    selection = TestSelection((T,), False, "imports", modules=("mod.py",))
    picked = picker.pick(selection, {"mod.py": (MOD, MOD.replace("x * 2", "x * 3"))})
    # g ran at import too: coverage cannot decide, the names do, and the
    # opaque test (it names nothing the change reaches) runs all the same.
    assert "g ran outside the tests" in picked.note
    assert picked.only == (f"{T}::test_g", f"{T}::test_child")
    assert picked.files == (T,)
    assert "and 1 tests whose record cannot see all they run" in picked.note


def _picker(tmp_path: Path) -> Picker:
    """A picker of a workspace with ``mod.py`` and its tests."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "mod.py").write_text(MOD)
    (tmp_path / T).write_text(TESTS)
    return Picker(tmp_path)


def test_runs_coverage_cannot_decide_stop_paying_for_records_until_it_decides_again(
    tmp_path: Path,
) -> None:
    # attrs: every change reached module-level code, no verdict was decided
    # by coverage, and every first run paid the recording tracer (2.1x its
    # full suite). Two undecided runs record, then every fourth; a decided
    # choice starts the count again.
    picker = _picker(tmp_path)
    selection = TestSelection((T,), False, "imports", modules=("mod.py",))
    module_level = {"mod.py": (MOD, MOD.replace("LIMIT = 3", "LIMIT = 4"))}  # no function changed
    records = [picker.pick(selection, module_level).record for _ in range(9)]
    assert records == [True, True, False, True, False, False, False, True, False]
    picker.index.add(raw(f=[("mod.py", 7)]), {"mod.py": MOD, T: TESTS}.get)
    decided = picker.pick(selection, {"mod.py": (MOD, MOD.replace("x + 1", "x + 2"))})
    assert decided.only == (f"{T}::test_f",)
    assert [picker.pick(selection, module_level).record for _ in range(3)] == [True, True, False]


def test_whole_suite_runs_record_twice_then_only_once_coverage_has_decided(
    tmp_path: Path,
) -> None:
    # attrs: its changes reach the class builder that every test module
    # runs, so each verdict ran its 24 test files whole, and a recorded run
    # took 2.2-2.4 times the suite, for records that never decided one;
    # click's first whole-suite records let coverage decide later verdicts.
    picker = _picker(tmp_path)
    whole = TestSelection((T,), False, "imports", total_files=1, modules=("mod.py",))
    module_level = {"mod.py": (MOD, MOD.replace("LIMIT = 3", "LIMIT = 4"))}  # no function changed
    picked = [picker.pick(whole, module_level) for _ in range(8)]
    assert {p.only for p in picked} == {None}
    # The undecided runs' rule alone: True, True, False, True, ..., True.
    assert [p.record for p in picked] == [True, True, False, False, False, False, False, False]
    picker.index.add(raw(f=[("mod.py", 7)]), {"mod.py": MOD, T: TESTS}.get)
    # A file restored (a repair undoing the change) is no decision: a
    # stale record decides any; a change of code is.
    assert picker.pick(whole, {"mod.py": (MOD, MOD)}).by_coverage
    assert [picker.pick(whole, module_level).record for _ in range(2)] == [False, False]
    assert picker.pick(whole, {"mod.py": (MOD, MOD.replace("x + 1", "x + 2"))}).only
    assert [picker.pick(whole, module_level).record for _ in range(3)] == [True, True, False]


def test_a_run_that_traced_some_tests_leaves_the_others_their_earlier_records() -> None:
    # The first run traced every test; a later one (all three collected)
    # only the new one: the others ran untraced, their records still good.
    first = raw(f=[("mod.py", 6)], g=[("mod.py", 10)], child=[(T, 4)])
    first.opaque = {f"{T}::test_child": "it starts a child process"}
    index = index_of(first)
    later = raw(new=[("mod.py", 10)])
    later.collected[T] = (f"{T}::test_f", f"{T}::test_g", f"{T}::test_child", f"{T}::test_new")
    index.add(later, {"mod.py": MOD, T: TESTS}.get)
    choice = choose(index, MOD.replace("x * 2", "x * 3"))
    assert choice.selected == {T: [f"{T}::test_g", f"{T}::test_new"]}
    assert choice.opaque == {T: [(f"{T}::test_child", "it starts a child process")]}
    assert choice.all_recorded
    assert choice.recorded == {f"{T}::{n}" for n in ("test_f", "test_g", "test_child", "test_new")}
    # The names' choice still runs the opaque test the older run recorded.
    assert index.opaque_tests([T]) == [f"{T}::test_child"]
    # A test no run recorded is not among those a recording run skips.
    unknown = raw(f=[("mod.py", 6)])
    unknown.collected[T] = (f"{T}::test_f", f"{T}::test_brand_new")
    index.add(unknown, {"mod.py": MOD, T: TESTS}.get)
    choice = choose(index, MOD.replace("x * 2", "x * 3"))
    assert f"{T}::test_brand_new" not in choice.recorded
    assert not choice.all_recorded


def test_a_record_void_for_what_ran_outside_the_tests_records_no_test() -> None:
    # g ran at import and changed on disk since: the record is not used,
    # so none of its tests counts as recorded (a recording run traces them).
    index = index_of(raw(f=[("mod.py", 6)], shared_g=[("mod.py", 10)]))
    disk = {"mod.py": MOD.replace("x * 2", "x * 3"), T: TESTS}
    choice = index.choose({}, [T], disk.get)
    assert choice.recorded == frozenset()
    assert not choice.all_recorded


def test_an_older_record_kept_for_an_undone_change_decides_only_what_it_knows() -> None:
    # A newer run recorded g, run outside the tests, with other code (a
    # seed since undone): the older record is kept (it is good again once
    # the newer is void). It has g in no test's way: a change of g is
    # still not decided by it, since the newer saw g run outside the tests.
    index = index_of(raw(f=[("mod.py", 6)]))
    newer = raw(f=[("mod.py", 6)], shared_g=[])
    index.add(newer, {"mod.py": MOD.replace("x * 2", "x * 9"), T: TESTS}.get)
    assert len(index) == 2
    assert (
        "g ran outside the tests"
        in choose(index, MOD.replace("x * 2", "x * 3")).undecided["mod.py"]
    )
    # A change elsewhere is decided by the older record.
    assert choose(index, MOD.replace("x + 1", "x + 2")).selected == {T: [f"{T}::test_f"]}
    # Recorded again with the same code: the oldest goes (the one with
    # g at x * 9 stays, for g may be so again).
    index.add(newer, {"mod.py": MOD, T: TESTS}.get)
    assert len(index) == 2


def test_a_tests_record_made_with_code_undone_since_gives_way_to_an_older_one() -> None:
    # The newer run recorded test_fg while g was otherwise (a seed, undone
    # since): by it, any change runs test_fg again, for g "changed". The
    # older record, made with g as it is before the run, tells the truth.
    index = index_of(raw(fg=[("mod.py", 6), ("mod.py", 10)], f=[("mod.py", 6)]))
    seeded = MOD.replace("x * 2", "x * 9")
    index.add(raw(fg=[("mod.py", 6), ("mod.py", 10)]), {"mod.py": seeded, T: TESTS}.get)
    assert len(index) == 2
    inner = MOD.replace("return LIMIT", "return LIMIT + 1")
    choice = choose(index, inner)
    assert choice.selected == {T: []}
    # With only the newer record, test_fg runs.
    alone = index_of(raw(fg=[("mod.py", 6), ("mod.py", 10)]), {"mod.py": seeded})
    assert choose(alone, inner).selected == {T: [f"{T}::test_fg"]}


def test_an_older_record_of_another_path_does_not_stand_for_the_newest() -> None:
    """review32 (MEDIUM): the older record saw test_t run f alone, the
    newer (g seeded, undone since) f and g: what steered it into g is
    nothing a snapshot compares (a data file, state). A change of g runs it."""
    index = index_of(raw(t=[("mod.py", 6)], o=[("mod.py", 6)]))
    seeded = MOD.replace("x * 2", "x * 9")
    index.add(raw(t=[("mod.py", 6), ("mod.py", 10)]), {"mod.py": seeded, T: TESTS}.get)
    assert choose(index, MOD.replace("x * 2", "x * 3")).selected == {T: [f"{T}::test_t"]}


def test_a_line_set_the_recorder_left_partial_tells_nothing_by_line() -> None:
    def index(lines: frozenset[int]) -> CoverageIndex:
        record = raw(t=[("mod.py", 6)])
        record.test_lines = {f"{T}::test_t": {("mod.py", 6): lines}}
        return index_of(record)

    changed = MOD.replace("x + 1", "x + 2")  # line 7
    # Its record says it ran f's first line alone: left out, by line.
    assert choose(index(frozenset({6})), changed).selected == {T: []}
    # The recorder stopped tracing f by line (a hot function): it runs.
    partial = frozenset({6, PARTIAL})
    assert choose(index(partial), changed).selected == {T: [f"{T}::test_t"]}
