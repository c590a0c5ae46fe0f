"""An ACP client's embedded resource (a file the person mentioned, its text
sent in the prompt) is refused when it is a secret file of the workspace
(``tools.secretFiles``), as the editor's attachments are; the person's list
decides (rein.acp.prompts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import EmbeddedResourceContentBlock, TextContentBlock, TextResourceContents

from rein.acp.commands import prompt_of
from rein.config import load_config

TOKEN = "npm_Zq8tokenvalue"


def _blocks(root: Path, name: str) -> list[object]:
    uri = (root / name).as_uri()
    return [
        TextContentBlock(type="text", text="publish it"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri=uri, text=TOKEN)
        ),
    ]


def test_an_embedded_secret_file_is_refused_naming_its_block(tmp_path: Path) -> None:
    (tmp_path / ".npmrc").write_text(TOKEN)
    (tmp_path / "app.py").write_text("x = 1\n")
    config = load_config({"setup": {"userFolders": False}})
    with pytest.raises(RequestError) as info:
        prompt_of(config, tmp_path, _blocks(tmp_path, ".npmrc"))
    message = str(info.value)
    assert "prompt[1]" in message and "is a secret file (tools.secretFiles: '.npmrc')" in message
    assert TOKEN not in message
    # Another file is sent; with the person's list off, the secret one is too.
    assert TOKEN in prompt_of(config, tmp_path, _blocks(tmp_path, "app.py")).text
    off = load_config({"setup": {"userFolders": False}, "tools": {"secretFiles": []}})
    assert TOKEN in prompt_of(off, tmp_path, _blocks(tmp_path, ".npmrc")).text
