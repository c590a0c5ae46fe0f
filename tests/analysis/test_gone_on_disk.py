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
from rein.analysis.on_disk import naming_lines
from rein.harness.ports import Diagnostic
from tests.fakes.diagnostics import AnsweringFakeDiagnostics, DiskFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace

UTIL = "def helper():\n    return 1\n"
APP = "from pkg import helper\nr = compute()\nfrom pkg.util import other\n"


def _error(
    path: str, line: int, code: str, message: str, source: str = "basedpyright"
) -> Diagnostic:
    return Diagnostic(path=path, line=line, code=code, source=source, message=message)


UNKNOWN = _error("app.py", 0, "reportAttributeAccessIssue", '"helper" is unknown import symbol')
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


async def test_an_importers_error_blocks_only_when_the_copy_as_it_was_lacks_it() -> None:
    workspace, files = _deleted()
    source = DiskFakeDiagnostics()
    same_line = UNKNOWN.model_copy(update={"character": 16})  # a second one on its line
    source.on_disk = [
        # As it was: the artifact's error is there before the deletion too.
        [ARTIFACT, _error("lib.py", 3, "reportCallIssue", "elsewhere")],
        # As it is: the unknown symbol once; the server's lib.py error not at all.
        [UNKNOWN, ARTIFACT, IMPORT],
    ]
    blocking = [UNKNOWN, same_line, ARTIFACT, IMPORT, RUFF, ONLY_THE_SERVER]
    left, dropped = await not_the_runs(
        source, blocking, set(files), files, workspace, 5.0, environment_changed=False
    )
    # Kept: the new error (once), the import of the gone module (unasked),
    # another analyzer's (its command line is not run).
    assert left == [UNKNOWN, IMPORT, RUFF]
    assert dropped == 3
    [(overlays, paths)] = source.disk_asked
    assert overlays == [
        {"pkg/new/__init__.py": None, "pkg/util.py": UTIL},
        {"pkg/new/__init__.py": "", "pkg/util.py": None},
    ]
    # Not asked of ruff's errors, nor of the import's line alone.
    assert paths == [["app.py", "lib.py"], ["app.py", "lib.py"]]


async def test_no_answer_from_the_copies_keeps_every_error() -> None:
    workspace, files = _deleted()
    source = DiskFakeDiagnostics()  # on_disk None: a copy was not checked in time
    blocking = [UNKNOWN, ARTIFACT, IMPORT]
    left, dropped = await not_the_runs(source, blocking, set(files), files, workspace, 5.0, False)
    assert (left, dropped) == (blocking, 0)
    assert len(source.disk_asked) == 1


async def test_errors_on_lines_naming_the_gone_module_are_not_asked() -> None:
    workspace, files = _deleted()
    source = DiskFakeDiagnostics()
    source.on_disk = [[], []]  # would drop anything asked
    left, dropped = await not_the_runs(
        source, [IMPORT, RUFF], set(files), files, workspace, 5.0, False
    )
    assert (left, dropped) == ([IMPORT, RUFF], 0)
    assert source.disk_asked == []


async def test_a_package_gone_is_named_by_its_folder() -> None:
    workspace = FakeWorkspace({"app.py": "import tools.x\nfrom tools import y\nz = 1\n"})
    files = {
        "tools/__init__.py": FileBaseline(path="tools/__init__.py", text="y = 1\n", diagnostics=())
    }
    on_folder = _error("app.py", 1, "reportAttributeAccessIssue", "y is unknown")
    elsewhere = _error("app.py", 2, "reportAssignmentType", "z")
    source = DiskFakeDiagnostics()
    source.on_disk = [[], []]
    left, _ = await not_the_runs(
        source, [on_folder, elsewhere], set(files), files, workspace, 5.0, False
    )
    assert left == [on_folder]
    assert source.disk_asked[0][1] == [["app.py"], ["app.py"]]


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
    source = DiskFakeDiagnostics()
    source.on_disk = [
        # As it was: the operator error at the old path, one line up.
        [_error("pkg/util.py", 1, "reportOperatorIssue", "x"), ARTIFACT],
        [_error(RENAMED, 2, "reportOperatorIssue", "x"), real, ARTIFACT],
    ]
    left, dropped = await not_the_runs(
        source, [artifact, real, ARTIFACT], set(files), files, workspace, 5.0, False
    )
    assert (left, dropped) == ([real], 2)
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
