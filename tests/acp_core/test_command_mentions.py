"""A slash command over ACP with file mentions: a mentioned file is one
argument (its path), an embedded file's text comes after the command."""

from __future__ import annotations

from pathlib import Path

from acp.helpers import embedded_text_resource, resource_block, resource_link_block, text_block

from rein.acp.commands import prompt_of
from rein.config import load_config
from tests.bring.setup_repo import write


def test_a_mention_is_one_argument_and_an_embedded_text_follows(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {".claude/commands/review.md": "Review $1 with focus $2.\n", "my app.py": "x\n"})
    config = load_config({"setup": {"userFolders": False}})
    link = resource_link_block("my app.py", (root / "my app.py").as_uri())
    ran = prompt_of(config, root, [text_block("/review"), link, text_block("style")])
    assert ran.command is not None and ran.command.name == "review"
    assert ran.text == "Review my app.py with focus style."
    embedded = resource_block(embedded_text_resource((root / "my app.py").as_uri(), "x = 1"))
    ran = prompt_of(config, root, [text_block("/review"), embedded, text_block("bugs")])
    assert ran.text == (
        f"Review my app.py with focus bugs.\n\n"
        f'<resource uri="{(root / "my app.py").as_uri()}">\nx = 1\n</resource>'
    )
    # Not a command: the blocks' text as before.
    plain = prompt_of(config, root, [text_block("look at"), link])
    assert (plain.command, plain.text) == (None, "look at\n[file: my app.py]")
