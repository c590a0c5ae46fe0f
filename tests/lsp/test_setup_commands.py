"""The person's setup over the real ``rein serve`` (issue 37): the panel's
``/`` list (``rein/commands``), a command with arguments run by
``rein/prompt`` with the skill it uses, an unknown command answered with
the known ones, and a path that starts with ``/`` sent as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.bring.setup_repo import setup_repo
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


async def test_commands_listed_run_and_refused_over_rein_serve(tmp_path: Path) -> None:
    root = setup_repo(tmp_path / "repo")
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "last_message_contains": "Review app.py for style only.",
                    "tools_include": ["skill"],
                },
                "tool_calls": [{"name": "skill", "arguments": {"name": "greeting"}}],
            },
            {"expect": {"last_message_contains": "# Skill: greeting"}, "text": "reviewed"},
            {"expect": {"last_message_contains": "/etc/hosts explain"}, "text": "a path"},
        ],
    )
    settings = {"setup": {"userFolders": False}}
    async with running_server(root, tmp_path, settings=settings) as ed:
        send = ed.client.protocol.send_request_async
        listed = await send("rein/commands", {})
        assert listed["commands"] == [
            {
                "name": "file",
                "description": "Review one file for one concern (project:review)",
                "argumentHint": "FILE CONCERN",
                "source": ".claude/commands/review/file.md",
            },
            {
                "name": "explain",
                "description": "Explain a module",
                "argumentHint": None,
                "source": ".github/prompts/explain.prompt.md",
            },
            {
                "name": "greeting",
                "description": "Greets people the house way. Use when asked to greet someone.",
                "argumentHint": None,
                "source": ".claude/skills/greeting/SKILL.md",
            },
        ]
        assert [i["path"] for i in listed["invalid"]] == [".claude/commands/bad.md"]
        with pytest.raises(JsonRpcInvalidParams) as refused:
            await send("rein/prompt", {"text": "/nope now"})
        assert (
            "rein/prompt: invalid params: text: unknown command /nope; the known commands "
            "are: /file, /explain, /greeting" in str(refused.value)
        )
        ran = await send("rein/prompt", {"text": "/file app.py style"})
        assert (ran["status"], ran["text"]) == ("completed", "reviewed"), ran
        same = {"sessionId": ran["sessionId"]}
        path = await send("rein/prompt", {"text": "/etc/hosts explain", **same})
        assert (path["status"], path["text"]) == ("completed", "a path"), path
        # The unused setup files were told once, when the first session was made.
        told = [m.message for m in ed.client.messages if "setup files are not used" in m.message]
        assert told == [
            "Rein: 3 of your setup files are not used (rein doctor lists them): skill "
            ".claude/skills/broken/SKILL.md is not used: name: 'other' is not the name of its "
            "folder 'broken'; agent .claude/agents/nameless.md is not used: name: required; "
            "command .claude/commands/bad.md is not used: the frontmatter is not valid YAML "
            "(line 3): expected ',' or ']', but got '<stream end>'"
        ]
        # The panel's setup view (rein/setup): the same items as rein doctor's.
        setup = await send("rein/setup", {})
        seen = {(i["kind"], i["name"], i["source"], i["status"]) for i in setup["items"]}
        assert {
            ("skill", "greeting", ".claude/skills/greeting/SKILL.md", "used"),
            ("skill", "broken", ".claude/skills/broken/SKILL.md", "invalid"),
            ("agent", "reader", ".claude/agents/reader.md", "used"),
            ("agent", "nameless", ".claude/agents/nameless.md", "invalid"),
            ("command", "/file", ".claude/commands/review/file.md", "used"),
            ("command", "bad", ".claude/commands/bad.md", "invalid"),
        } <= seen, seen
        bad = next(i for i in setup["items"] if i["name"] == "nameless")
        assert bad["detail"] == "name: required"
        # No MCP server is configured: none loaded, said as such.
        assert setup["mcpLoaded"] is False and not [i for i in setup["items"] if i["kind"] == "mcp"]
        with pytest.raises(JsonRpcInvalidParams, match="rein/setup"):
            await send("rein/setup", {"x": 1})
