"""Claude Code's hook protocol: every Rein tool has the protocol's name and
its input the protocol's fields, matchers, and what an exit code and a JSON
answer mean; hooks read from settings files and Rein's configuration, an
invalid entry named by its field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rein.bring.hook_config import discover_hooks, workspace_hooks_key
from rein.bring.hook_protocol import (
    TOOL_NAMES,
    HookAnswer,
    claude_tool,
    matches,
    read_answer,
    rewritten,
)
from rein.config import ReinConfig, load_config
from rein.harness.errors import ConfigError
from rein.mcp.trust import MemoryTrustStore
from rein.tools.registry import default_tools


def test_every_rein_tool_has_the_protocol_s_name_and_the_docs_table_lists_it() -> None:
    names = set(default_tools().names()) | {"task"}
    assert names <= set(TOOL_NAMES), names - set(TOOL_NAMES)
    guide = (Path(__file__).resolve().parents[2] / "docs" / "user-guide.md").read_text()
    for rein_name, claude_name in TOOL_NAMES.items():
        assert f"| `{rein_name}` | `{claude_name}` |" in guide, rein_name


def test_inputs_are_named_as_the_protocol_names_them_with_absolute_paths(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    assert claude_tool("run_command", {"command": "ls", "timeout": 2}, root) == (
        "Bash",
        {"command": "ls", "timeout": 2000},
    )
    edit = {"path": "src/a.py", "old_string": "a", "new_string": "b", "replace_all": False}
    assert claude_tool("edit_file", edit, root) == (
        "Edit",
        {
            "file_path": str(root / "src/a.py"),
            "old_string": "a",
            "new_string": "b",
            "replace_all": False,
        },
    )
    assert claude_tool("write_file", {"path": "b.txt", "content": "x"}, root) == (
        "Write",
        {"file_path": str(root / "b.txt"), "content": "x"},
    )
    assert claude_tool("read_file", {"path": "/etc/hosts"}, root) == (
        "Read",
        {"file_path": "/etc/hosts"},
    )
    assert claude_tool("grep", {"pattern": "x", "path": "."}, root) == (
        "Grep",
        {"pattern": "x", "path": str(root)},
    )
    assert claude_tool("glob", {"pattern": "*.py"}, root)[0] == "Glob"
    assert claude_tool("mcp__time__now", {"tz": "UTC"}, root) == ("mcp__time__now", {"tz": "UTC"})


@pytest.mark.parametrize(
    ("matcher", "tool", "fits"),
    [
        ("", "Bash", True),
        ("*", "Edit", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Read", False),
        ("mcp__.*", "mcp__time__now", True),
        ("[", "[", True),
        ("[", "Bash", False),
        # Only names, digits, _ and |: exact names; anything else: searched, not anchored.
        ("Notebook", "NotebookEdit", False),
        ("Edit|Wri", "Write", False),
        ("^mcp__", "mcp__time__now", True),
        ("^Notebook", "NotebookEdit", True),
        ("mcp__.*__write", "mcp__fs__write_file", True),
        ("Edit$", "NotebookEdit", True),
        ("^Bash$", "BashOutput", False),
    ],
)
def test_matchers(matcher: str, tool: str, fits: bool) -> None:
    assert matches(matcher, tool) is fits


def test_exit_codes_and_json_answers_mean_what_the_protocol_says() -> None:
    assert read_answer("PreToolUse", 2, "ignored", "no rm\n") == HookAnswer(block="no rm")
    assert read_answer("PreToolUse", 1, "", "boom") == HookAnswer(error="exit 1: boom")
    assert read_answer("PreToolUse", 0, "fine", "") == HookAnswer()
    assert read_answer("UserPromptSubmit", 0, "ctx\n", "") == HookAnswer(context="ctx")
    assert read_answer("SessionStart", 0, "ctx", "") == HookAnswer(context="ctx")
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not there",
        }
    }
    assert read_answer("PreToolUse", 0, json.dumps(deny), "") == HookAnswer(
        block="not there", permission="deny", permission_reason="not there"
    )
    ask = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "?"}}
    assert read_answer("PreToolUse", 0, json.dumps(ask), "").permission == "ask"
    assert read_answer("PreToolUse", 0, '{"decision": "block", "reason": "old"}', "") == (
        HookAnswer(block="old", permission="deny", permission_reason="old")
    )
    stop = {"decision": "block", "reason": "go on"}
    assert read_answer("Stop", 0, json.dumps(stop), "") == HookAnswer(block="go on")
    halt = {"continue": False, "stopReason": "enough"}
    assert read_answer("PostToolUse", 0, json.dumps(halt), "").stop == "enough"
    extra = {"hookSpecificOutput": {"additionalContext": "more"}}
    assert read_answer("PostToolUse", 0, json.dumps(extra), "").context == "more"
    rewrite = {"hookSpecificOutput": {"updatedInput": {"command": "ls -a", "timeout": 5}}}
    updated = read_answer("PreToolUse", 0, json.dumps(rewrite), "").updated_input
    assert updated == {"command": "ls -a", "timeout": 5}
    assert rewritten(updated, {"command": "ls", "timeout": 5}) == ["command"]
    assert rewritten(updated, {"command": "ls -a", "timeout": 5}) == []
    assert rewritten(None, {"command": "ls"}) == []
    # A field the input does not have, given as null, changes nothing; a new value does.
    assert rewritten({"command": "ls", "timeout": None}, {"command": "ls"}) == []
    assert rewritten({"command": "ls", "timeout": 5}, {"command": "ls"}) == ["timeout"]
    assert read_answer("PostToolUse", 0, json.dumps(rewrite), "").updated_input is None
    # Not JSON after all: plain text (context where the event takes it).
    assert read_answer("Stop", 0, "{not json", "") == HookAnswer()
    assert read_answer("UserPromptSubmit", 0, "{not json", "") == HookAnswer(context="{not json")


def test_hooks_are_read_from_every_place_and_an_invalid_entry_is_named(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": "team.sh"}]}
    bad = {"matcher": "Bash", "hooks": [{"type": "command"}]}
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [entry, bad], "Later": []}})
    )
    (root / ".claude" / "settings.local.json").write_text("{oops")
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine.sh"}]}]}})
    )
    config = load_config(
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "rein.sh"}]}]}}
    )
    found = discover_hooks(root, home, config)
    assert [(h.command, h.source, h.trusted_by_default) for h in found.hooks] == [
        ("rein.sh", "rein.hooks", True),
        ("mine.sh", "~/.claude/settings.json", True),
        ("team.sh", ".claude/settings.json", False),
    ]
    invalid = [(i.source, i.where) for i in found.invalid]
    assert invalid == [
        (".claude/settings.json", "hooks.PreToolUse[1].hooks[0].command"),
        (".claude/settings.json", "hooks.Later"),
        (".claude/settings.local.json", "(file)"),
    ]
    key = workspace_hooks_key(root, found.workspace_hooks)
    assert key == workspace_hooks_key(root, discover_hooks(root, home, config).workspace_hooks)
    # What a setup view shows: whether the person allowed them (nothing asked, nothing run).
    trust = MemoryTrustStore()
    assert found.workspace_allowed is None
    assert discover_hooks(root, home, config, trust).workspace_allowed is False
    trust.remember(key)
    assert discover_hooks(root, home, config, trust).workspace_allowed is True
    entry["hooks"][0]["command"] = "team.sh --changed"
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    assert key != workspace_hooks_key(root, discover_hooks(root, home, config).workspace_hooks)


def test_an_invalid_rein_hooks_entry_is_a_configuration_error_naming_the_field() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "x"}]}]}})
    message = str(caught.value)
    assert "rein.hooks: at PreToolUse[0].hooks[0].type:" in message
    with pytest.raises(ConfigError, match=r"rein\.hookOptions\.timeoutS"):
        load_config({"hookOptions": {"timeoutS": 0}})
    assert ReinConfig().hook_options.max_stop_continuations == 3
    assert ReinConfig().hook_options.timeout_s == 60.0


def test_paths_are_normalised_and_disable_all_hooks_switches_hooks_off(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    # A src/ prefix check sees where the path really points, relative or absolute.
    assert claude_tool("write_file", {"path": "src/../x.py"}, root)[1]["file_path"] == str(
        root / "x.py"
    )
    assert claude_tool("read_file", {"path": f"{root}/src/../../etc/x"}, root)[1] == {
        "file_path": str(root.parent / "etc" / "x")
    }

    home, ws = tmp_path / "home", tmp_path / "ws"
    hook = {"hooks": [{"type": "command", "command": "true"}]}
    for folder in (home, ws):
        (folder / ".claude").mkdir(parents=True)
        (folder / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [hook]}}))
    config = load_config({"hooks": {"Stop": [hook]}})
    assert {h.scope for h in discover_hooks(ws, home, config).hooks} == {
        "settings",
        "user",
        "workspace",
    }
    # The workspace's own switch: only its hooks (never the person's guards).
    (ws / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    found = discover_hooks(ws, home, config)
    assert {h.scope for h in found.hooks} == {"settings", "user"}
    assert found.disabled_by == [".claude/settings.local.json"]
    # The person's: theirs and the workspace's; rein.hooks is Rein's own and stays.
    (home / ".claude" / "settings.json").write_text('{"disableAllHooks": true}')
    assert {h.scope for h in discover_hooks(ws, home, config).hooks} == {"settings"}


def test_a_hook_type_rein_does_not_run_is_named_and_its_siblings_still_run(
    tmp_path: Path,
) -> None:
    (tmp_path / ".claude").mkdir()
    hooks = [{"type": "prompt", "prompt": "judge"}, {"type": "command", "command": "true"}]
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": hooks}]}})
    )
    found = discover_hooks(tmp_path, None, ReinConfig())
    assert [h.command for h in found.hooks] == ["true"]
    [bad] = found.invalid
    assert bad.where == "hooks.Stop[0].hooks[0].type" and '"prompt" hooks' in bad.reason
