"""Issue 32 (rename-module in ``rein bench gates --corpus``): a renamed
module's own errors from before the run are judged at its new path against
the old path's baseline, carried through the rename; its importers' broken
imports still block."""

from __future__ import annotations

import pytest

from rein.analysis import command_baselines
from rein.analysis.command_baselines import renamed_by_content
from rein.analysis.gate import AnalyzerGate
from rein.harness.gating.gates import GateContext
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Diagnostic
from tests.fakes.diagnostics import SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag

UTIL = "def double(x: int) -> int:\n    return 'x'\n"


def renaming_world() -> tuple[TrackedWorkspace, SettlingFakeDiagnostics, AnalyzerGate]:
    """A tracked workspace whose before-change hook feeds the gate, as a
    run's validation wires it: a rename announces ``(old, new)``."""
    workspace = TrackedWorkspace(
        FakeWorkspace({"pkg/util.py": UTIL, "pkg/app.py": "from pkg.util import double\n"}),
        MutationLog(),
    )
    old_error = diag("pkg/util.py", 1, "str is not int", code="R", source="pyright")
    source = SettlingFakeDiagnostics([old_error])
    gate = AnalyzerGate(source)

    async def before_change(paths: tuple[str, ...]) -> None:
        await gate.before_change(paths, workspace)

    workspace.before_change(before_change)
    return workspace, source, gate


async def test_a_renamed_modules_old_error_does_not_block_at_its_new_path() -> None:
    """Old: the new path's baseline was that of a file that did not exist,
    so the moved file's old error blocked there."""
    workspace, source, gate = renaming_world()
    await gate.on_run_start(0)
    await workspace.rename("pkg/util.py", "pkg/helpers.py")
    broken = diag("pkg/app.py", 0, 'Import "pkg.util" could not be resolved', code="I")
    moved = diag("pkg/helpers.py", 1, "str is not int", code="R", source="pyright")
    source.diagnostics = [broken, moved]
    touched = frozenset({"pkg/util.py", "pkg/helpers.py"})
    outcome = await gate.check(GateContext(1, touched, workspace))
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/app.py", 0)]


async def test_a_new_error_in_a_renamed_module_blocks_with_lines_mapped() -> None:
    workspace, source, gate = renaming_world()
    await gate.on_run_start(0)
    await workspace.rename("pkg/util.py", "pkg/helpers.py")
    await workspace.write_text("pkg/helpers.py", '"""Helpers."""\n' + UTIL + "y = z\n")
    source.diagnostics = [
        # The old error, one line down (a docstring was inserted above it).
        diag("pkg/helpers.py", 2, "str is not int", code="R", source="pyright"),
        diag("pkg/helpers.py", 3, '"z" is not defined', code="U", source="pyright"),
    ]
    touched = frozenset({"pkg/util.py", "pkg/helpers.py"})
    outcome = await gate.check(GateContext(2, touched, workspace))
    assert [(b.path, b.line, b.code) for b in outcome.blockers] == [("pkg/helpers.py", 3, "U")]


async def test_a_carried_baseline_survives_a_stored_session() -> None:
    workspace, source, gate = renaming_world()
    await gate.on_run_start(0)
    await workspace.rename("pkg/util.py", "pkg/helpers.py")
    resumed = AnalyzerGate(source)
    resumed.import_state(gate.export_state())
    source.diagnostics = [diag("pkg/helpers.py", 1, "str is not int", code="R", source="pyright")]
    touched = frozenset({"pkg/util.py", "pkg/helpers.py"})
    outcome = await resumed.check(GateContext(1, touched, workspace))
    assert outcome.blockers == []
    assert resumed.files["pkg/helpers.py"].text_before_the_run == ""


