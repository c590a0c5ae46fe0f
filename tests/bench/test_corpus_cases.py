"""The case generation of ``rein bench gates --corpus``'s file-set and
command cases: choosing modules with importers and functions imported by
name, the ``sed`` command, the truth diff and the command-line tools'
output. Pure functions and the command-line ruff; no analyzer runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rein.bench.corpus_cases import (
    command_edit_case,
    delete_case,
    modules_with_importers,
    new_errors,
    parse_basedpyright,
    parse_ruff,
    renamable_functions,
    rename_case,
    run_ruff,
    sed_rename,
)

TEXTS = {
    "pkg/__init__.py": "from pkg.util import helper\n",
    "pkg/util.py": "def helper():\n    return 1\n\n\ndef unused():\n    return helper()\n",
    "pkg/app.py": "from pkg.util import helper\nfrom . import lone\n\nhelper()\n",
    "pkg/lone.py": "X = 1\n",
    "pkg/alone.py": "Y = 2\n",
    "pkg/tests/test_app.py": "import pkg.app\nfrom pkg.util import helper\n",
}
FILES = sorted(TEXTS)


def test_modules_with_importers_are_the_imported_ones_most_imported_first() -> None:
    chosen = modules_with_importers(FILES, FILES, TEXTS)
    assert chosen == [
        ("pkg/util.py", ["pkg/__init__.py", "pkg/app.py", "pkg/tests/test_app.py"]),
        ("pkg/app.py", ["pkg/tests/test_app.py"]),
        ("pkg/lone.py", ["pkg/app.py"]),
    ]
    # Nobody imports pkg/alone.py; packages and tests are never chosen.
    assert all(path not in {"pkg/alone.py", "pkg/__init__.py"} for path, _ in chosen)


def test_renamable_functions_are_those_imported_by_name() -> None:
    found = renamable_functions("pkg/util.py", TEXTS["pkg/util.py"], FILES, TEXTS)
    assert found == [("helper", ["pkg/__init__.py", "pkg/app.py", "pkg/tests/test_app.py"])]
    assert renamable_functions("pkg/lone.py", TEXTS["pkg/lone.py"], FILES, TEXTS) == []


def test_the_sed_command_renames_whole_words_and_reverts_exactly(tmp_path: Path) -> None:
    text = "def helper():\n    return helper_two() + helper()\n"
    (tmp_path / "m.py").write_text(text)
    forward = sed_rename("m.py", "helper", "helper_rein_renamed")
    assert forward == "sed -i 's/\\bhelper\\b/helper_rein_renamed/g' 'm.py'"
    subprocess.run(["bash", "-c", forward], cwd=tmp_path, check=True)
    changed = (tmp_path / "m.py").read_text()
    assert changed == (
        "def helper_rein_renamed():\n    return helper_two() + helper_rein_renamed()\n"
    )
    subprocess.run(
        ["bash", "-c", sed_rename("m.py", "helper_rein_renamed", "helper")],
        cwd=tmp_path,
        check=True,
    )
    assert (tmp_path / "m.py").read_text() == text


@pytest.mark.parametrize("bad", [("a b", "x", "m.py"), ("a", "x", "it's.py"), ("a", "1x", "m.py")])
def test_the_sed_command_refuses_what_it_cannot_quote(bad: tuple[str, str, str]) -> None:
    old, new, path = bad
    with pytest.raises(ValueError):
        sed_rename(path, old, new)


def test_a_command_edit_case_applies_what_its_sed_does(tmp_path: Path) -> None:
    text = TEXTS["pkg/util.py"]
    case = command_edit_case("pkg/util.py", text, "helper", ["pkg/app.py"])
    assert case.change["tool_calls"][0]["name"] == "run_command"
    assert case.before_paths == case.after_paths == ("pkg/util.py", "pkg/app.py")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/util.py").write_text(text)
    case.apply(tmp_path)
    by_apply = (tmp_path / "pkg/util.py").read_text()
    case.undo(tmp_path)
    assert (tmp_path / "pkg/util.py").read_text() == text
    command = case.change["tool_calls"][0]["arguments"]["command"]
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert (tmp_path / "pkg/util.py").read_text() == by_apply != text


def test_delete_and_rename_cases_script_the_change_and_its_repair(tmp_path: Path) -> None:
    deleted = delete_case("pkg/util.py", "X = 1\n", ["pkg/app.py"])
    assert deleted.change == {
        "tool_calls": [{"name": "delete_file", "arguments": {"path": "pkg/util.py"}}]
    }
    assert deleted.repair["tool_calls"][0]["arguments"] == {
        "path": "pkg/util.py",
        "content": "X = 1\n",
    }
    assert deleted.after_paths == ("pkg/app.py",)
    renamed = rename_case("pkg/util.py", ["pkg/app.py"])
    assert renamed.renamed == ("pkg/util.py", "pkg/util_rein_renamed.py")
    assert renamed.change["tool_calls"][0]["arguments"] == {
        "path": "pkg/util.py",
        "new_path": "pkg/util_rein_renamed.py",
    }
    assert renamed.after_paths == ("pkg/util_rein_renamed.py", "pkg/app.py")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/util.py").write_text("X = 1\n")
    renamed.apply(tmp_path)
    assert not (tmp_path / "pkg/util.py").exists()
    renamed.undo(tmp_path)
    assert (tmp_path / "pkg/util.py").read_text() == "X = 1\n"


def test_new_errors_are_the_multiset_difference() -> None:
    before = [("a.py", 1, "reportX"), ("a.py", 1, "reportX"), ("b.py", 3, "F821")]
    after = [
        ("a.py", 1, "reportX"),
        ("a.py", 1, "reportX"),
        ("a.py", 1, "reportX"),
        ("c.py", 0, "reportMissingImports"),
    ]
    assert new_errors(before, after) == [
        ("a.py", 1, "reportX"),
        ("c.py", 0, "reportMissingImports"),
    ]


def test_a_renamed_file_keeps_its_old_errors() -> None:
    before = [("old.py", 4, "reportX")]
    after = [
        ("new.py", 4, "reportX"),
        ("new.py", 5, "reportX"),
        ("app.py", 0, "reportMissingImports"),
    ]
    assert new_errors(before, after, ("old.py", "new.py")) == [
        ("app.py", 0, "reportMissingImports"),
        ("new.py", 5, "reportX"),
    ]


def test_the_command_line_outputs_are_read_as_errors(tmp_path: Path) -> None:
    pyright = {
        "generalDiagnostics": [
            {
                "file": str(tmp_path / "pkg/app.py"),
                "severity": "error",
                "rule": "reportMissingImports",
                "range": {"start": {"line": 0, "character": 5}},
            },
            {
                "file": str(tmp_path / "pkg/app.py"),
                "severity": "warning",
                "rule": "reportUnusedImport",
                "range": {"start": {"line": 1, "character": 0}},
            },
        ]
    }
    assert parse_basedpyright(tmp_path, json.dumps(pyright)) == [
        ("pkg/app.py", 0, "reportMissingImports")
    ]
    ruff = [
        {"filename": str(tmp_path / "m.py"), "code": "F821", "location": {"row": 3, "column": 1}},
        {"filename": str(tmp_path / "m.py"), "code": "F401", "location": {"row": 1, "column": 1}},
        {"filename": str(tmp_path / "m.py"), "code": None, "location": {"row": 9, "column": 4}},
    ]
    # Ruff's rows are 1-based; only what its server reports as an error counts.
    assert parse_ruff(tmp_path, json.dumps(ruff)) == [
        ("m.py", 2, "F821"),
        ("m.py", 8, "invalid-syntax"),
    ]
    assert parse_basedpyright(tmp_path, "") == []
    assert parse_ruff(tmp_path, "") == []


def test_the_command_line_ruff_never_fixes_what_it_checks(tmp_path: Path) -> None:
    """flask sets ``fix = true``: ruff re-sorted the scratch tree's imports
    and reported the rows of its fixed text (the seeded F821 one line off)."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ruff]\nfix = true\n\n[tool.ruff.lint]\nselect = ["F", "I"]\n'
    )
    text = "import sys\nimport os\nx = undefined_name\nprint(os, sys)\n"
    (tmp_path / "m.py").write_text(text)
    found = parse_ruff(tmp_path, run_ruff(tmp_path, ["m.py"]))
    assert found == [("m.py", 2, "F821")]
    assert (tmp_path / "m.py").read_text() == text


