"""The shadow holds the tests in: they neither write the person's files
nor read the workspace (or anything above the shadow) in its place."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.testgate.projects import (
    BAD,
    GOOD,
    project,
    snapshot,
    verdict_on,
)

TWO = "from mypkg.mod import first_n\n\n\ndef test_two():\n    assert first_n([1, 2, 3], 2) == [1, 2]\n"


async def test_a_test_writing_a_workspace_file_writes_the_shadows_copy(tmp_path: Path) -> None:
    writes = (
        "from pathlib import Path\n\nfrom mod import first_n\n\n\ndef test_f():\n"
        "    Path('data.txt').write_text('WRITTEN BY TEST\\n')\n"
        "    assert first_n([1], 1) == [1]\n"
    )
    root = project(
        tmp_path / "proj", {"mod.py": GOOD, "data.txt": "ORIGINAL\n", "tests/test_m.py": writes}
    )
    outcome = await verdict_on(root, "mod.py", GOOD + "\n")

    assert outcome.blockers == [] and outcome.unverified is None
    assert (root / "data.txt").read_text() == "ORIGINAL\n"


async def test_a_conftest_resolving_its_own_path_stays_in_the_shadow(tmp_path: Path) -> None:
    conftest = (
        "import sys\nfrom pathlib import Path\n\n"
        "sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'lib'))\n"
    )
    root = project(
        tmp_path / "proj",
        {
            "lib/mypkg/__init__.py": "",
            "lib/mypkg/mod.py": GOOD,
            "tests/conftest.py": conftest,
            "tests/test_m.py": TWO,
        },
    )
    before = snapshot(root)
    outcome = await verdict_on(root, "lib/mypkg/mod.py", BAD)

    # The broken module was the one imported: the run's failure, not an old one.
    assert [b.message for b in outcome.blockers] == [
        "tests/test_m.py::test_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    assert snapshot(root) == before


async def test_a_change_under_a_symlinked_folder_is_unverified(tmp_path: Path) -> None:
    shared = project(tmp_path / "shared", {"mypkg/__init__.py": "", "mypkg/mod.py": GOOD})
    root = project(tmp_path / "proj", {"tests/test_m.py": TWO})
    (root / "mypkg").symlink_to(shared / "mypkg", target_is_directory=True)
    outcome = await verdict_on(root, "mypkg/mod.py", BAD)

    assert outcome.blockers == []
    assert outcome.unverified is not None
    assert "mypkg/mod.py lies under a symlinked folder" in outcome.unverified
    assert (shared / "mypkg/mod.py").read_text() == GOOD


async def test_pytest_reads_no_configuration_or_conftest_above_the_shadow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    above = tmp_path / "tmp"
    project(
        above,
        {
            "pytest.ini": "[pytest]\naddopts = --not-an-option\n",
            "conftest.py": "raise RuntimeError('read from above the shadow')\n",
        },
    )
    monkeypatch.setattr(tempfile, "tempdir", str(above))
    root = project(
        tmp_path / "proj",
        {"mod.py": GOOD, "tests/test_m.py": TWO.replace("mypkg.mod", "mod")},
    )
    outcome = await verdict_on(root, "mod.py", GOOD + "\n")

    assert outcome.unverified is None and outcome.blockers == []
    assert outcome.detail.startswith("1 of 1 tests passed")


async def test_a_custom_runners_report_under_a_build_folder_stays_in_the_shadow(
    tmp_path: Path,
) -> None:
    report = "target/nextest/ci/junit.xml"
    root = project(tmp_path / "proj", {"mod.py": "x = 1\n", report: "<the person's report/>"})
    command = (
        'echo \'<testsuites><testsuite><testcase classname="a" name="b"/></testsuite>'
        f"</testsuites>' > {report}; echo from-gate > target/gate-was-here"
    )
    outcome = await verdict_on(root, "mod.py", "x = 2\n", command=command, junitPath=report)

    assert outcome.unverified is None and outcome.blockers == []
    assert (root / report).read_text() == "<the person's report/>"
    assert not (root / "target/gate-was-here").exists()


async def test_a_custom_runners_report_through_a_linked_folder_is_unverified(
    tmp_path: Path,
) -> None:
    elsewhere = project(tmp_path / "out", {"junit.xml": "<the person's report/>"})
    root = project(tmp_path / "proj", {"mod.py": "x = 1\n"})
    (root / "reports").symlink_to(elsewhere, target_is_directory=True)
    outcome = await verdict_on(
        root,
        "mod.py",
        "x = 2\n",
        command="echo '<testsuites/>' > reports/junit.xml",
        junitPath="reports/junit.xml",
    )

    assert outcome.blockers == []
    assert outcome.unverified is not None
    assert "junitPath reports/junit.xml runs through a folder" in outcome.unverified
    assert (elsewhere / "junit.xml").read_text() == "<the person's report/>"
