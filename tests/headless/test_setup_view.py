"""``rein doctor``'s view of the person's setup (issue 37 item 5): every
kind with its source and status, the invalid with the reason, a
workspace's MCP server not yet trusted said so, and nothing asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.config import load_config
from rein.headless.doctor import doctor
from rein.headless.setup_view import setup_view
from tests.bring.setup_repo import setup_repo, write


def test_doctor_lists_the_setup_with_sources_and_why_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = setup_repo(tmp_path / "repo")
    write(
        root,
        {
            "CLAUDE.md": "Be brief.\n",
            ".mcp.json": json.dumps({"mcpServers": {"db": {"command": "dbserver"}}}),
            ".claude/settings.json": json.dumps(
                {
                    "hooks": {
                        "PreToolUse": [
                            {"matcher": "Bash", "hooks": [{"type": "command", "command": "x.sh"}]},
                            {"hooks": [{"type": "command"}]},
                        ]
                    }
                }
            ),
        },
    )
    config = load_config(
        {
            "setup": {"userFolders": False},
            "gates": {"analyzer": {"enabled": False}},
            "mcp": {"servers": {"off": {"command": "x", "disabled": True}}},
        },
        "test",
    )
    setup = setup_view(root, config, tmp_path / "storage")
    assert doctor(root, config.gates.analyzer, setup=setup) == 0
    out = capsys.readouterr().out
    # The workspace's hooks: listed, not trusted (never allowed), the bad entry with its field.
    assert (
        f"your setup for {root}:\n  hooks:\n"
        "    PreToolUse [Bash] (.claude/settings.json): not trusted\n        x.sh\n"
        "    hooks.PreToolUse[1].hooks[0].command (.claude/settings.json): invalid\n"
    ) in out, out
    for expected in [
        "    greeting (.claude/skills/greeting/SKILL.md): used\n",
        "    nameless (.claude/agents/nameless.md): invalid\n        name: required\n",
        "    /explain (.github/prompts/explain.prompt.md): used\n        Explain a module\n",
        "    CLAUDE.md (CLAUDE.md): used\n",
        # Where it came from, as the docs' example shows it: the file, the setting.
        "    db (.mcp.json): not trusted\n        not trusted: .mcp.json defines it to run "
        "dbserver (rein doctor asks nothing",
        "    off (rein.mcp.servers): off\n        disabled\n",
    ]:
        assert expected in out, out
    assert not (tmp_path / "storage").exists()  # nothing remembered, nothing asked
    assert doctor(root, config.gates.analyzer, as_json=True, setup=setup) == 0
    listed = json.loads(capsys.readouterr().out)["setup"]
    assert {"kind": "command", "name": "/file", "source": ".claude/commands/review/file.md",
            "status": "used", "detail": "Review one file for one concern (project:review)"} in listed  # fmt: skip
    assert [i["kind"] for i in listed] == sorted(
        (i["kind"] for i in listed),
        key=["hook", "skill", "agent", "command", "instructions", "mcp"].index,
    )


def test_the_panel_names_an_mcp_servers_source_as_doctor_does() -> None:
    # Defect: both said "mcp.json" (ambiguous with .vscode/mcp.json),
    # "vscode" and "settings", where the docs show the file or the setting.
    from rein.lsp.handlers.setup import mcp_items

    snapshot = {
        "servers": [{"name": "a", "source": "vscode", "state": "running"}],
        "skipped": [
            {"name": "b", "source": "mcp.json", "reason": "not trusted: ..."},
            {"name": "c", "source": "settings", "reason": "disabled"},
        ],
    }
    items = mcp_items(snapshot) or []
    assert [(i.name, i.source, i.status) for i in items] == [
        ("a", ".vscode/mcp.json", "used"),
        ("b", ".mcp.json", "not trusted"),
        ("c", "rein.mcp.servers", "off"),
    ]
