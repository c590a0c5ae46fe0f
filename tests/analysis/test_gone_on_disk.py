"""The analyzer gate's question where a module the run deleted or renamed
away is gone (:mod:`rein.analysis.on_disk`): an error in a file the run
did not change is asked of copies of the workspace on disk, as it was and
as it is, and blocks only when the copy as it is has it and the copy as it
was does not; an error on a line naming the gone module is the run's
unasked; no answer keeps every error (issue 32: sympy's
``zeta_functions.py`` rename blocked on an error of an importer's line
that the command line reports before the rename and after)."""

from __future__ import annotations

import re

from rein.analysis.baselines import FileBaseline
from rein.analysis.counterfactual import not_the_runs
from rein.analysis.on_disk import defined_names, naming_lines
from rein.harness.ports import Diagnostic
from tests.fakes.diagnostics import AnsweringFakeDiagnostics, DiskFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace

UTIL = "def helper():\n    return 1\n"
APP = "from pkg import helper\nr = compute()\nfrom pkg.util import other\nv = helper().real\n"


def _error(
    path: str, line: int, code: str, message: str, source: str = "basedpyright"
) -> Diagnostic:
    return Diagnostic(path=path, line=line, code=code, source=source, message=message)


UNKNOWN = _error("app.py", 0, "reportAttributeAccessIssue", '"helper" is unknown import symbol')
NEW = _error("app.py", 3, "reportAttributeAccessIssue", 'Cannot access attribute "real"')
ARTIFACT = _error(
    "app.py", 1, "reportAttributeAccessIssue", 'Cannot access attribute "subs" for class "bool"'
)
IMPORT = _error("app.py", 2, "reportMissingImports", 'Import "pkg.util" could not be resolved')
RUFF = _error("app.py", 1, "F821", "Undefined name `compute`", source="Ruff")
ONLY_THE_SERVER = _error("lib.py", 0, "reportCallIssue", "Expected 0 positional arguments")


def _deleted() -> tuple[FakeWorkspace, dict[str, FileBaseline]]:
    workspace = FakeWorkspace({"app.py": APP, "lib.py": "helper(1)\n", "pkg/new/__init__.py": ""})
    files = {
        "pkg/util.py": FileBaseline(path="pkg/util.py", text=UTIL, diagnostics=()),
        # Created by the run, empty: it exists now, it did not before.
        "pkg/new/__init__.py": FileBaseline(
            path="pkg/new/__init__.py", text="", diagnostics=(), existed=False
        ),
    }
    return workspace, files


async def test_an_importers_error_is_dropped_only_when_both_copies_have_it() -> None:
    workspace, files = _deleted()
    source = DiskFakeDiagnostics()
    same_line = NEW.model_copy(update={"character": 16})  # a second one on its line
    artifact_again = ARTIFACT.model_copy(update={"character": 9})
    only_before = _error("app.py", 1, "reportCallIssue", "Expected 1 more argument")
    source.on_disk = [
        # As it was: the artifact's error is there before the deletion too.
        [ARTIFACT, only_before],
        # As it is: the artifact's error again, the new one.
        [NEW, ARTIFACT, IMPORT],
    ]
    blocking = [
        UNKNOWN,
        NEW,
        same_line,
        ARTIFACT,
        artifact_again,
        IMPORT,
        RUFF,
        ONLY_THE_SERVER,
        only_before,
    ]
    left, dropped = await not_the_runs(
        source, blocking, set(files), files, workspace, 5.0, environment_changed=False
    )
    # Dropped: the artifact's error once (each copy has it once). Kept: the
    # new error (twice: the copies say nothing of a second one); unasked,
    # the import of a name the gone module defined and the import of the
    # gone module; another analyzer's (its command line is not run); and
    # the errors the copies do not both have: they do not see what the
    # server sees there.
    assert left == [
        UNKNOWN,
        NEW,
        same_line,
        artifact_again,
        IMPORT,
        RUFF,
        ONLY_THE_SERVER,
        only_before,
    ]
    assert dropped == 1
    [(overlays, paths)] = source.disk_asked
    assert overlays == [
        {"pkg/new/__init__.py": None, "pkg/util.py": UTIL},
        {"pkg/new/__init__.py": "", "pkg/util.py": None},
    ]
    assert paths == [["app.py", "lib.py"], ["app.py", "lib.py"]]


