"""One view of the person's setup: every hook, skill, custom agent, slash
command, instruction file and MCP server Rein found, where it came from,
whether it is used (trusted and allowed), and why not.

The items are made where each kind is read (:func:`skill_items`,
:func:`agent_items`, :func:`command_items` here; the instruction files and
the MCP servers by the session and the headless host, which read them);
``rein doctor`` prints them (:meth:`Inventory.lines`) or gives them as
JSON (:meth:`Inventory.json`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from rein.bring.agents import FoundAgents
from rein.bring.commands import Found
from rein.bring.hook_config import TrustStore, discover_hooks
from rein.bring.skills import FoundSkills
from rein.bring.sources import Invalid
from rein.config import ReinConfig

__all__ = [
    "KINDS",
    "Inventory",
    "SetupItem",
    "Status",
    "agent_items",
    "command_items",
    "hook_items",
    "invalid_items",
    "skill_items",
]

#: The kinds in the order they are listed.
KINDS = ("hook", "skill", "agent", "command", "instructions", "mcp")

Status = Literal["used", "invalid", "not trusted", "off"]


@dataclass(frozen=True)
class SetupItem:
    kind: str
    name: str
    #: Where it was found (workspace-relative, ``~/...``, or the setting).
    source: str
    status: Status = "used"
    #: What it is (a description), or why it is not used.
    detail: str = ""


@dataclass
class Inventory:
    items: list[SetupItem] = field(default_factory=list)
    #: Kinds this build does not list (the view says so, not "none found").
    unlisted: set[str] = field(default_factory=set)

    def add(self, items: Iterable[SetupItem] | None, kind: str = "") -> None:
        """``items`` of the view; None: ``kind`` is not listed by this build."""
        if items is None:
            self.unlisted.add(kind)
            return
        self.items.extend(items)

    def invalid(self) -> list[SetupItem]:
        return [i for i in self.items if i.status == "invalid"]

    def json(self) -> list[dict[str, Any]]:
        return [asdict(i) for i in self._ordered()]

    def _ordered(self) -> list[SetupItem]:
        rank = {kind: index for index, kind in enumerate(KINDS)}
        return sorted(self.items, key=lambda i: rank.get(i.kind, len(KINDS)))

    def lines(self) -> list[str]:
        """The view as text, one kind after another (a kind with nothing
        found says so)."""
        out: list[str] = []
        for kind in KINDS:
            items = [i for i in self.items if i.kind == kind]
            empty = " not listed by this build" if kind in self.unlisted else " none found"
            out.append(f"{_TITLES[kind]}:" + ("" if items else empty))
            for item in items:
                out.append(f"  {item.name} ({item.source}): {item.status}")
                if item.detail:
                    out.append(f"      {item.detail}")
        return out


_TITLES = {
    "hook": "hooks",
    "skill": "skills",
    "agent": "custom agents",
    "command": "commands",
    "instructions": "instruction files",
    "mcp": "MCP servers",
}


def invalid_items(invalid: Iterable[Invalid]) -> list[SetupItem]:
    return [SetupItem(i.kind, _name(i.path), i.path, "invalid", i.reason) for i in invalid]


def _name(path: str) -> str:
    """What an invalid file is called: a skill by its folder, a file by its
    name without the format's suffix."""
    file = Path(path)
    if file.name == "SKILL.md":
        return file.parent.name
    for suffix in (".agent.md", ".prompt.md", ".md"):
        if file.name.endswith(suffix):
            return file.name.removesuffix(suffix)
    return file.name


def skill_items(found: FoundSkills, enabled: bool = True) -> list[SetupItem]:
    items = [
        SetupItem(
            "skill",
            s.name,
            s.source,
            "used",
            s.description if s.model_invocable else f"{s.description} (only with /{s.name})",
        )
        for s in found.skills
    ]
    if not enabled:
        return [SetupItem("skill", "-", "setup.skills", "off", "skills are off")]
    return items + invalid_items(found.invalid)


def agent_items(found: FoundAgents, enabled: bool = True) -> list[SetupItem]:
    if not enabled:
        return [SetupItem("agent", "-", "setup.agents", "off", "custom agents are off")]
    items = []
    for agent in found.agents:
        tools = "all the session's tools" if agent.tools is None else ", ".join(agent.tools)
        detail = f"{agent.description} (tools: {tools or 'none'}"
        if agent.disallowed and agent.tools is None:
            detail += f" but {', '.join(agent.disallowed)}"
        if agent.unmapped:
            detail += f"; no Rein tool for {', '.join(agent.unmapped)}"
        if agent.model:
            detail += f"; model {agent.model}"
        items.append(SetupItem("agent", agent.name, agent.source, "used", detail + ")"))
    return items + invalid_items(found.invalid)


def command_items(found: Found, enabled: bool = True) -> list[SetupItem]:
    if not enabled:
        return [SetupItem("command", "-", "setup.commands", "off", "commands are off")]
    items = [
        SetupItem("command", f"/{c.name}", c.source, "used", c.description) for c in found.commands
    ]
    return items + invalid_items(found.invalid)


def hook_items(
    root: Path, home: Path | None, config: ReinConfig, trust: TrustStore | None = None
) -> list[SetupItem]:
    """The hooks found (:func:`rein.bring.hook_config.discover_hooks`): one
    item per hook command, "used" for the person's own, "not trusted" for a
    workspace's the person has not allowed (or when no ``trust`` store says),
    and every entry that cannot be read "invalid" with the field and why; a
    ``disableAllHooks`` switch is listed "off"."""
    found = discover_hooks(root, home, config, trust)
    items: list[SetupItem] = []
    for hook in found.hooks:
        name = f"{hook.event}" + (f" [{hook.matcher}]" if hook.matcher else "")
        status: Status = "used"
        if not hook.trusted_by_default and not found.workspace_allowed:
            status = "not trusted"
        items.append(SetupItem("hook", name, hook.source, status, hook.command))
    for bad in found.invalid:
        items.append(SetupItem("hook", bad.where, bad.source, "invalid", bad.reason))
    for source in found.disabled_by:
        items.append(SetupItem("hook", "disableAllHooks", source, "off", "hooks switched off"))
    return items
