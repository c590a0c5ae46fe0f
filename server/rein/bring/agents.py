"""Custom agents: markdown files with frontmatter that define a subagent.

Found in ``.claude/agents/*.md`` (Claude Code: ``name`` and
``description`` required, ``tools`` a comma-separated list, ``model``),
``.github/agents/*.agent.md`` (Copilot: ``name`` defaults to the file's
name, ``description``, ``tools`` a list, ``model``) and the user's
``~/.claude/agents/``. The body is the agent's instructions.

Their tool names are mapped to Rein's (:data:`CLAUDE_TOOLS`,
:data:`COPILOT_TOOLS`; Rein's own names are taken as they are); a name
with no Rein tool is kept in :attr:`AgentDefinition.unmapped` and said
where the agent is listed and started. No ``tools`` field means every
tool the session offers, as both formats define it. An MCP tool is named
as Rein names it too (``mcp__github__create_issue``; ``mcp__github`` or
``mcp__github__*`` for all of a server's). Claude Code's
``disallowedTools`` is taken away from those (from ``tools``, or from every
tool the session offers): :attr:`AgentDefinition.disallowed`, Rein's names,
an MCP tool's as it is (``mcp__github__create_issue``) and a server's
tools as ``mcp__github__*`` (from ``mcp__github`` or ``mcp__github__*``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rein.bring.frontmatter import Document
from rein.bring.setup_folders import Place, walk_setup_folders
from rein.bring.sources import Invalid, Scope, optional_text, tool_names
from rein.tools.settings import DEFAULT_DENY_GLOBS, DISABLEABLE_TOOL_NAMES

__all__ = [
    "CLAUDE_TOOLS",
    "COPILOT_TOOLS",
    "AgentDefinition",
    "FoundAgents",
    "discover_agents",
    "map_tools",
]

#: Claude Code's tool names -> Rein's tools.
CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("read_file",),
    "Edit": ("edit_file",),
    "MultiEdit": ("edit_file",),
    "Write": ("write_file",),
    "Bash": ("run_command",),
    "Grep": ("grep",),
    "Glob": ("glob",),
    "LS": ("list_dir",),
    "Task": ("task",),
    "Agent": ("task",),
    "Skill": ("skill",),
}
#: Rein's tools that change files (all taken away with any one of them).
_FILE_CHANGING = ("write_file", "edit_file", "delete_file", "move_file")
#: Copilot's tool (set) names -> Rein's tools.
COPILOT_TOOLS: dict[str, tuple[str, ...]] = {
    "read": ("read_file",),
    "readFile": ("read_file",),
    "edit": ("edit_file", "write_file", "delete_file", "move_file"),
    "editFiles": ("edit_file", "write_file"),
    "search": ("grep", "glob", "list_dir"),
    "codebase": ("grep", "glob", "list_dir"),
    "runCommands": ("run_command",),
    "runInTerminal": ("run_command",),
    "execute": ("run_command",),
    "problems": ("get_diagnostics",),
    "agent": ("task",),
}
#: Rein's own tool names, taken as they are in either format: the standard
#: tools, ``task`` and ``skill``.
REIN_TOOLS = frozenset({*DISABLEABLE_TOOL_NAMES, "skill"})
_CLAUDE_NAME = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
_RULE = re.compile(r"(?P<tool>[A-Za-z_][\w-]*)\(.*\)")


@dataclass(frozen=True)
class AgentDefinition:
    """One custom agent."""

    name: str
    description: str
    instructions: str
    source: str
    scope: Scope
    #: Rein's tools it may use (None: every tool the session offers).
    tools: tuple[str, ...] | None = None
    #: The tool names it lists that no Rein tool matches.
    unmapped: tuple[str, ...] = ()
    model: str | None = None
    #: Tools it may never use (``disallowedTools``): Rein's names, MCP
    #: tools' names, and ``mcp__<server>__*`` for all of a server's.
    disallowed: tuple[str, ...] = ()


@dataclass(frozen=True)
class FoundAgents:
    agents: tuple[AgentDefinition, ...] = ()
    invalid: tuple[Invalid, ...] = ()


def map_tools(
    names: tuple[str, ...], table: dict[str, tuple[str, ...]]
) -> tuple[list[str], list[str]]:
    """``names`` as Rein's tools (in order, once each), and those with no
    Rein tool. ``Bash(git diff:*)`` is ``Bash``: Rein's approvals, not the
    rule, decide which commands run."""
    mapped: list[str] = []
    unmapped: list[str] = []
    for name in names:
        rule = _RULE.fullmatch(name)
        bare = rule.group("tool") if rule else name
        if bare not in table and "/" in bare:  # Copilot's "edit/editFiles"
            bare = bare.split("/", 1)[0]
        tools = (bare,) if bare in REIN_TOOLS else table.get(bare)
        if tools is None:
            unmapped.append(name)
            continue
        mapped.extend(t for t in tools if t not in mapped)
    return mapped, unmapped


def discover_agents(
    root: Path, home: Path | None = None, deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS
) -> FoundAgents:
    """Every custom agent of the workspace ``root`` and of the user's
    ``home`` (None: none); a name found twice keeps the first."""
    places = [
        Place(root / ".claude" / "agents", "project", "*.md", "claude"),
        Place(root / ".github" / "agents", "project", "*.agent.md", "copilot"),
    ]
    if home is not None:
        places.append(Place(home / ".claude" / "agents", "user", "*.md", "claude"))
    agents, invalid = walk_setup_folders(
        "agent",
        places,
        root,
        home,
        deny_globs,
        _agent,
        lambda agent, first: f"an agent named {agent.name} is already {first.source}",
    )
    return FoundAgents(agents, invalid)


def _agent(document: Document, path: Path, place: Place, shown: str) -> AgentDefinition:
    meta = document.meta
    if place.format == "claude":
        name = optional_text(meta, "name")
        if not name:
            raise ValueError("name: required")
        description = optional_text(meta, "description")
        table = CLAUDE_TOOLS
    else:
        name = optional_text(meta, "name") or path.name.removesuffix(".agent.md")
        description = optional_text(meta, "description")
        table = COPILOT_TOOLS
    if not _CLAUDE_NAME.fullmatch(name):
        raise ValueError(f"name: {name!r} is not lowercase letters, digits and hyphens")
    if not description or not description.strip():
        raise ValueError("description: required")
    listed = tool_names(meta, "tools")
    tools: tuple[str, ...] | None = None
    unmapped: tuple[str, ...] = ()
    if listed is not None:
        mapped, missing = map_tools(listed, table)
        # An MCP tool is Rein's under the same name (mcp__<server>__<tool>).
        mcp = _mcp_names(missing)
        mapped += [m for m in mcp if m not in mapped]
        missing = [n for n in missing if not n.startswith("mcp__")]
        if listed and not mapped:
            # No tool at all: never a task subagent, so never "used".
            raise ValueError(f"tools: none of {', '.join(missing)} is a Rein tool")
        tools, unmapped = tuple(mapped), tuple(missing)
    disallowed = _disallowed(tool_names(meta, "disallowedTools") or (), table)
    if tools is not None and disallowed:
        tools = tuple(t for t in tools if t not in disallowed)
        if listed and not tools:
            raise ValueError("disallowedTools: takes away every tool its tools field gives")
    model = optional_text(meta, "model")
    return AgentDefinition(
        name=name,
        description=" ".join(description.split()),
        instructions=document.body.strip(),
        source=shown,
        scope=place.scope,
        tools=tools,
        unmapped=unmapped,
        model=None if model in (None, "inherit") else model,
        disallowed=disallowed,
    )


def _disallowed(names: tuple[str, ...], table: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """``disallowedTools`` as Rein's names: the mapped tools, an MCP tool's
    name as it is, a server (``mcp__github`` or ``mcp__github__*``) as
    ``mcp__github__*``. A name with no Rein tool takes nothing away, but
    any file-changing one (Write, Edit, MultiEdit, NotebookEdit) takes
    every file-changing tool: Rein's delete_file and move_file have no
    Claude Code name, and "not Write, Edit" means a reader."""
    mapped, rest = map_tools(names, table)
    if set(mapped) & set(_FILE_CHANGING) or "NotebookEdit" in names:
        mapped = [*mapped, *_FILE_CHANGING]
    return tuple(dict.fromkeys([*mapped, *_mcp_names(rest)]))


def _mcp_names(names: Sequence[str]) -> list[str]:
    """The MCP tools among ``names``: a tool's name as it is, a server's
    (``mcp__github`` or ``mcp__github__*``) as ``mcp__github__*``."""
    found = []
    for name in names:
        if name.startswith("mcp__"):
            server, _, tool = name.removeprefix("mcp__").partition("__")
            found.append(f"mcp__{server}__*" if tool in ("", "*") else name)
    return found
