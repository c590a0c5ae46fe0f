"""A repository set up for Claude Code's hooks, with real hook scripts in
bash and Python, and the scripted model turns that meet each of them.

* ``no_rm.sh`` (bash, PreToolUse on Bash): ``rm -rf`` exits 2, the reason on stderr;
* ``prompt_context.py`` (UserPromptSubmit): its stdout is context;
* ``stop_once.py`` (Stop): keeps the run going once (``decision: block``);
* ``only_src.py`` (PreToolUse on Edit|Write): JSON ``permissionDecision: deny``
  for a file outside ``src/``;
* ``session_end.py`` (SessionEnd): appends its event, its reason and the
  person's prompts it read from ``transcript_path`` to a file next to the
  workspace (:func:`ended`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RM_REASON = "rm -rf is not allowed in this repository"
CONTEXT = "HOOK-CONTEXT: the release branch is frozen"
STOP_REASON = "STOP-HOOK: say which files you changed"
DENY_REASON = "edits outside src/ are denied by the team's hook"

NO_RM = f"""#!/usr/bin/env bash
input=$(cat)
if printf '%s' "$input" | grep -q 'rm -rf'; then
  echo "{RM_REASON}" >&2
  exit 2
fi
exit 0
"""

PROMPT_CONTEXT = f"""import json, sys
data = json.load(sys.stdin)
assert data["hook_event_name"] == "UserPromptSubmit", data
print("{CONTEXT} (prompt: " + data["prompt"] + ")")
"""

STOP_ONCE = f"""import json, sys
data = json.load(sys.stdin)
if not data["stop_hook_active"]:
    print(json.dumps({{"decision": "block", "reason": "{STOP_REASON}"}}))
"""

ONLY_SRC = f"""import json, os, sys
data = json.load(sys.stdin)
path = data["tool_input"]["file_path"]
src = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "src") + os.sep
if os.path.isabs(path) and not path.startswith(src):
    print(json.dumps({{"hookSpecificOutput": {{
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "{DENY_REASON}",
    }}}}))
"""


SESSION_END = """import json, sys
data = json.load(sys.stdin)
with open(data["transcript_path"]) as f:
    lines = [json.loads(line) for line in f]
prompts = [
    line["message"]["content"] for line in lines if line.get("origin") == "prompt"
]
seen = {"event": data["hook_event_name"], "reason": data["reason"], "prompts": prompts}
with open(sys.argv[1], "a") as out:
    out.write(json.dumps(seen) + "\\n")
"""


def ended_marker(root: Path) -> Path:
    """Where ``session_end.py`` of the workspace ``root`` writes (outside it)."""
    return root.parent / f"{root.name}-session-end.json"


def ended(root: Path) -> list[dict[str, Any]]:
    """What the SessionEnd hook of the workspace ``root`` saw, each time it ran."""
    return [json.loads(line) for line in ended_marker(root).read_text().splitlines()]


def settings(python: str, root: Path) -> dict[str, Any]:
    hooks = "$CLAUDE_PROJECT_DIR/.claude/hooks"
    return {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": f"bash {hooks}/no_rm.sh"}],
                },
                {
                    "matcher": "Edit|Write",
                    "hooks": [{"type": "command", "command": f"{python} {hooks}/only_src.py"}],
                },
            ],
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": f"{python} {hooks}/prompt_context.py"}]}
            ],
            "SessionEnd": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"{python} {hooks}/session_end.py {ended_marker(root)}",
                        }
                    ]
                }
            ],
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"{python} {hooks}/stop_once.py",
                            "timeout": 30,
                        }
                    ]
                }
            ],
        }
    }


def hook_repo(root: Path, python: str) -> Path:
    """``root`` made a repository with ``.claude/settings.json`` and its hooks."""
    hooks = root / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    for name, text in (
        ("no_rm.sh", NO_RM),
        ("prompt_context.py", PROMPT_CONTEXT),
        ("stop_once.py", STOP_ONCE),
        ("only_src.py", ONLY_SRC),
        ("session_end.py", SESSION_END),
    ):
        (hooks / name).write_text(text)
    (root / ".claude" / "settings.json").write_text(json.dumps(settings(python, root), indent=1))
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "build").mkdir()
    (root / "build" / "keep.txt").write_text("still here\n")
    return root


#: The scripted model: each turn checks what the hooks did before it.
TURNS: list[dict[str, Any]] = [
    {
        "expect": {"messages_contain": [CONTEXT]},
        "tool_calls": [{"name": "run_command", "arguments": {"command": "rm -rf build"}}],
    },
    {
        "expect": {"last_message_contains": RM_REASON},
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "README.md", "content": "hi\n"}}
        ],
    },
    {"expect": {"last_message_contains": DENY_REASON}, "text": "I could not do it."},
    {"expect": {"last_message_contains": STOP_REASON}, "text": "I changed no file."},
]
