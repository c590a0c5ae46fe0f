"""CLAUDE.md's ``@path`` imports (rein.tools.instruction_imports): the
files it names come into the prompt after it, as Claude Code brings them
in, under the instruction files' sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.config import ReinConfig, load_config
from rein.session import SessionSpec
from rein.session.builder import build_session
from rein.tools.bootstrap import find_instructions, instructions_text, user_instructions
from rein.tools.instruction_imports import MAX_HOPS, MAX_IMPORTS
from tests.bring.setup_repo import write
from tests.fakes.models import FunctionModel, assistant
from tests.fakes.session import fake_session_ports


def test_claude_md_brings_in_the_files_it_imports(tmp_path: Path) -> None:
    # Defect: "See @docs/conventions.md" reached the model as those words;
    # the conventions themselves never did.
    root = tmp_path / "ws"
    write(
        root,
        {
            "CLAUDE.md": "See @README for the overview and @docs/conventions.md.\n",
            "README": "README-TEXT",
            "docs/conventions.md": (
                "CONVENTIONS-TEXT\nAlso @more.md, `@code.md`, @team and @CLAUDE.md\n"
                "```\n@fenced.md\n```\n"
            ),
            "docs/more.md": "MORE-TEXT",
            "docs/code.md": "CODE-SPAN-TEXT",
            "docs/fenced.md": "FENCED-TEXT",
            "AGENTS.md": "Read @docs/code.md.",  # only CLAUDE.md imports
        },
    )
    found = find_instructions(root)
    assert [(f.path, f.imported_by) for f in found.files] == [
        ("AGENTS.md", None),
        ("CLAUDE.md", None),
        ("README", "CLAUDE.md"),
        ("docs/conventions.md", "CLAUDE.md"),  # the sentence's "." is not the name's
        ("docs/more.md", "docs/conventions.md"),  # relative to the importing file
    ]
    assert found.notes == ()
    text = instructions_text(found.files)
    assert text is not None
    assert '<project_instructions file="docs/more.md" imported_by="docs/conventions.md">' in text
    assert "CODE-SPAN-TEXT" not in text and "FENCED-TEXT" not in text


def test_an_import_out_of_the_workspace_or_of_the_home_is_never_read(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    write(home, {".claude/mine.md": "HOME-TEXT", "outside.md": "OUTSIDE-TEXT"})
    write(
        root,
        {
            "CLAUDE.md": (
                f"@~/.claude/mine.md @../home/outside.md @{home}/outside.md @link.md @.env\n"
            ),
            ".env": "KEY=1",
        },
    )
    os.symlink(home / "outside.md", root / "link.md")
    found = find_instructions(root)
    assert [f.path for f in found.files] == ["CLAUDE.md"]
    text = instructions_text(found.files) or ""
    assert "HOME-TEXT" not in text and "OUTSIDE-TEXT" not in text and "KEY=1" not in text
    notes = "\n".join(found.notes)
    assert "a workspace's file does not bring the home folder's files in" in notes
    assert notes.count("leads outside the workspace") == 3
    assert "CLAUDE.md imports @.env: .env was not read: it is a secret file" in notes


def test_imports_are_followed_five_hops_deep_and_at_most_twenty_files(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    chain = {f"c{i}.md": f"C{i} @c{i + 1}.md" for i in range(1, 8)}
    write(root, {"CLAUDE.md": "@c1.md", **chain})
    assert [f.path for f in find_instructions(root).files] == [
        "CLAUDE.md",
        *(f"c{i}.md" for i in range(1, MAX_HOPS + 1)),
    ]
    many = {f"m{i}.md": f"M{i}" for i in range(MAX_IMPORTS + 3)}
    write(tmp_path / "wide", {"CLAUDE.md": " ".join(f"@{n}" for n in many), **many})
    found = find_instructions(tmp_path / "wide")
    assert len(found.files) == 1 + MAX_IMPORTS
    assert [n.split(",")[0] for n in found.notes] == [f"CLAUDE.md imports @m{MAX_IMPORTS}.md"]


def test_the_persons_own_claude_md_comes_first_with_its_imports_inside_dot_claude(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defect: ~/.claude/CLAUDE.md (Claude Code's user memory: "answer
    # tersely", "use pnpm") never reached the model.
    root, home = tmp_path / "ws", tmp_path / "home"
    write(
        home,
        {
            ".claude/CLAUDE.md": "MINE @rules.md @~/.claude/more.md @~/.ssh/id_rsa\n",
            ".claude/rules.md": "RULES-TEXT",
            ".claude/more.md": "MORE-TEXT",
            ".ssh/id_rsa": "PRIVATE",
        },
    )
    write(root, {"CLAUDE.md": "PROJECT"})
    own = user_instructions(home)
    assert [(f.path, f.imported_by) for f in own.files] == [
        ("~/.claude/CLAUDE.md", None),
        ("~/.claude/rules.md", "~/.claude/CLAUDE.md"),
        ("~/.claude/more.md", "~/.claude/CLAUDE.md"),
    ]
    [note] = own.notes
    assert note.startswith("~/.claude/CLAUDE.md imports @~/.ssh/id_rsa")
    assert note.endswith("it leads outside ~/.claude.")
    monkeypatch.setenv("HOME", str(home))
    model = FunctionModel(lambda request: assistant("ok"))
    session = build_session(ReinConfig(), fake_session_ports(root, model), SessionSpec())
    prompt = str(session.agent.system_prompt)
    assert prompt.index("MINE") < prompt.index("PROJECT") and "MORE-TEXT" in prompt
    assert "PRIVATE" not in prompt
    off = load_config({"setup": {"userFolders": False}})
    session = build_session(off, fake_session_ports(root, model), SessionSpec())
    assert "MINE" not in str(session.agent.system_prompt)


def test_the_persons_large_files_never_push_the_projects_out(tmp_path: Path) -> None:
    # Defect: ~/.claude/CLAUDE.md and its imports came first and filled the
    # prompt's 20 000 characters; the project's CLAUDE.md was cut away
    # though the model was told it was found, and the person's file was
    # introduced as the repository's guidance.
    from rein.harness.prompts import project_instructions_section
    from rein.tools.bootstrap import project_instructions

    root, home = tmp_path / "ws", tmp_path / "home"
    write(
        home,
        {
            ".claude/CLAUDE.md": "MINE @style.md @more.md\n",
            ".claude/style.md": "s" * 15_900,
            ".claude/more.md": "m" * 4_000 + "MORE-END",
        },
    )
    write(root, {"CLAUDE.md": "PROJECT-RULE."})
    section = project_instructions_section(project_instructions(root, home=home)) or ""
    assert "PROJECT-RULE." in section and "project instructions cut" not in section
    # Only the longest is cut; the shorter ones fit whole.
    assert "Cut to fit the prompt (read the rest when you need it): ~/.claude/style.md." in section
    assert "[... ~/.claude/style.md cut here to fit the prompt ...]" in section
    assert "MINE" in section and "MORE-END" in section
    assert "are the person's own instructions" in section


def test_your_claude_md_linked_from_your_dotfiles_is_read(tmp_path: Path) -> None:
    # Defect: a per-file link ~/.claude/CLAUDE.md -> ~/dotfiles/CLAUDE.md
    # was not read, with the note "it leads outside the workspace".
    home = tmp_path / "home"
    write(home, {"dotfiles/CLAUDE.md": "DOTFILES-RULE @rules.md\n", ".claude/rules.md": "RULES"})
    os.symlink(home / "dotfiles" / "CLAUDE.md", home / ".claude" / "CLAUDE.md")
    own = user_instructions(home)
    assert [(f.path, f.text) for f in own.files] == [
        ("~/.claude/CLAUDE.md", "DOTFILES-RULE @rules.md"),
        ("~/.claude/rules.md", "RULES"),  # imports still from inside ~/.claude
    ]
    assert own.notes == ()
    # A link to a protected file is still refused, and the note names ~/.claude.
    write(home, {"dotfiles/my-secret.md": "KEY=1"})
    (home / ".claude" / "CLAUDE.md").unlink()
    os.symlink(home / "dotfiles" / "my-secret.md", home / ".claude" / "CLAUDE.md")
    refused = user_instructions(home)
    assert refused.files == ()
    [note] = refused.notes
    assert note.startswith("~/.claude/CLAUDE.md was not read: it leads to a protected file")
