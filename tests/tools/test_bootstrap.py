"""Bootstrap context: project instructions under the workspace sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.config import load_config
from rein.harness.errors import ConfigError
from rein.tools.bootstrap import (
    bootstrap_message,
    find_instructions,
    find_project_instructions,
    project_instructions,
)


def test_instructions_that_lead_out_of_the_workspace_or_to_a_protected_file_are_not_read(
    tmp_path: Path,
) -> None:
    """Issue 17: instruction files are read under the file tools' sandbox."""
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET OUTSIDE TEXT")
    root = tmp_path / "ws"
    (root / ".github").mkdir(parents=True)
    (root / ".env").write_text("API_KEY=SECRET ENV TEXT")
    (root / "AGENTS.md").symlink_to(outside)
    (root / "CLAUDE.md").symlink_to(root / ".env")
    (root / ".github" / "copilot-instructions.md").write_text("Use tabs.")
    assert find_project_instructions(root) == (".github/copilot-instructions.md", "Use tabs.")
    message = bootstrap_message(root, include_instructions=True)
    assert "SECRET" not in message and "Use tabs." in message
    assert "AGENTS.md was not read: it leads outside the workspace." in message
    assert "CLAUDE.md was not read: it is a secret file (tools.secretFiles: '.env')." in message
    # With nothing else to read: no instructions at all, and the notes.
    (root / ".github" / "copilot-instructions.md").unlink()
    assert project_instructions(root) is None
    assert "AGENTS.md was not read" in bootstrap_message(root)


def test_an_instruction_file_hard_linked_elsewhere_is_not_read(tmp_path: Path) -> None:
    """Issue 17: a hard link may be a second name of a file outside."""
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET OUTSIDE TEXT")
    root = tmp_path / "ws"
    root.mkdir()
    os.link(outside, root / "AGENTS.md")
    (root / "CLAUDE.md").write_text("Use tabs.")
    assert find_project_instructions(root) == ("CLAUDE.md", "Use tabs.")
    message = bootstrap_message(root, include_instructions=True)
    assert "SECRET" not in message
    assert "AGENTS.md was not read: it is a hard link (2 names)" in message


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_every_instruction_file_is_listed_and_nested_agents_md_apply_to_their_folder(
    tmp_path: Path,
) -> None:
    """Issue 21: AGENTS.md in subfolders (nearest wins, all listed), CLAUDE.md,
    .github/copilot-instructions.md and .cursor/rules/*.mdc."""
    root = tmp_path / "ws"
    _write(
        root,
        {
            "AGENTS.md": "Root rule.",
            "src/api/AGENTS.md": "API rule.",
            "src/AGENTS.md": "Src rule.",
            "CLAUDE.md": "Claude rule.",
            ".github/copilot-instructions.md": "Copilot rule.",
            ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nCursor rule.",
            ".cursor/rules/notes.txt": "not a rule",
            "build/AGENTS.md": "Ignored build rule.",
            ".gitignore": "build/\n",
        },
    )
    found = find_instructions(root)
    assert [(f.path, f.scope) for f in found.files] == [
        ("AGENTS.md", None),
        ("CLAUDE.md", None),
        (".github/copilot-instructions.md", None),
        (".cursor/rules/style.mdc", None),
        ("src/AGENTS.md", "src/"),
        ("src/api/AGENTS.md", "src/api/"),
    ]
    text = project_instructions(root)
    assert text is not None
    assert text.startswith(
        "Instruction files found: AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, "
        ".cursor/rules/style.mdc, src/AGENTS.md, src/api/AGENTS.md.\n"
        "An AGENTS.md in a subfolder applies to the files under that folder; for a file, "
        "the AGENTS.md nearest to it wins"
    )
    assert (
        '<project_instructions file="src/api/AGENTS.md" applies_to="src/api/">\nAPI rule.\n'
        "</project_instructions>"
    ) in text
    assert "Cursor rule." in text and "not a rule" not in text
    assert "Ignored build rule." not in text  # .gitignore-aware


def test_the_instruction_files_setting_chooses_the_files(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _write(root, {"AGENTS.md": "Agents.", "CLAUDE.md": "Claude.", "docs/RULES.md": "Rules."})
    text = project_instructions(root, files=["CLAUDE.md", "docs/*.md"])
    assert text is not None
    assert "Claude." in text and "Rules." in text and "Agents." not in text
    assert project_instructions(root, files=[]) is None
    # Nested AGENTS.md only with a glob that reaches them.
    _write(root, {"pkg/AGENTS.md": "Pkg."})
    only_root = project_instructions(root, files=["AGENTS.md"])
    assert only_root is not None and "Pkg." not in only_root


def test_a_nested_instruction_file_leading_out_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET OUTSIDE TEXT")
    root = tmp_path / "ws"
    _write(root, {"AGENTS.md": "Root rule."})
    (root / "lib").mkdir()
    (root / "lib" / "AGENTS.md").symlink_to(outside)
    found = find_instructions(root)
    assert [f.path for f in found.files] == ["AGENTS.md"]
    assert found.notes == ("lib/AGENTS.md was not read: it leads outside the workspace.",)
    assert "SECRET" not in bootstrap_message(root, include_instructions=True)


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        pytest.param("AGENTS.md", "must be a list of globs", id="not-a-list"),
        pytest.param(["AGENTS.md", ""], "must be a list of globs", id="empty-glob"),
        pytest.param(["/etc/*.md"], "relative to the workspace root", id="absolute"),
        pytest.param(["../other/AGENTS.md"], "relative to the workspace root", id="outside"),
    ],
)
def test_an_invalid_instruction_files_setting_names_its_key(files: object, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as info:
        load_config({"instructions": {"files": files}}, "test")
    assert "rein.instructions.files" in str(info.value)
    assert info.value.key == "instructions.files"
    assert load_config(
        {"instructions": {"files": ["CLAUDE.md"]}}, "test"
    ).tool_settings().instruction_files == ("CLAUDE.md",)