def test_a_command_rename_is_told_by_content_each_old_file_once() -> None:
    body = "".join(f"line {n}\n" for n in range(20))
    near = body.replace("line 3\n", "line three\n")
    created = {"b.py": body, "c.py": near, "d.py": "other\n" * 20, "e.py": near}
    deleted = {"a.py": body, "x.py": near, "y.py": "unrelated\n"}

    # Each deleted file goes to the created file most like it, once; a
    # created file like no deleted one was not renamed.
    assert renamed_by_content(created, deleted) == [("b.py", "a.py"), ("c.py", "x.py")]
    assert renamed_by_content({"b.py": near}, {"a.py": body}) == [("b.py", "a.py")]
    half = "".join(f"line {n}\n" for n in range(10)) + "".join(f"new {n}\n" for n in range(10))
    assert renamed_by_content({"b.py": half}, {"a.py": body}) == []


def test_past_the_near_pairs_budget_only_same_texts_are_renames(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(command_baselines, "MAX_NEAR_PAIRS", 0)
    body = "".join(f"line {n}\n" for n in range(20))
    near = body.replace("line 3\n", "line three\n")

    assert renamed_by_content({"b.py": body, "c.py": near}, {"a.py": body, "x.py": body}) == [
        ("b.py", "a.py")
    ]


def test_a_renamed_away_modules_unresolved_imports_lead_the_blockers() -> None:
    """Old (rename-module probes, ``cause_first: False``): after the changed
    files, blockers went by path, so a name an importer's broken import no
    longer brought, used in a file sorted first, led the prompt."""
    from rein.analysis.blocker_order import by_cause

    used = diag("pkg/a_user.py", 3, '"double" is not defined', code="reportUndefinedVariable")
    unresolved = diag(
        "pkg/app.py", 0, 'Import "pkg.util" could not be resolved', code="reportMissingImports"
    )
    moved = diag("pkg/helpers.py", 2, '"z" is not defined', code="U")
    touched = {"pkg/util.py", "pkg/helpers.py"}
    ordered = by_cause([(used, 0), (unresolved, 1), (moved, 2)], touched)
    assert [d for d, _ in ordered] == [moved, unresolved, used]


def test_parse_errors_of_every_language_are_syntax_errors() -> None:
    """Only ruff's invalid-syntax counted: a TypeScript file's "',' expected."
    came after the type errors it caused ("Function implementation is
    missing"), and a navigation answer in a broken Go file said nothing of
    why it was empty."""
    from rein.analysis.blocker_order import by_cause, is_syntax_error

    def d(source: str, code: str | None, message: str, severity: int = 1) -> Diagnostic:
        return Diagnostic(
            path="a", line=0, source=source, code=code, message=message, severity=severity
        )

    parse_errors = [
        d("Ruff", "invalid-syntax", "Expected an expression"),
        d("syntax", None, "mixed named and unnamed parameters"),
        d("typescript", "1005", "',' expected."),
        d("typescript", "1002", "Unterminated string literal."),
        d("shellcheck", "SC1046", "Couldn't find 'fi' for this 'if'."),
        d("clang", "expected_semi_after_expr", "Expected ';' after expression"),
    ]
    others = [
        d("typescript", "2391", "Function implementation is missing"),
        d("typescript", "2554", "Expected 2 arguments, but got 1."),
        # A 1xxx code of the checker, in a file that parses.
        d("typescript", "1192", "Module '\"./util\"' has no default export."),
        d(
            "typescript",
            "1308",
            "'await' expressions are only allowed within async functions and at the "
            "top levels of modules.",
        ),
        d("shellcheck", "SC1091", "Not following: x was not specified as input", 3),
        d("compiler", "WrongArgCount", "not enough arguments in call"),
        d("clang", "undeclared_var_use", "Use of undeclared identifier 'x'"),
    ]
    assert [is_syntax_error(p) for p in parse_errors] == [True] * 6
    assert [is_syntax_error(o) for o in others] == [False] * 7
    ordered = by_cause([(others[0], 0), (parse_errors[2], 1)], {"a"})
    assert [n for _, n in ordered] == [1, 0]
    # A module with no default export is no cause of the errors before it.
    ordered = by_cause([(others[0], 0), (others[2], 1)], {"a"})
    assert [n for _, n in ordered] == [0, 1]