def test_errors_below_inserted_lines_are_the_ones_they_were() -> None:
    before = [("m.py", 1, "reportX"), ("m.py", 10, "reportY")]
    # Two lines inserted at 5: the error at 10 is now at 12; 5 is new.
    after = [("m.py", 1, "reportX"), ("m.py", 5, "reportZ"), ("m.py", 12, "reportY")]
    assert new_errors(before, after, inserted=("m.py", 5, 7)) == [("m.py", 5, "reportZ")]
    assert new_errors(before, after) == [("m.py", 5, "reportZ"), ("m.py", 12, "reportY")]


def test_cold_cases_change_modules_with_at_most_the_importers_a_verdict_checks(
    tmp_path: Path,
) -> None:
    """``--cold``'s floor is the command line on the changed files and their
    importers: sympy's most imported modules (406 importers) made it minutes
    per case, past the importers Rein's first verdicts check
    (``maxImporters``). Bounded, a module with more importers is not
    chosen; unbounded (warm), the most imported comes first."""
    from rein.bench.corpus import Project, commit_workspace
    from rein.bench.gates_structural import plan_cases

    for path, text in TEXTS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    commit_workspace(tmp_path)
    project = Project("pkg", "0", "pkg", 1)
    warm = plan_cases(tmp_path, project, 14)
    assert [c.target for c in warm if c.kind == "delete-module"] == ["pkg/util.py", "pkg/app.py"]
    cold = plan_cases(tmp_path, project, 14, max_importers=1)
    assert [c.target for c in cold if c.kind == "delete-module"] == ["pkg/app.py", "pkg/lone.py"]
    assert all(len(c.after_paths) <= 2 for c in cold if c.kind == "delete-module")


