"""A test whose import runs a changed module through a package's
``__init__`` (trial31, HIGH): ``from mypkg.util import slug`` runs
``mypkg/__init__.py``, whose ``from .core import *`` imports the changed
``core.py``. A change that breaks that import fails the test, though it
takes none of the names the change reaches: the gate said "passed, 0 of 1
test files selected"."""

from __future__ import annotations

from pathlib import Path

from rein.process.kept import KeptProcessLauncher
from rein.testgate.judging import passed_again, reported
from rein.testgate.junit import TestResult
from rein.testgate.runner import TestRun
from rein.testgate.selection import select_tests
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict, verdict_on

#: ``mypkg`` re-exports ``core`` and ``util``; the test takes ``util``'s name only.
PACKAGE = {
    "mypkg/__init__.py": "from .core import *  # noqa\nfrom .util import slug  # noqa\n",
    "mypkg/core.py": "def double(x):\n    return 2 * x\n",
    "mypkg/util.py": 'def slug(s):\n    return s.strip().lower().replace(" ", "-")\n',
    "tests/test_util.py": (
        "from mypkg.util import slug\n\n\n"
        'def test_slug():\n    assert slug(" Hello World ") == "hello-world"\n'
    ),
}
#: ``core.py`` importing the package it is imported by: a circular import.
CIRCULAR = "from mypkg import slug\n\n\ndef double(x):\n    return 2 * x\n\n\nLABEL = slug('A')\n"
TEST_CORE = "from mypkg.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
#: A change inside a function body: no import can break.
BODY = "def double(x):\n    return x + x\n"