async def test_no_answer_from_the_copies_keeps_every_error() -> None:
    workspace, files = _deleted()
    source = DiskFakeDiagnostics()  # on_disk None: a copy was not checked in time
    blocking = [NEW, ARTIFACT, IMPORT]
    left, dropped = await not_the_runs(source, blocking, set(files), files, workspace, 5.0, False)
    assert (left, dropped) == (blocking, 0)
    assert len(source.disk_asked) == 1


async def test_errors_on_lines_naming_the_gone_module_are_not_asked() -> None:
    workspace, files = _deleted()
    source = DiskFakeDiagnostics()
    source.on_disk = [[], []]  # would drop anything asked
    about = _error(
        "app.py", 1, "reportAttributeAccessIssue", 'not a known attribute of module "pkg.util"'
    )
    blocking = [UNKNOWN, IMPORT, RUFF, about]
    left, dropped = await not_the_runs(source, blocking, set(files), files, workspace, 5.0, False)
    assert (left, dropped) == (blocking, 0)
    assert source.disk_asked == []


async def test_a_package_gone_is_named_by_its_folder() -> None:
    workspace = FakeWorkspace(
        {"app.py": "import tools.x\nfrom tools import y\n", "other.py": "z = 1\n"}
    )
    files = {
        "tools/__init__.py": FileBaseline(path="tools/__init__.py", text="y = 1\n", diagnostics=())
    }
    on_folder = _error("app.py", 1, "reportAttributeAccessIssue", "y is unknown")
    elsewhere = _error("other.py", 0, "reportAssignmentType", "z")
    source = DiskFakeDiagnostics()
    source.on_disk = [[elsewhere], [elsewhere]]
    left, _ = await not_the_runs(
        source, [on_folder, elsewhere], set(files), files, workspace, 5.0, False
    )
    assert left == [on_folder]  # explained: not asked
    assert source.disk_asked[0][1] == [["other.py"], ["other.py"]]


async def test_a_source_that_checks_no_copy_keeps_the_run_start_verdict() -> None:
    workspace, files = _deleted()
    source = AnsweringFakeDiagnostics()
    source.counterfactual = [ARTIFACT]  # never asked: a gone file cannot be shown in memory
    left, dropped = await not_the_runs(source, [ARTIFACT], set(files), files, workspace, 5.0, False)
    assert (left, dropped) == ([ARTIFACT], 0)


RENAMED = "pkg/helpers.py"
#: The renamed module: its old errors at the new path are its own baseline's.
HELPERS = "def helper():\n    return 1 ** flag\n"


async def test_a_renamed_files_error_is_asked_at_its_old_path_in_the_copy_as_it_was() -> None:
    workspace = FakeWorkspace({"app.py": APP, RENAMED: "# moved\n" + HELPERS})
    files = {
        "pkg/util.py": FileBaseline(path="pkg/util.py", text=HELPERS, diagnostics=()),
        RENAMED: FileBaseline(
            path=RENAMED, text=HELPERS, diagnostics=(), renamed_from="pkg/util.py"
        ),
    }
    artifact = _error(RENAMED, 2, "reportOperatorIssue", 'Operator "**" not supported')
    real = _error(RENAMED, 1, "reportUndefinedVariable", '"helper" is not defined')
    neither = _error(RENAMED, 0, "reportOperatorIssue", 'Operator "**" not supported')
    source = DiskFakeDiagnostics()
    source.on_disk = [
        # As it was: the operator error at the old path, one line up.
        [_error("pkg/util.py", 1, "reportOperatorIssue", "x"), ARTIFACT],
        [_error(RENAMED, 2, "reportOperatorIssue", "x"), real, ARTIFACT],
    ]
    blocking = [artifact, real, ARTIFACT, neither]
    left, dropped = await not_the_runs(source, blocking, set(files), files, workspace, 5.0, False)
    # The line-mapped old error and the importer's are there before and
    # after; the new one is not, nor the one neither copy has.
    assert (left, dropped) == ([real, neither], 2)
    [(overlays, paths)] = source.disk_asked
    # The new path was no file before the run: not even an empty one.
    assert overlays == [
        {RENAMED: None, "pkg/util.py": HELPERS},
        {RENAMED: "# moved\n" + HELPERS, "pkg/util.py": None},
    ]
    # The old path where the new one is, in the copy as it was.
    assert paths == [["app.py", "pkg/util.py"], ["app.py", RENAMED]]


