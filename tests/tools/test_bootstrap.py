"""Bootstrap context: project instructions under the workspace sandbox."""

from __future__ import annotations

import os
from pathlib import Path

from rein.tools.bootstrap import bootstrap_message, find_project_instructions, project_instructions


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
    assert "CLAUDE.md was not read: it leads to a protected file (.env*)." in message
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
