"""``write_file`` never overwrites what the person typed after the model
read the file, over the real ``rein serve``: the model read app.py, the
person typed in it (here while the write's approval was open), and the
model's whole-file write, made from its stale read, is refused with the
reason instead of silently replacing the person's text (before, it was
applied and their line was gone)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e

TYPED = "# the person typed this\n"


async def test_a_write_from_a_stale_read_keeps_what_the_person_typed(
    workspace: Path, tmp_path: Path
) -> None:
    written = (workspace / "app.py").read_text().replace("hello", "hi")
    write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "app.py", "content": written}}
                ]
            },
            {
                "expect": {"last_message_contains": "changed since you read it"},
                "text": "will re-read",
            },
        ],
    )
    settings = {"approval": {"write": "ask"}}
    async with running_server(workspace, tmp_path, settings=settings) as editor:
        release = editor.slow["rein/confirm"] = asyncio.Event()
        editor.open("app.py")
        prompt = asyncio.ensure_future(
            editor.client.protocol.send_request_async("rein/prompt", {"text": "say hi"})
        )
        await asyncio.wait_for(editor.request_held.wait(), 30)
        editor.type("app.py", editor.docs["app.py"][1] + TYPED)
        release.set()
        result = await asyncio.wait_for(prompt, 30)
    assert result["status"] == "completed", result.get("error")
    text = editor.docs["app.py"][1]
    assert TYPED in text
    assert "hi {name}" not in text
