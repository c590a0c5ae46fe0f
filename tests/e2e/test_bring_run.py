"""``rein run`` in a repository set up for Claude Code (issue 37): a real
subprocess, a scripted model, real files in each format
(:mod:`tests.bring.setup_repo`). A command with arguments is the prompt;
the model loads the skill, runs its script with run_command and reads its
reference; the read-only custom agent, started by ``task``, is refused an
edit; the broken files are named on stderr. Without ``--yes`` the skill's
``allowed-tools`` approves nothing: its script is refused like any command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rein.headless.run import run_task
from tests.bring.setup_repo import APP, setup_repo
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCRIPT_CALL = "bash .claude/skills/greeting/scripts/hello.sh Ann"


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def _run(
    tmp_path: Path,
    text: str,
    turns: list[dict[str, Any]],
    *flags: str,
    approval: dict[str, str] | None = None,
) -> Any:
    script = tmp_path / f"script{len(list(tmp_path.glob('script*')))}.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{ROOT}",
    }
    env.pop("REIN_CONFIG", None)
    config = tmp_path / "rein.json"
    config.write_text(
        json.dumps({"gates": {"analyzer": {"enabled": False}}, "approval": approval or {}})
    )
    return subprocess.run(
        [*REIN, "run", text, "-w", str(tmp_path / "repo"),
         "--provider", "replay", "--script", str(script), "--json", *flags,
         "--storage", str(tmp_path / "store"), "--config", str(config)],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _events(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return lines[:-1], lines[-1]["result"]


def test_a_claude_code_setup_works_in_rein_run(tmp_path: Path) -> None:
    setup_repo(tmp_path / "repo")
    turns = [
        {
            "expect": {
                "last_message_contains": "Review app.py for style only. The whole request: "
                "app.py style",
                "system_contains": "  - greeting: Greets people the house way.",
                "tools_include": ["skill", "task"],
            },
            **_call("skill", name="greeting"),
        },
        {
            "expect": {"last_message_contains": "- scripts/hello.sh"},
            **_call("run_command", command=SCRIPT_CALL),
        },
        {
            "expect": {"last_message_contains": "hello from the skill, Ann"},
            **_call("read_file", path=".claude/skills/greeting/references/style.md"),
        },
        {
            "expect": {
                "last_message_contains": "Greet warmly",
                "system_contains": "  - reader: Reads code and reports; never changes anything.",
            },
            **_call("task", agent="reader", description="read app", prompt="Report on app.py"),
        },
        # The custom agent: its instructions, only its tools.
        {
            "expect": {
                "system_contains": "# Agent: reader\nYou are a careful reader.",
                "tools_include": ["read_file", "grep", "glob"],
                "tools_exclude": ["edit_file", "write_file", "run_command", "task", "skill"],
            },
            **_call("edit_file", path="app.py", old_string="hi", new_string="bye"),
        },
        {
            "expect": {"last_message_contains": "Unknown tool 'edit_file'"},
            "text": "I cannot edit; app.py greets.",
        },
        {
            "expect": {
                "last_message_contains": "agent reader: its model 'sonnet' is not mapped",
            },
            "text": "Reviewed.",
        },
    ]
    done = _run(tmp_path, "/file app.py style", turns, "--yes")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    events, result = _events(done.stdout)
    assert result["text"] == "Reviewed."
    ends = {e["name"]: e for e in events if e["type"] == "tool_call_end"}
    assert "hello from the skill, Ann" in ends["run_command"]["content"]
    child = [
        e["event"] for e in events
        if e["type"] == "subagent_activity" and e["event"]["type"] == "tool_call_end"
    ]  # fmt: skip
    assert [(c["name"], c["is_error"]) for c in child] == [("edit_file", True)]
    assert (tmp_path / "repo" / "app.py").read_text() == APP
    # The broken files are named with the reason, once, at the start.
    assert (
        "! skill .claude/skills/broken/SKILL.md is not used: name: 'other' is not the name "
        "of its folder 'broken'" in done.stderr
    )
    assert "! agent .claude/agents/nameless.md is not used: name: required" in done.stderr
    assert done.stderr.count(".claude/commands/bad.md") == 1
    assert (
        "! /file names the model 'haiku', which is not mapped to the configured "
        "provider's models (setup.agentModels): the session's model runs it" in done.stderr
    )


def test_an_unknown_command_stops_rein_run_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process: rein run's own path, before any model is made."""
    setup_repo(tmp_path / "repo")
    config = tmp_path / "rein.json"
    config.write_text(json.dumps({"setup": {"userFolders": False}}))
    code = run_task(
        "/nope x",
        workspace=str(tmp_path / "repo"),
        config_file=str(config),
        overrides={"model.provider": "replay", "model.script": str(tmp_path / "none.yaml")},
        as_json=True,
        assume_yes=False,
        mode="agent",
    )
    assert code == 2
    assert capsys.readouterr().err == (
        "rein run: unknown command /nope; the known commands are: /file, /explain, /greeting "
        "(to send a text that starts with '/', start it with '//')\n"
    )


def test_a_skills_allowed_tools_approve_nothing(tmp_path: Path) -> None:
    """No --yes and no terminal: the skill's script is refused like any command
    that asks (``approval.command: "ask"``; in the default sandbox it would
    run without asking, as any command does, whatever ``allowed-tools`` says)."""
    setup_repo(tmp_path / "repo")
    turns = [
        _call("run_command", command=SCRIPT_CALL),
        {"expect": {"last_message_contains": "nobody can approve this"}, "text": "Refused."},
    ]
    done = _run(tmp_path, "/review:file app.py x", turns, approval={"command": "ask"})
    assert done.returncode == 0, done.stderr[-3000:]
    events, result = _events(done.stdout)
    assert result["text"] == "Refused."
    [end] = [e for e in events if e["type"] == "tool_call_end"]
    assert end["is_error"] and "hello from the skill" not in end["content"]