def test_a_deletion_and_a_command_edit_of_one_module_share_the_pristine_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The truth's run of the pristine tree on a case's files is taken once
    for the cases with the same files (a sympy run is a minute at a load of
    10); the runs after each change are each case's own."""
    from rein.bench import gates_structural
    from rein.bench.corpus_cases import CliRun, ErrorKey

    runs: list[tuple[str, ...]] = []

    def run_cli(root: Path, paths: tuple[str, ...]) -> CliRun:
        runs.append(tuple(paths))
        return CliRun([], 0.0)

    monkeypatch.setattr(gates_structural, "run_cli", run_cli)
    (tmp_path / "pkg").mkdir()
    for path, text in TEXTS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    importers = ["pkg/__init__.py", "pkg/app.py"]
    deleted = delete_case("pkg/util.py", TEXTS["pkg/util.py"], importers)
    edited = command_edit_case("pkg/util.py", TEXTS["pkg/util.py"], "helper", importers)
    before_runs: dict[tuple[str, ...], list[ErrorKey]] = {}
    gates_structural.truth(tmp_path, deleted, before_runs)
    gates_structural.truth(tmp_path, edited, before_runs)
    assert runs == [
        deleted.before_paths,
        deleted.after_paths,
        edited.after_paths,
    ]
    assert deleted.before_paths == edited.before_paths
    assert (tmp_path / "pkg/util.py").read_text() == TEXTS["pkg/util.py"]


def test_a_seeded_edits_floor_is_its_file_and_the_importers_a_verdict_judges(
    tmp_path: Path,
) -> None:
    """Issue 32's floor is the command line on the changed files and their
    importers: a seeded edit's is its file and its first ``max_importers``
    importers in the pool's order (same package first), not the file alone."""
    from rein.bench.corpus import Project, commit_workspace
    from rein.bench.gates_structural import plan_cases

    for path, text in TEXTS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    commit_workspace(tmp_path)
    project = Project("pkg", "0", "pkg", 1)
    judged = {
        "pkg/util.py": ("pkg/util.py", "pkg/__init__.py", "pkg/app.py"),
        "pkg/lone.py": ("pkg/lone.py", "pkg/app.py"),
        "pkg/app.py": ("pkg/app.py", "pkg/tests/test_app.py"),
        "pkg/alone.py": ("pkg/alone.py",),
        "pkg/__init__.py": ("pkg/__init__.py", "pkg/app.py"),
    }
    seeded = [
        c
        for c in plan_cases(tmp_path, project, 14, seeded=5, max_importers=2)
        if c.kind == "seeded-error"
    ]
    assert {c.target.split(" ")[0]: c.after_paths for c in seeded} == judged
    assert all(c.before_paths == c.after_paths for c in seeded)