def test_every_line_of_an_import_from_the_gone_module_names_it() -> None:
    text = (
        "from pkg.util import (\n"  # 0
        "    a,  # (\n"
        "    b,\n"
        ")\n"
        "from other import (\n"  # 4
        "    c,\n"
        ")\n"
        "from pkg.util import d, \\\n"  # 7
        "    e\n"
        "x = utility\n"  # 9: another name
        "y = util.f\n"  # 10
    )
    pattern = re.compile(r"\b(?:util)\b")
    assert naming_lines(text, pattern) == {0, 1, 2, 3, 7, 8, 10}


def test_a_module_defines_the_names_it_binds_at_its_top_level() -> None:
    text = (
        "import os.path\n"
        "from .rv import (P, E as Expectation)\n"
        "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n"
        "if True:\n    def helper(): pass\nelse:\n    class Other: pass\n"
        "X, (Y, Z) = 1, (2, 3)\nW: int = 4\n"
        "def f():\n    inner = 1\n"
    )
    assert defined_names(text) == {
        "os",
        "P",
        "Expectation",
        "np",
        "helper",
        "Other",
        "X",
        "Y",
        "Z",
        "W",
        "f",
    }
    assert defined_names("def (:\n") == frozenset()


async def test_an_empty_module_gone_is_gone() -> None:
    """review67: an empty ``pkg/marker.py`` deleted was shown in memory as
    "" (a file still there): its importer's broken import was "there without
    the run's changes too" and the verdict passed."""
    workspace = FakeWorkspace({"app.py": "from pkg import marker\n"})
    files = {"pkg/marker.py": FileBaseline(path="pkg/marker.py", text="", diagnostics=())}
    broken = _error("app.py", 0, "reportAttributeAccessIssue", '"marker" is unknown import symbol')
    in_memory = AnsweringFakeDiagnostics()
    in_memory.counterfactual = [broken]  # an empty text shown: still "there"
    left, dropped = await not_the_runs(
        in_memory, [broken], set(files), files, workspace, 5.0, False
    )
    assert (left, dropped) == ([broken], 0)
    on_disk = DiskFakeDiagnostics()
    on_disk.counterfactual = [broken]
    on_disk.on_disk = [[broken], [broken]]  # would drop it if asked
    left, dropped = await not_the_runs(on_disk, [broken], set(files), files, workspace, 5.0, False)
    # Explained: its line names the gone module; never shown in memory.
    assert (left, dropped) == ([broken], 0)
    assert on_disk.disk_asked == []


async def test_an_error_neither_copy_has_is_dropped_where_the_copies_see_the_rest_of_its_file() -> (
    None
):
    """sympy's renamed ``zeta_functions.py``: a ``**`` on ``bool | Unknown |
    Basic`` the command line reports at neither path blocked once in four
    runs; the copies saw every other error of the file as the server did.
    Where a copy sees the rest of the file otherwise, or there is no rest
    to compare, it stays (review67: copies that resolve imports otherwise)."""
    workspace, files = _deleted()
    neither = _error("lib.py", 0, "reportOperatorIssue", 'Operator "**" not supported')
    other = _error("lib.py", 2, "reportCallIssue", "an error lib.py had")
    ruffs = _error("lib.py", 1, "E999", "ruff's", source="Ruff")  # not the command line's
    for copies, current, kept in [
        ([[other], [other]], [neither, other, ruffs], []),
        ([[], []], [neither, other, ruffs], [neither]),  # the copies lack the rest
        ([[other], [other]], [neither, ruffs], [neither]),  # no rest to compare
    ]:
        source = DiskFakeDiagnostics()
        source.on_disk = copies
        left, _ = await not_the_runs(
            source, [neither], set(files), files, workspace, 5.0, False, (), current
        )
        assert left == kept, (copies, current)


async def test_errors_are_counted_per_line_and_rule_as_the_command_line_counts_a_change() -> None:
    """sympy's stats/rv.py deleted: three reportAttributeAccessIssue on one
    line of an importer before, four after, by the command line; the
    server's one blocker there is the new one. Before: dropped, as "there
    before and after"."""
    workspace, files = _deleted()
    for before_n, now_n, kept in [(3, 4, [ARTIFACT]), (3, 3, []), (4, 3, [])]:
        source = DiskFakeDiagnostics()
        source.on_disk = [[ARTIFACT] * before_n, [ARTIFACT] * now_n]
        left, _ = await not_the_runs(source, [ARTIFACT], set(files), files, workspace, 5.0, False)
        assert left == kept, (before_n, now_n)
