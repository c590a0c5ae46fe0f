"""A repository set up for Claude Code and Copilot, in real files: a skill
with a script and a reference, a read-only custom agent, commands with
arguments (one namespaced, one a Copilot prompt file), and one broken file
of each kind. The e2e tests of rein run, rein serve and rein acp use it."""

from __future__ import annotations

from pathlib import Path

SKILL = """\
---
name: greeting
description: Greets people the house way. Use when asked to greet someone.
license: MIT
metadata:
  owner: docs-team
allowed-tools: Bash(bash:*) Read
---
# Greeting

Run `scripts/hello.sh NAME` and follow references/style.md.
"""
SCRIPT = 'echo "hello from the skill, $1"\n'
STYLE = "Greet warmly, in one line.\n"

READER = """\
---
name: reader
description: Reads code and reports; never changes anything.
tools: Read, Grep, Glob
model: sonnet
---
You are a careful reader. Report what you find, with file names.
"""

REVIEW = """\
---
description: Review one file for one concern
argument-hint: FILE CONCERN
allowed-tools: Read, Grep
model: haiku
---
Review $1 for $2 only. The whole request: $ARGUMENTS
"""

COPILOT_PROMPT = """\
---
description: Explain a module
agent: ask
---
Explain ${input:module:the module} briefly.
"""

APP = "def greet(name: str) -> str:\n    return 'hi ' + name\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def setup_repo(root: Path) -> Path:
    """``root`` made the repository described above; returns it."""
    write(
        root,
        {
            "app.py": APP,
            ".claude/skills/greeting/SKILL.md": SKILL,
            ".claude/skills/greeting/scripts/hello.sh": SCRIPT,
            ".claude/skills/greeting/references/style.md": STYLE,
            # Its name is not its folder's.
            ".claude/skills/broken/SKILL.md": "---\nname: other\ndescription: x\n---\nbody\n",
            ".claude/agents/reader.md": READER,
            ".claude/agents/nameless.md": "---\ndescription: no name\n---\nbody\n",
            ".claude/commands/review/file.md": REVIEW,
            ".claude/commands/bad.md": "---\ndescription: [unclosed\n---\nbody\n",
            ".github/prompts/explain.prompt.md": COPILOT_PROMPT,
        },
    )
    return root
