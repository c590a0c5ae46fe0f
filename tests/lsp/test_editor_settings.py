"""A setting changed from the editor: `rein serve` (a real subprocess)
judging a run that widens ruff's rules in ``pyproject.toml`` and then edits
a module, with the editor's diagnostics from a real ruff server behind it.
The editor's diagnostics do not say which files they cover: taken to cover
every one, ``pyproject.toml`` was no setting there, and the module's own
baseline, taken after the setting changed, held its new findings: the
verdict passed (review68). A setting is now told by its name
(``analyzer_inputs.read_not_checked``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.fakes.editor import Editor
from tests.lsp.conftest import _settings, editing, serve_fixture, write_script

pytestmark = pytest.mark.e2e

MODULE = "import os\n\n\ndef f(x):\n    return x\n"


@serve_fixture()
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "m.py").write_text(MODULE)
    (root / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["E"]\n')
    settings = _settings(tmp_path)
    settings["gates"]["analyzer"]["severity"] = "warning"  # ruff's findings are warnings
    async with editing(Editor(lsp_client, root), settings, analyzer=True):
        yield lsp_client


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    arguments = {"path": path, "old_string": old, "new_string": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": arguments}]}


async def test_a_module_edited_after_ruffs_rules_were_widened_does_not_pass(
    client: LanguageClient, tmp_path: Path
) -> None:
    """m.py's own baseline is taken after the setting changed: it holds the
    new findings. The editor's diagnostics at the run's start hold what its
    servers checked, not known to be every file: the verdict cannot tell
    what m.py had before the setting, and says so rather than pass."""
    widen = _edit("pyproject.toml", '["E"]', '["ALL"]')
    write_script(tmp_path, [widen, _edit("m.py", "return x\n", "return x + 1\n"), {"text": "done"}])
    editor: Editor = client.editor  # type: ignore[attr-defined]
    result: dict[str, Any] = await asyncio.wait_for(
        client.protocol.send_request_async("rein/prompt", {"text": "widen the rules"}), 60
    )
    assert result["status"] == "completed", result
    [first, *_] = [
        e["event"]
        for e in editor.events
        if e["event"]["type"] == "gate_result" and e["event"]["gate"] == "analyzer"
    ]
    assert (first["status"], first["blockers"]) == ("unverified", []), first
    assert "a setting the analyzers read from the disk changed (pyproject.toml)" in first["detail"]
