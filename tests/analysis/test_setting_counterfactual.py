"""The counterfactual question (rein.analysis.counterfactual) cannot show
the analyzers a changed setting as it was: they read it from the disk, it is
no open document. An error in an unchanged file then stays the run's
(review23: clangd's ``compile_flags.txt`` changed so that an unchanged
``main.c`` no longer compiled, and the error was found "there without the
run's changes too")."""

from __future__ import annotations

import pytest

from rein.analysis.baselines import FileBaseline
from rein.analysis.counterfactual import not_the_runs
from rein.harness.ports import Diagnostic
from tests.fakes.diagnostics import SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace

ERROR = Diagnostic(path="main.c", line=1, message="use of undeclared identifier 'GREETING'")


@pytest.mark.parametrize(
    ("changed", "kept"),
    [
        ({"lib.c": ("int x;\n", "int x = 1;\n")}, False),  # shown as before: not the run's
        ({"compile_flags.txt": ("-DGREETING=0\n", "-DGREETINGS=0\n")}, True),
        ({"lib.c": ("int x;\n", "int y;\n"), "compile_flags.txt": ("-DA\n", "-DB\n")}, True),
        ({"CHANGES.md": ("a\n", "b\n"), "lib.c": ("int x;\n", "int y;\n")}, False),  # unread
    ],
)
async def test_an_error_in_an_unchanged_file_stays_the_runs_when_a_setting_changed(
    changed: dict[str, tuple[str, str]], kept: bool
) -> None:
    source = SettlingFakeDiagnostics()
    source.uncovered = {".txt", ".md"}  # no analyzer opens them
    source.counterfactual = [ERROR]  # there with the changed documents shown as before
    workspace = FakeWorkspace({"main.c": "int main(void) { return GREETING; }\n"})
    workspace.files.update({p: now for p, (_, now) in changed.items()})
    files = {p: FileBaseline(p, was, ()) for p, (was, _) in changed.items()}
    left, dropped = await not_the_runs(source, [ERROR], set(changed), files, workspace, 5.0, False)
    assert (left, dropped) == (([ERROR], 0) if kept else ([], 1))
