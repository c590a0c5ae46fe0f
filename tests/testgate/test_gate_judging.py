"""What the tests gate makes of a run: node ids as pytest has them, no
verdict from a run that stopped early or a re-run that did not run the
test, and never "passed" when it did not see the tests pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.testgate import shadow_runs
from rein.testgate.shadow import sync_shadow
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import BAD, GOOD, changed, gate_for, project, verdict, verdict_on

TWO = "from mod import first_n\n\n\ndef test_two():\n    assert first_n([1, 2, 3], 2) == [1, 2]\n"
#: A project whose tests and their pytest configuration are in backend/.
SUBPROJECT = {
    "backend/pytest.ini": "[pytest]\npythonpath = .\n",
    "backend/mod.py": GOOD,
    "backend/tests/test_m.py": TWO,
}
#: What the gate times of each run.
RUN_PARTS = ("shadow", "pytest")


async def test_node_ids_in_a_subproject_with_its_own_config_are_the_workspaces(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", SUBPROJECT)
    outcome = await verdict_on(root, "backend/mod.py", BAD)

    assert outcome.unverified is None
    assert [(b.message, b.path) for b in outcome.blockers] == [
        (
            "backend/tests/test_m.py::test_two failed: assert [1, 2, 3] == [1, 2]",
            "backend/tests/test_m.py",
        )
    ]


async def test_an_inherited_test_has_the_node_id_of_the_file_that_collects_it(
    tmp_path: Path,
) -> None:
    base = "from mod import first_n\n\n\nclass Base:\n    def test_two(self):\n"
    base += "        assert first_n([1, 2, 3], 2) == [1, 2]\n"
    root = project(
        tmp_path / "proj",
        {
            "mod.py": GOOD,
            "tests/__init__.py": "",
            "tests/base.py": base,
            "tests/test_k.py": "from tests.base import Base\n\n\nclass TestK(Base):\n    pass\n",
        },
    )
    outcome = await verdict_on(root, "mod.py", BAD)

    assert outcome.unverified is None
    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_k.py::TestK::test_two"
    ]


async def test_a_projects_exitfirst_does_not_hide_the_broken_test(tmp_path: Path) -> None:
    tests = "from mod import first_n\n\n\ndef test_a_old():\n    assert not first_n, 'old'\n\n\n"
    tests += TWO.split("\n\n\n", 1)[1]
    root = project(
        tmp_path / "proj",
        {"pytest.ini": "[pytest]\naddopts = -x\n", "mod.py": GOOD, "tests/test_m.py": tests},
    )
    outcome = await verdict_on(root, "mod.py", BAD)

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_two"
    ]
    assert "tests/test_m.py::test_a_old" in outcome.detail


async def test_the_rerun_runs_in_a_fresh_shadow(tmp_path: Path) -> None:
    # Import-time setup that fails the second time in the same folder.
    tests = "import os\n\nfrom mod import first_n\n\nos.mkdir('scratch')\n\n\n"
    tests += TWO.split("\n\n\n", 1)[1]
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": tests})
    outcome = await verdict_on(root, "mod.py", BAD)

    assert "flaky" not in outcome.detail
    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_two"
    ]


async def test_a_test_whose_file_the_rerun_cannot_import_is_not_flaky(tmp_path: Path) -> None:
    marker = tmp_path / "ran-once"
    # The second import of the file with the change fails: the re-run has
    # no result for the test, only its file's collection error (the
    # baseline's import, beside the first run, is not one). (Its second
    # call, in the first run's process, fails another way: it goes to the
    # fresh re-run.) It did not pass again: not flaky, and as it passed
    # before the run, the run's. Until 2026-12-07 the re-run named the node
    # id, pytest refused it ("found no collectors") and the verdict was
    # unverified.
    tests = (
        f"from pathlib import Path\n\nfrom mod import first_n\n\nMARKER = Path({str(marker)!r})\n"
        "if first_n([1, 2, 3], 2) != [1, 2]:  # not in the baseline\n"
        "    if MARKER.exists():\n        raise RuntimeError('second import')\n"
        "    MARKER.touch()\n"
        "CALLS = []\n\n\n"
        "def test_two():\n    CALLS.append(1)\n    assert len(CALLS) == 1, 'called again'\n"
        "    assert first_n([1, 2, 3], 2) == [1, 2]\n"
    )
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": tests})
    outcome = await verdict_on(root, "mod.py", BAD)

    assert [b.message.split(":")[0] for b in outcome.blockers] == ["tests/test_m.py"]
    assert outcome.blockers[0].message.startswith("tests/test_m.py::test_two failed")
    assert outcome.unverified is None and "flaky" not in outcome.detail


async def test_test_files_left_out_by_max_tests_make_the_verdict_unverified(
    tmp_path: Path,
) -> None:
    each = "from mod import first_n\n\n\ndef test_{n}():\n    assert first_n([1], 1) == [1]\n"
    files = {f"tests/test_{n}.py": each.format(n=n) for n in range(3)}
    root = project(tmp_path / "proj", {"mod.py": GOOD, **files})
    outcome = await verdict_on(root, "mod.py", GOOD + "\n", maxTests=1)

    assert outcome.blockers == []
    assert outcome.unverified == (
        "2 test file(s) the change reaches were not run (gates.tests.maxTests: 1)"
    )
    assert outcome.detail.startswith("1 of 1 tests passed")


async def test_tests_that_failed_before_and_after_and_none_passing_is_unverified(
    tmp_path: Path,
) -> None:
    missing = "import not_installed_anywhere_xyz\nfrom mod import first_n\n\n\n"
    missing += TWO.split("\n\n\n", 1)[1]
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": missing})
    outcome = await verdict_on(root, "mod.py", BAD)

    assert outcome.blockers == []
    assert outcome.unverified is not None
    assert outcome.unverified.startswith("none of the 1 tests that ran passed")


async def test_trouble_building_the_shadow_is_unverified_not_a_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_room(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shadow_runs, "sync_shadow", no_room)
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": TWO})
    outcome = await verdict_on(root, "mod.py", BAD)

    assert outcome.blockers == []
    assert outcome.unverified == (
        "the tests could not be run: OSError: [Errno 28] No space left on device"
    )


async def test_a_changed_test_file_in_a_subproject_that_does_not_import_blocks(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", SUBPROJECT)
    outcome = await verdict_on(root, "backend/tests/test_m.py", TWO + "\ndef oops(:\n")

    assert [b.message for b in outcome.blockers] == [
        "backend/tests/test_m.py cannot be collected (importing it or making its tests failed)"
    ]


async def test_the_baseline_runs_only_the_failing_tests_and_the_kept_shadows_see_a_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python writes compiled modules in the kept shadows, as for a person.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    log = tmp_path / "runs.log"
    # test_other passes and writes a line each time it runs, in any shadow.
    tests = TWO + (
        f"\n\ndef test_other():\n    assert first_n\n    with open({str(log)!r}, 'a') as out:\n"
        "        out.write('ran\\n')\n"
    )
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": tests})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", BAD)
    outcome = await verdict(gate, workspace, "mod.py")

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_two"
    ]
    # The first run only: neither the re-run nor the baseline ran it.
    assert log.read_text() == "ran\n"
    # test_two failed again the same way in the first run's own process: no
    # fresh re-run.
    phases = {f"{run}_{part}" for run in ("first", "baseline") for part in RUN_PARTS}
    assert set(gate.timings) == {
        "select",
        "narrow",
        "first_record",
        "after_first",
        "waves",
        "confirmed",
        "own_before_first",
        "first_to_verdict",
        "judgement",
        *phases,
    }
    assert all(seconds >= 0 for seconds in gate.timings.values())

    # The repair, the same size as the broken text: neither that text nor
    # its compiled module in the kept shadow stands for it.
    fixed = BAD.replace("n + 1", "n + 0")
    assert len(fixed) == len(BAD)
    workspace.buffers["mod.py"] = (fixed, 3)
    repaired = await verdict(gate, workspace, "mod.py")

    assert (repaired.blockers, repaired.unverified) == ([], None)
    # The test that ran first_n runs again (by coverage), and passes: the
    # repair is what the shadow holds; the one only naming it does not run.
    assert repaired.detail.startswith("1 of 1 tests passed"), repaired.detail
    assert "selected by coverage: 1 tests ran a changed function (mod.py:first_n)" in (
        repaired.detail
    )


async def test_trouble_building_a_later_shadow_is_unverified_not_a_blocker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []

    async def room_once(*args: object, **kwargs: object) -> object:
        if built:
            raise OSError(28, "No space left on device")
        built.append(await sync_shadow(*args, **kwargs))  # type: ignore[arg-type]
        return built[0]

    monkeypatch.setattr(shadow_runs, "sync_shadow", room_once)
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": TWO})
    outcome = await verdict_on(root, "mod.py", BAD)

    assert outcome.blockers == []
    assert outcome.unverified == (
        "the tests could not be run: OSError: [Errno 28] No space left on device"
    )


async def test_a_failing_test_the_run_added_to_a_test_file_blocks(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": TWO})
    added = TWO + "\n\ndef test_new():\n    assert first_n([1], 0) == [1]\n"
    outcome = await verdict_on(root, "tests/test_m.py", added)

    # The baseline has no test_new to run (pytest is not refused): the run's.
    assert outcome.unverified is None
    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_m.py::test_new"
    ]


async def test_a_test_file_that_cannot_be_collected_is_only_collected_in_the_baseline(
    tmp_path: Path,
) -> None:
    # The run removes a name test_b.py imports: it cannot be collected now,
    # and could be before the run. test_c.py could not be collected before
    # the run either. Each test logs its call and the VALUE it saw.
    log = tmp_path / "calls.log"
    each = (
        "import mod\n{head}\n\n\n"
        "def test_{n}():\n"
        f"    with open({str(log)!r}, 'a') as out:\n"
        "        out.write(f'{n} {{mod.VALUE}}\\n')\n"
    )
    mod = "VALUE = 1\n\n\ndef helper():\n    return VALUE\n"
    root = project(
        tmp_path / "proj",
        {
            "mod.py": mod,
            "tests/test_b.py": each.format(head="from mod import helper", n="b"),
            "tests/test_c.py": each.format(head="import not_installed_anywhere", n="c"),
        },
    )
    workspace = FakeWorkspace({"mod.py": mod}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", "VALUE = 2\n")
    outcome = await verdict(gate, workspace, "mod.py")

    assert [b.message.split(" cannot")[0] for b in outcome.blockers] == ["tests/test_b.py"]
    assert "failing before the run too (not blocking): tests/test_c.py" in outcome.detail
    # The baseline imported test_b.py and ran none of its tests (without
    # collect_only: "b 1", its whole file run to tell that it imports).
    assert not log.exists()
    assert shadow_runs.collect_only("tests/test_b.py") == (
        f"tests/test_b.py::{shadow_runs.NO_TEST}"
    )
    assert shadow_runs.collect_only("tests/test_b.py::test_b") == "tests/test_b.py::test_b"


async def test_a_collection_error_made_with_the_tests_is_judged_against_the_baseline(
    tmp_path: Path,
) -> None:
    # Each file imports; pytest fails making its tests. test_c.py (a
    # parametrize of 3 names given 2 values) and test_d.py (its
    # pytest_generate_tests calls a name mod lacks) failed so before the
    # run too; test_e.py's parametrize uses mod.more, which the run removes.
    log = tmp_path / "calls.log"
    call = f"    with open({str(log)!r}, 'a') as out:\n        out.write(f'{{n}} {{{{mod.VALUE}}}}\\n')\n"
    mod = "VALUE = 1\n\n\ndef cases():\n    return [(1, 2)]\n\n\ndef more():\n    return [1]\n"
    test_c = (
        "import pytest\nimport mod\n\n\n@pytest.mark.parametrize('a,b,c', mod.cases())\n"
        "def test_c(a, b, c):\n" + call.format(n="c")
    )
    test_d = (
        "import mod\n\n\ndef pytest_generate_tests(metafunc):\n"
        "    metafunc.parametrize('n', mod.missing_cases())\n\n\n"
        "def test_d(n):\n" + call.format(n="d")
    )
    test_e = (
        "import pytest\nimport mod\n\n\n@pytest.mark.parametrize('n', getattr(mod, 'more')())\n"
        "def test_e(n):\n" + call.format(n="e")
    )
    root = project(
        tmp_path / "proj",
        {
            "mod.py": mod,
            "tests/test_c.py": test_c,
            "tests/test_d.py": test_d,
            "tests/test_e.py": test_e,
            "tests/test_ok.py": "import mod\n\n\ndef test_ok():\n    assert mod.VALUE\n",
        },
    )
    workspace = FakeWorkspace({"mod.py": mod}, root=str(root))
    gate = gate_for(root)
    after = "VALUE = 2\n\n\ndef cases():\n    return [(1, 2)]\n"
    await changed(gate, workspace, "mod.py", after)
    outcome = await verdict(gate, workspace, "mod.py")

    assert [b.message for b in outcome.blockers] == [
        "tests/test_e.py cannot be collected (importing it or making its tests failed)"
    ]
    assert "failing before the run too (not blocking): tests/test_c.py, tests/test_d.py" in (
        outcome.detail
    )
    # The baseline made test_e.py's tests and ran none of them.
    assert not log.exists()


async def test_pytests_advice_to_a_person_is_left_out_of_the_blocker(tmp_path: Path) -> None:
    """Old (trial31): "Use -v to get more diff" reached the model, which
    cannot pass -v to the gate's pytest."""
    tests = "from mod import first_n\n\n\ndef test_three():\n    assert first_n([1, 2, 3, 4], 3) == [1, 2, 3]\n"
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_m.py": tests})
    outcome = await verdict_on(root, "mod.py", BAD)

    [blocker] = outcome.blockers
    said = f"{blocker.message}\n{blocker.context}"
    assert "Left contains one more item: 4" in said, said
    assert "get more diff" not in said