def test_the_test_files_whose_import_runs_the_change_are_selected_to_collect(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", PACKAGE)
    selection = select_tests(root, ["mypkg/core.py"])
    assert selection.files == ()
    assert selection.importing == ("tests/test_util.py",)
    assert selection.chains["tests/test_util.py"][0] == "mypkg/core.py"
    assert "1 more import it through a package's __init__" in selection.reason


async def test_a_change_that_breaks_the_packages_import_blocks(tmp_path: Path) -> None:
    root = project(tmp_path / "proj", PACKAGE)
    outcome = await verdict_on(root, "mypkg/core.py", CIRCULAR)

    assert outcome.unverified is None, outcome.detail
    assert [b.path for b in outcome.blockers] == ["tests/test_util.py"], outcome.detail
    assert "cannot be collected" in outcome.blockers[0].message
    assert outcome.detail.startswith("no test ran: 1 test file(s) could not be collected")
    context = outcome.blockers[0].context or ""
    assert "circular import" in context
    # The chain says how the test's import reaches the change.
    assert "mypkg/core.py -> mypkg/__init__.py -> mypkg/util.py -> tests/test_util.py" in context


async def test_a_change_that_imports_fine_passes_without_running_their_tests(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {**PACKAGE, "tests/test_core.py": TEST_CORE})
    outcome = await verdict_on(root, "mypkg/core.py", BODY)

    assert outcome.blockers == [] and outcome.unverified is None, outcome.detail
    # test_core's one test ran; test_util was imported, its test not run.
    assert outcome.detail.startswith("1 of 1 tests passed"), outcome.detail
    assert "1 more test file(s) collected, none of their tests run" in outcome.detail


async def test_beside_the_tests_naming_the_change_a_broken_import_still_blocks(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {**PACKAGE, "tests/test_core.py": TEST_CORE})
    outcome = await verdict_on(root, "mypkg/core.py", CIRCULAR)

    assert outcome.unverified is None, outcome.detail
    assert sorted(b.path for b in outcome.blockers) == [
        "tests/test_core.py",
        "tests/test_util.py",
    ], outcome.detail


#: A registry filled at import by a function of ``core.py``; ``util.fmt``
#: reads it. ``test_util.py`` imports ``util`` only: ``core.py`` runs
#: through the package's ``__init__``.
REGISTRY = {
    "mypkg/__init__.py": "from .core import *  # noqa\nfrom .util import fmt  # noqa\n",
    "mypkg/util.py": "FORMATTERS = {}\n\n\ndef fmt(kind, v):\n    return FORMATTERS[kind](v)\n",
    "mypkg/core.py": (
        "from mypkg.util import FORMATTERS\n\n\ndef double(x):\n    return 2 * x\n\n\n"
        "def make():\n    return double\n\n\nFORMATTERS['double'] = make()\n"
    ),
    "tests/test_core.py": (
        "from mypkg.core import double, make\n\n\n"
        "def test_double():\n    assert double(2) == 4\n\n\n"
        "def test_make():\n    assert callable(make())\n"
    ),
    "tests/test_util.py": (
        "from mypkg.util import fmt\n\n\ndef test_fmt():\n    assert fmt('double', 2) == 4\n"
    ),
}


async def test_a_test_reading_what_the_change_made_at_import_runs(tmp_path: Path) -> None:
    """Old (review31, MEDIUM): ``make()`` fills the registry at import, the
    run makes it return ``str``; ``test_core.py`` names ``make``, so the
    choice was per test, and ``test_util.py`` (its import runs the change
    through the package's ``__init__``) was only collected: "passed",
    while ``test_fmt`` fails. Its tests that name what the change reaches
    (``fmt`` reads ``FORMATTERS``, which ``make()`` fills) run."""
    root = project(tmp_path / "proj", REGISTRY)
    selection = select_tests(root, ["mypkg/core.py"])
    assert selection.importing == ("tests/test_util.py",)
    changed = REGISTRY["mypkg/core.py"].replace("return double", "return str")
    outcome = await verdict_on(root, "mypkg/core.py", changed)

    assert outcome.unverified is None, outcome.detail
    assert [b.path for b in outcome.blockers] == ["tests/test_util.py"], outcome.detail
    assert "test_fmt" in outcome.blockers[0].message, outcome.blockers[0].message
    # What the registry holds no name shows: the files run whole.
    assert outcome.detail.startswith("2 of 3 tests passed"), outcome.detail
    assert "mypkg/core.py:12 runs make at import (a module-level statement)" in outcome.detail


async def test_coverage_chooses_in_the_files_whose_import_runs_the_change(
    tmp_path: Path,
) -> None:
    """Old: a verdict chosen by coverage looked only at the files that
    import the change by name. ``test_fmt`` runs ``double`` through the
    registry; ``test_util.py`` reaches ``core.py`` only through the
    package's ``__init__``: a bug in ``double`` passed it by."""
    files = {
        **REGISTRY,
        "mypkg/core.py": (
            "from mypkg.util import FORMATTERS\n\n\ndef double(x):\n    return 2 * x\n\n\n"
            "FORMATTERS['double'] = double\n"
        ),
        "tests/test_core.py": TEST_CORE,
    }
    root = project(tmp_path / "proj", files)
    workspace = FakeWorkspace({"mypkg/core.py": files["mypkg/core.py"]}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        # A first run (a harmless change): no record yet, the files run whole.
        harmless = files["mypkg/core.py"].replace("2 * x", "x * 2")
        await changed(gate, workspace, "mypkg/core.py", harmless)
        first = await verdict(gate, workspace, "mypkg/core.py")
        gate.on_validated(2)
        await changed(gate, workspace, "mypkg/core.py", harmless.replace("x * 2", "x * 3"))
        seeded = await verdict(gate, workspace, "mypkg/core.py")
    finally:
        await gate.close()

    assert (first.blockers, first.unverified) == ([], None), first.detail
    assert seeded.unverified is None, seeded.detail
    assert sorted(b.message.split(" failed")[0] for b in seeded.blockers) == [
        "tests/test_core.py::test_double",
        "tests/test_util.py::test_fmt",
    ], seeded.detail
    assert "selected by coverage: 2 tests ran a changed function (mypkg/core.py:double)" in (
        seeded.detail
    )


def test_an_import_in_a_function_or_for_type_checking_runs_nothing_at_import(
    tmp_path: Path,
) -> None:
    """Old (review31): sympy's ``pygletplot/__init__.py`` imports its plot
    module inside ``def PygletPlot``; counted as run at import, a change of
    that module had all 604 test files collected and run whole."""
    lazy = "def plot():\n    from .heavy import P\n    return P\n"
    checked = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .heavy import P\n"
    loaded = "import importlib\n\nHEAVY = importlib.import_module('mypkg.heavy')\n"
    for init, importing in ((lazy, ()), (checked, ()), (loaded, ("tests/test_util.py",))):
        root = project(
            tmp_path / str(len(importing)) / str(len(init)),
            {
                "mypkg/__init__.py": init,
                "mypkg/heavy.py": "P = 1\n",
                "mypkg/util.py": PACKAGE["mypkg/util.py"],
                "tests/test_util.py": PACKAGE["tests/test_util.py"],
                "tests/test_heavy.py": "from mypkg.heavy import P\n\n\ndef test_p():\n    assert P\n",
            },
        )
        selection = select_tests(root, ["mypkg/heavy.py"])
        assert selection.files == ("tests/test_heavy.py",)
        assert selection.importing == importing, init


def test_a_test_whose_file_cannot_be_collected_again_is_reported_failing() -> None:
    """Old: the re-run named the failing tests' node ids; a file whose
    broken import now failed (the order files import in decides) made
    pytest refuse the run ("found no collectors"): no report, unverified."""
    test = "toolz/tests/test_itertoolz.py::test_topk"
    again = TestRun(
        results=[
            TestResult(
                node_id="toolz/tests/test_itertoolz.py",
                outcome="error",
                file="toolz/tests/test_itertoolz.py",
                collection_error=True,
            )
        ]
    )
    assert reported(test, again)
    assert not passed_again(TestResult(node_id=test, outcome="failed", file=test[:29]), again)
    assert not reported("toolz/tests/test_utils.py::test_x", again)


async def test_a_conftest_the_change_breaks_blocks_on_it(tmp_path: Path) -> None:
    """Old (review31, LOW 6): a ``conftest.py`` importing the package the
    change breaks stopped pytest (exit 4, no report): "unverified", never
    sent back to repair. The same run before the run imports it: a blocker."""
    files = {
        **PACKAGE,
        "tests/conftest.py": "from mypkg.util import slug  # noqa\n",
        "tests/test_x.py": "def test_x():\n    pass\n",
    }
    root = project(tmp_path / "proj", files)
    outcome = await verdict_on(root, "mypkg/core.py", CIRCULAR)

    assert outcome.unverified is None, outcome.detail
    assert [b.path for b in outcome.blockers] == ["tests/conftest.py"], outcome.blockers
    assert outcome.blockers[0].message.startswith("tests/conftest.py cannot be collected")
    assert "circular import" in (outcome.blockers[0].context or "")
    assert outcome.detail.startswith(
        "no test ran: the change broke the import of tests/conftest.py"
    )
    # Broken before the run too: nothing the run did, still unverified.
    broken = project(
        tmp_path / "before",
        {**files, "tests/conftest.py": "import not_installed_anywhere  # noqa\n"},
    )
    outcome = await verdict_on(broken, "mypkg/core.py", BODY)
    assert outcome.blockers == []
    assert outcome.unverified is not None and "not_installed_anywhere" in outcome.unverified
