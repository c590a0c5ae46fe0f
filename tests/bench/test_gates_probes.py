"""The case planning of ``rein bench gates --probes`` (issue 32's five
projects): the kinds chosen from a small src-layout tree, the rename and
unclosed-parenthesis edits, and what counts as judged exactly. Pure; no
analyzer runs (the probes themselves are the bench, its figures in
docs/performance.md)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from rein.bench.corpus import Project
from rein.bench.gates_probes import (
    ProbeProject,
    choose_probes,
    exact,
    plan_probes,
    rename_name_case,
    unclosed_paren_case,
)
from rein.bench.gates_structural_scores import CaseOutcome, case_rows

TREE = {
    "src/pkg/__init__.py": "",
    "src/pkg/util.py": "def helper(a, b):\n    return a\n\n\ndef tested(x):\n    return x\n",
    "src/pkg/app.py": "from pkg.util import helper\n\nX = helper(1, 2)\n",
    "src/pkg/more.py": "from pkg.util import helper\nfrom pkg import app\n\nY = app.X\n",
    "tests/test_util.py": "from pkg.util import tested\n\n\ndef test_it():\n    assert tested(1)\n",
}


def _tree(root: Path) -> Path:
    for path, text in TREE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def test_the_probes_of_a_src_layout_tree(tmp_path: Path) -> None:
    probe = ProbeProject(
        Project("pkg", "0", "src/pkg", 0),
        {
            "one-file": 2,
            "cross-file": 1,
            "tests-break": 1,
            "delete-module": 1,
            "rename-module": 1,
            "syntax-cascade": 1,
            "partial": 1,
        },
        partial=("src/pkg/util.py", "helper"),
        cascade="src/pkg/util.py",
    )
    cases = plan_probes(_tree(tmp_path), probe)
    by_kind: dict[str, list[str]] = {}
    for case in cases:
        by_kind.setdefault(case.kind, []).append(case.target)
    assert len(by_kind.pop("one-file")) == 2
    assert by_kind == {
        # helper is imported by package modules, tested by tests/ only.
        "cross-file": ["src/pkg/util.py:helper"],
        "tests-break": ["src/pkg/util.py:tested"],
        "delete-module": ["src/pkg/util.py"],
        "rename-module": ["src/pkg/app.py -> src/pkg/app_rein_renamed.py"],
        "syntax-cascade": ["src/pkg/util.py (unclosed parenthesis)"],
        "partial": ["src/pkg/util.py:helper"],
    }
    # The truth covers the changed file and every importer, tests/ included.
    cross = next(c for c in cases if c.kind == "cross-file")
    assert cross.after_paths == (
        "src/pkg/util.py",
        "src/pkg/app.py",
        "src/pkg/more.py",
        "tests/test_util.py",
    )


def test_a_rename_rewrites_the_whole_word_and_its_repair_restores(tmp_path: Path) -> None:
    text = TREE["src/pkg/util.py"] + "\nhelpers = helper\n"
    case = rename_name_case("cross-file", "src/pkg/util.py", text, "helper", ["src/pkg/app.py"])
    edited = case.change["tool_calls"][0]["arguments"]["content"]
    assert "def helper_rein_renamed(a, b):" in edited
    assert "helpers = helper_rein_renamed" in edited
    assert case.repair["tool_calls"][0]["arguments"] == {"path": "src/pkg/util.py", "content": text}
    assert case.after_paths == ("src/pkg/util.py", "src/pkg/app.py")


def test_an_unclosed_parenthesis_is_a_syntax_error_in_the_first_one_line_def() -> None:
    text = (
        '"""doc"""\n\nimport os\n\n\ndef first(a, b):\n    return a\n\n\ndef second():\n    pass\n'
    )
    case = unclosed_paren_case("m.py", text, [])
    assert case is not None
    edited = case.change["tool_calls"][0]["arguments"]["content"]
    assert "def first(a, b:\n" in edited
    assert edited.replace("def first(a, b:", "def first(a, b):") == text
    with pytest.raises(SyntaxError):
        ast.parse(edited)
    assert unclosed_paren_case("m.py", "X = 1\n", []) is None


def _row(kind: str, **check: object) -> dict[str, object]:
    return {"kind": kind, "recall": 1.0, "precision": 1.0, "cases_detail": [check]}


def test_exact_needs_recall_precision_and_the_kinds_own_checks() -> None:
    assert exact(_row("cross-file"))
    assert not exact({**_row("cross-file"), "precision": 0.5})
    assert not exact({**_row("one-file"), "recall": 0.0})
    assert exact(_row("syntax-cascade", cause_first=True))
    assert not exact(_row("syntax-cascade", cause_first=False))
    assert exact(_row("partial", partial_said=True))
    assert not exact(_row("partial", partial_said=False))


def test_a_case_that_adds_no_error_is_exact_only_when_every_verdict_passed() -> None:
    # attrs' tests-break cases: its .pyi stubs hide the rename from every
    # importer, so the command line finds no new error. They are kept and
    # scored: passed with nothing unverified, or not exact.
    outcomes = [
        CaseOutcome(rename_name_case("tests-break", "a.py", "def f(): ...\n", "f", []), [], 1.0),
        CaseOutcome(rename_name_case("tests-break", "b.py", "def g(): ...\n", "g", []), [], 1.0),
    ]
    outcomes[0].statuses = ["passed", "passed"]
    outcomes[1].statuses = ["unverified", "passed"]
    (row,) = case_rows(Project("pkg", "0", "pkg", 0), outcomes, False, ("tests-break",))
    assert (row["recall"], row["precision"], row["clean_cases"], row["clean_passed"]) == (
        None,
        None,
        2,
        1,
    )
    assert not exact(row)
    outcomes[1].statuses = ["passed"]
    (row,) = case_rows(Project("pkg", "0", "pkg", 0), outcomes, False, ("tests-break",))
    assert exact(row)
    # One that blocks where nothing broke is not.
    outcomes[1].false_blockers = [{"verdict": 0, "path": "b.py", "line": 0}]
    outcomes[1].statuses = ["blocked", "passed"]
    (row,) = case_rows(Project("pkg", "0", "pkg", 0), outcomes, False, ("tests-break",))
    assert row["precision"] == 0.0 and not exact(row)


def test_the_probe_projects_are_chosen_by_name_and_capped_per_kind() -> None:
    assert [p.project.name for p in choose_probes(None)] == [
        "click",
        "flask",
        "attrs",
        "requests",
        "django",
    ]
    # Issue 32's 59 cases: a command's edit in click and flask too.
    assert sum(n for p in choose_probes(None) for n in p.counts.values()) == 59
    assert [p.counts.get("command-edit", 0) for p in choose_probes(None)] == [1, 1, 0, 0, 2]
    (django,) = choose_probes("django", 1)
    assert set(django.counts.values()) == {1}
    assert django.partial == ("django/utils/functional.py", "cached_property")
    with pytest.raises(SystemExit, match="unknown project"):
        choose_probes("sympy")


def test_cases_named_by_function_come_first(tmp_path: Path) -> None:
    probe = ProbeProject(
        Project("pkg", "0", "src/pkg", 0),
        {"command-edit": 1, "cross-file": 1},
        named=(("command-edit", "src/pkg/util.py", "tested"),),
    )
    cases = plan_probes(_tree(tmp_path), probe)
    assert [(c.kind, c.target) for c in cases] == [
        ("command-edit", "src/pkg/util.py:tested"),
        ("cross-file", "src/pkg/util.py:helper"),
    ]
    command = cases[0].change["tool_calls"][0]["arguments"]["command"]
    assert command == "sed -i 's/\\btested\\b/tested_rein_renamed/g' 'src/pkg/util.py'"
