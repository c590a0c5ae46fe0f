"""The system prompt, assembled in one place.

:func:`build_system_prompt` is pure: the caller passes which tools exist,
their prompt sections (``rein.tools.tool_sections()``), the mode and the
project instructions. The core rules and the mode texts name no tool, so the
prompt mentions only tools that are registered (a test guards it).

Layout::

    identity
    # Rules          (core rules)
    # Tools          (one section per registered tool, in registry order)
    # Mode: <mode>   (what this run may do)
    # Project instructions   (AGENTS.md or the like, when given)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

__all__ = ["CORE_RULES", "MODE_SECTIONS", "PromptMode", "build_system_prompt"]

PromptMode = Literal["agent", "plan", "explain"]

IDENTITY = (
    "You are Rein, a coding agent working in the person's workspace through their "
    "editor. You read and change files, run commands and check the analyzers' "
    "diagnostics with the tools below, and answer in plain, concise text."
)

CORE_RULES = """\
- Paths are relative to the workspace root. Files outside the workspace cannot be read or \
changed, and some protected files (secrets, keys, version-control internals) are never \
written.
- Look before you change: read the relevant code first, and keep to the project's \
conventions, style and libraries.
- Make the smallest change that does the task well. Do not reformat, rename or refactor \
what the task does not need.
- A tool result that is an error tells you what went wrong: read it and adjust. Do not \
repeat a call that was denied; find another way or explain what you need.
- After changing code, check your work (diagnostics, tests) when you can. When you say you \
are done, the harness checks the analyzers and may send you back to fix what your changes \
broke.
- Open editor buffers are the truth: a file may contain unsaved changes the person made. \
If a file changed since you read it, read it again before editing it.
- When you finish, say briefly what you changed and anything the person should know. Do \
not paste whole files back."""

MODE_SECTIONS: Mapping[PromptMode, str] = {
    "agent": (
        "Carry out the task: change the files, run what checks you can, and finish with a "
        "short summary of what you did."
    ),
    "plan": (
        "Plan only: do not change any file and do not run commands that change anything. "
        "Study the code, then answer with a numbered plan: the files to change, what to "
        "change in each and why, and how to check the result."
    ),
    "explain": (
        "Explain only: do not change any file. Read what you need and answer the question "
        "clearly, pointing to the relevant files and lines."
    ),
}

_MAX_INSTRUCTIONS_CHARS = 20_000


def build_system_prompt(
    tool_names: Sequence[str],
    tool_sections: Mapping[str, str],
    mode: PromptMode = "agent",
    project_instructions: str | None = None,
) -> str:
    """The system prompt for a run.

    Only the sections of tools in ``tool_names`` are included (in that
    order); a tool without a section is listed by name. ``project_instructions``
    (already bounded by the caller; cut here at 20 000 characters anyway) come
    last, framed as the repository's own guidance.
    """
    if mode not in get_args(PromptMode):
        raise ValueError(f"unknown prompt mode {mode!r}; expected agent, plan or explain")
    parts = [IDENTITY, "# Rules\n" + CORE_RULES]
    if tool_names:
        lines = []
        for name in tool_names:
            section = tool_sections.get(name, "").strip()
            lines.append(f"- {section}" if section else f"- `{name}`")
        parts.append("# Tools\n" + "\n".join(lines))
    else:
        parts.append("# Tools\nNo tools are available in this session: answer from what you know.")
    parts.append(f"# Mode: {mode}\n{MODE_SECTIONS[mode]}")
    if project_instructions and project_instructions.strip():
        text = project_instructions.strip()
        if len(text) > _MAX_INSTRUCTIONS_CHARS:
            text = text[:_MAX_INSTRUCTIONS_CHARS] + "\n[... project instructions cut ...]"
        parts.append(
            "# Project instructions\nThe repository's own guidance for agents. Follow it "
            "where it does not conflict with the rules above.\n\n" + text
        )
    return "\n\n".join(parts)
