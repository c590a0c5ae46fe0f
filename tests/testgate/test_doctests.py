"""With ``--doctest-modules`` a module's doctests are tests: the change
that breaks one is seen (parso's, in the corpus bench, went unrun)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from rein.testgate.coverage_index import CoverageIndex
from rein.testgate.recorder import RawCoverage
from rein.testgate.selection import select_tests
from tests.testgate.projects import GOOD, project, verdict_on

BAD = "def first_n(xs, n):\n    return xs[: n + 1]\n"
SHOW = '''"""Shown lists.

>>> show([1, 2, 3])
'[1, 2]'
"""
from pkg.core import first_n


def show(xs, n=2):
    return repr(first_n(xs, n))
'''
SHOW_BAD = SHOW.replace("first_n(xs, n)", "first_n(xs, n + 1)")
FILES = {
    "pytest.ini": "[pytest]\naddopts = --doctest-modules\ntestpaths = pkg tests\n",
    "pkg/__init__.py": "",
    "pkg/core.py": GOOD,
    "pkg/show.py": SHOW,
    "pkg/plain.py": "from pkg.core import first_n\n",
    "tests/test_core.py": (
        "from pkg.core import first_n\n\n\ndef test_empty():\n    assert first_n([], 3) == []\n"
    ),
    "tests/test_show.py": (
        "from pkg.show import show\n\n\ndef test_one():\n    assert show([1, 2, 3], 1) == '[1]'\n"
    ),
}


def test_a_module_with_a_doctest_is_a_test_file_with_doctest_modules(tmp_path: Path) -> None:
    root = project(tmp_path, FILES)
    selection = select_tests(root, ["pkg/core.py"])
    assert set(selection.files) == {"pkg/show.py", "tests/test_core.py", "tests/test_show.py"}
    assert selection.doctests == ("pkg/show.py",)
    assert "pkg/show.py" in selection.modules  # still between the change and the tests
    assert selection.total_files == 3  # pkg/plain.py holds no doctest

    (root / "pytest.ini").write_text("[pytest]\ntestpaths = pkg tests\n")
    assert select_tests(root, ["pkg/core.py"]).doctests == ()


def test_the_environments_pytest_addopts_turn_doctest_modules_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest reads PYTEST_ADDOPTS after the configured addopts; the gate's
    # pytest inherits it from the server's environment.
    root = project(tmp_path, FILES)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:doctest")
    assert select_tests(root, ["pkg/core.py"]).doctests == ()
    monkeypatch.setenv("PYTEST_ADDOPTS", "-pno:doctest -q")
    assert select_tests(root, ["pkg/core.py"]).doctests == ()
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = pkg tests\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-q --doctest-modules")
    assert select_tests(root, ["pkg/core.py"]).doctests == ("pkg/show.py",)


async def test_a_doctest_broken_with_doctest_modules_from_the_environment_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the doctest sees the off-by-one; --doctest-modules is given to
    # the real pytest only through its environment, as pytest reads it.
    files = {k: v for k, v in FILES.items() if k != "tests/test_show.py"}
    files["pytest.ini"] = "[pytest]\ntestpaths = pkg tests\n"
    root = project(tmp_path / "proj", files)
    monkeypatch.setenv("PYTEST_ADDOPTS", "--doctest-modules")
    outcome = await verdict_on(root, "pkg/core.py", BAD)
    assert [b.message.partition(" failed")[0] for b in outcome.blockers] == [
        "pkg/show.py::pkg.show"
    ]


@pytest.mark.parametrize(
    ("changed", "text"),
    [
        # Real pytest: the doctest of pkg/show.py sees the off-by-one too
        # (test_core's test names first_n, and passes).
        ("pkg/core.py", BAD),
        # A changed doctest module reaches the tests that use it.
        ("pkg/show.py", SHOW_BAD),
    ],
    ids=["a-broken-doctest-blocks", "a-changed-doctest-module-reaches-its-users"],
)
async def test_a_doctest_and_its_users_block(tmp_path: Path, changed: str, text: str) -> None:
    root = project(tmp_path / "proj", FILES)
    outcome = await verdict_on(root, changed, text)
    assert sorted(b.message.partition(" failed")[0] for b in outcome.blockers) == [
        "pkg/show.py::pkg.show",
        "tests/test_show.py::test_one",
    ]


def test_a_changed_doctest_module_runs_whole_by_coverage_not_as_an_unknown_test_file() -> None:
    # parso: a seed in a module with doctests made it a changed test file
    # whose tests were unknown, and each such verdict recorded its whole run.
    show, test = "pkg/show.py", "tests/test_show.py"
    record = RawCoverage(
        tests={
            f"{show}::pkg.show": frozenset({(show, 10)}),
            f"{test}::test_one": frozenset({(test, 4), (show, 10)}),
        },
        collected={show: (f"{show}::pkg.show",), test: (f"{test}::test_one",)},
        files=(show, test),
    )
    texts = {show: SHOW, test: FILES[test]}
    index = CoverageIndex()
    index.add(record, texts.get)
    choose = functools.partial(index.choose, test_files=[show, test], disk_text=texts.get)

    choice = choose({show: (SHOW, SHOW_BAD)}, doctests=[show])
    assert (choice.undecided, choice.unknown) == ({}, [])
    assert choice.selected == {show: [show], test: [f"{test}::test_one"]}
    assert choose({show: (SHOW, SHOW_BAD)}).unknown == [show]  # as a test file: unknown
    # Comments only: by what its doctests ran (here, nothing changed).
    commented = choose({show: (SHOW, SHOW + "# a note\n")}, doctests=[show])
    assert commented.selected == {show: [], test: []}
