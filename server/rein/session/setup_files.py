"""The person's setup files (:mod:`rein.bring`) as a session uses them:
which are read under the configuration (``rein.setup``), and the prompt a
slash command makes, the same for every host."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rein.bring.agents import FoundAgents, discover_agents
from rein.bring.commands import Command, Found, discover_commands, literal, resolve
from rein.bring.hook_config import TrustStore
from rein.bring.inventory import (
    Inventory,
    SetupItem,
    agent_items,
    command_items,
    hook_items,
    skill_items,
)
from rein.bring.skills import FoundSkills, SkillTool, discover_skills, skill_command
from rein.bring.sources import Invalid
from rein.config import ReinConfig
from rein.flows.subagent_kinds import SubagentKind, kind_tools
from rein.harness.ports import Model
from rein.providers.config import ModelConfig
from rein.tools.bootstrap import USER_PREFIX, find_instructions, user_instructions

__all__ = [
    "Prompted",
    "agent_kinds",
    "agent_model",
    "agents_of",
    "commands_of",
    "mapped_model",
    "prompted",
    "setup_inventory",
    "setup_problems",
    "skill_tool",
    "skills_of",
    "user_home",
]


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:
        return None


def user_home(config: ReinConfig) -> Path | None:
    """The home folder whose ``~/.claude`` is read (None: the user's
    folders are off, ``setup.userFolders``, or there is no home)."""
    return _home() if config.setup.user_folders else None


def commands_of(config: ReinConfig, root: Path) -> Found:
    """The slash commands of the workspace ``root`` and of the user."""
    if not config.setup.commands:
        return Found()
    found = discover_commands(root, user_home(config), config.tool_settings().deny_globs)
    # A skill is the command /name too, and wins over a command file of that
    # name, as in Claude Code; but the person's own command keeps its name
    # over a workspace's skill (personal over project).
    skills = [skill_command(s) for s in skills_of(config, root).skills if s.user_invocable]
    if not skills:
        return found
    mine = {c.name: c for c in found.commands if c.scope == "user"}
    lost = [s for s in skills if s.scope == "project" and s.name in mine]
    skills = [s for s in skills if s not in lost]
    taken = {c.name: c for c in skills}
    shadowed = tuple(
        Invalid("command", c.source, f"/{c.name} is already the skill {taken[c.name].source}")
        for c in found.commands
        if c.name in taken
    ) + tuple(
        Invalid("command", s.source, f"/{s.name} is already your command {mine[s.name].source}")
        for s in lost
    )
    kept = tuple(c for c in found.commands if c.name not in taken)
    return Found(kept + tuple(skills), found.invalid + shadowed)


@dataclass(frozen=True)
class Prompted:
    """What a prompt's text runs: the text the agent gets, and the command
    that made it (None: the text as the person wrote it)."""

    text: str
    command: Command | None = None

    def configured(self, config: ReinConfig) -> tuple[ReinConfig, str | None]:
        """``config`` with the command's model when it names one that maps
        to the configured provider's (:func:`mapped_model`), and what to
        say about it (None: it names none)."""
        command = self.command
        if command is None or command.model is None:
            return config, None
        mapped = mapped_model(config, command.model)
        if mapped is None:
            return config, (
                f"/{command.name} names the model {command.model!r}, which is not mapped to "
                "the configured provider's models (setup.agentModels): the session's model "
                "runs it"
            )
        model = config.model.model_copy(update={"model": mapped})
        return config.model_copy(update={"model": model}), f"/{command.name} runs on {mapped}"

    def mode(self, asked: str | None) -> str:
        """The mode of a new session: the one the request asked for (any,
        agent too), else the command's, else agent."""
        if asked is not None:
            return asked
        if self.command is not None and self.command.mode is not None:
            return self.command.mode
        return "agent"


def prompted(config: ReinConfig, root: Path, text: str) -> Prompted:
    """The prompt ``text`` makes: a slash command's expanded prompt, or the
    text itself (``//text`` is ``/text``). An unknown ``/name`` raises
    :class:`~rein.bring.commands.CommandError`, listing the known ones."""
    if not text.startswith("/"):
        return Prompted(text)
    invocation = resolve(text, commands_of(config, root), root, config.tool_settings().secret_files)
    if invocation is None:
        return Prompted(literal(text))
    return Prompted(invocation.prompt, invocation.command)


def skills_of(config: ReinConfig, root: Path) -> FoundSkills:
    """The skills of the workspace, the user and ``setup.skillPaths``."""
    if not config.setup.skills:
        return FoundSkills()
    home = user_home(config)
    extra = [_configured(p, root) for p in config.setup.skill_paths]
    found = discover_skills(root, home, extra, config.tool_settings().deny_globs)
    # A folder the setting names that is not there: said, not skipped silently.
    missing = tuple(
        Invalid("skill", named, "setup.skillPaths names it, but it is not a folder")
        for named, folder in zip(config.setup.skill_paths, extra, strict=True)
        if not folder.is_dir()
    )
    return replace(found, invalid=found.invalid + missing) if missing else found


def _configured(path: str, root: Path) -> Path:
    expanded = Path(path).expanduser()
    return expanded if expanded.is_absolute() else root / expanded


def agents_of(config: ReinConfig, root: Path) -> FoundAgents:
    """The custom agents of the workspace and the user."""
    if not config.setup.agents:
        return FoundAgents()
    return discover_agents(root, user_home(config), config.tool_settings().deny_globs)


def skill_tool(config: ReinConfig, root: Path) -> SkillTool | None:
    """The ``skill`` tool offering the skills found (None: there are none)."""
    found = skills_of(config, root).skills
    return SkillTool(found, config.tool_settings().deny_globs) if found else None


def agent_kinds(
    config: ReinConfig,
    root: Path,
    offered: Sequence[str],
    model_factory: Callable[[ModelConfig], Model] | None,
) -> list[SubagentKind]:
    """The custom agents as the ``task`` tool's subagent types: their tools
    among ``offered`` (the session's), their model mapped to the configured
    provider's (:func:`agent_model`), and what could not be honoured in the
    note their ``task`` result carries."""
    kinds = []
    for agent in agents_of(config, root).agents:
        shape = SubagentKind(agent.name, "", agent.tools, "", disallowed=agent.disallowed)
        # MCP tools join the session once their servers start: not known yet.
        mcp = [t for t in agent.tools or () if t.startswith("mcp__")]
        if not mcp and not any(t != "task" for t in kind_tools(shape, offered)):
            continue  # none of its tools is offered here: not a subagent it could be
        model, said = agent_model(config, agent.model, model_factory)
        notes = [said] if said else []
        if agent.unmapped:
            notes.append(f"its tools {', '.join(agent.unmapped)} have no Rein tool")
        missing = [
            t for t in agent.tools or () if t not in offered and t != "task" and t not in mcp
        ]
        if missing:
            notes.append(f"this session does not offer {', '.join(missing)}")
        kinds.append(
            SubagentKind(
                name=agent.name,
                description=agent.description,
                tools=agent.tools,
                instructions=agent.instructions,
                model=model,
                note=f"agent {agent.name}: " + "; ".join(notes) if notes else "",
                disallowed=agent.disallowed,
            )
        )
    return kinds


def mapped_model(config: ReinConfig, name: str) -> str | None:
    """The configured provider's model a setup file's ``model`` names:
    ``setup.agentModels[name]``, else (anthropic) a ``claude-...`` id as it
    is; None when it cannot be mapped (the replay provider plays one script)."""
    if config.model.provider == "replay":
        return None
    mapped = config.setup.agent_models.get(name)
    if mapped is None and config.model.provider == "anthropic" and name.startswith("claude-"):
        mapped = name
    return mapped


def agent_model(
    config: ReinConfig, name: str | None, model_factory: Callable[[ModelConfig], Model] | None
) -> tuple[Model | None, str]:
    """The model an agent's ``model`` names on the configured provider, and
    what to say about it: ``setup.agentModels`` maps a name (``sonnet``)
    to a model of the provider; a ``claude-...`` id is taken as it is by the
    anthropic provider. Anything else runs on the session's model (None),
    and the note says so."""
    if name is None:
        return None, ""
    mapped = mapped_model(config, name)
    if mapped is None or model_factory is None:
        return None, (
            f"its model {name!r} is not mapped to the configured provider's models "
            "(setup.agentModels), so it ran on the session's model"
        )
    return model_factory(config.model.model_copy(update={"model": mapped})), ""


def setup_inventory(
    config: ReinConfig, root: Path, hooks_trust: TrustStore | None = None
) -> Inventory:
    """Everything of the person's setup a session in ``root`` reads, but
    the MCP servers (whose trust the host knows): hooks (a workspace's
    "not trusted" unless ``hooks_trust`` remembers them allowed), skills,
    agents, commands and instruction files."""
    settings = config.tool_settings()
    inventory = Inventory()
    # Hooks read the home folder whatever setup.userFolders says (the
    # hooks adapter does: its port's home).
    inventory.add(hook_items(root, _home(), config, hooks_trust), "hook")
    inventory.add(skill_items(skills_of(config, root), config.setup.skills))
    inventory.add(agent_items(agents_of(config, root), config.setup.agents))
    inventory.add(command_items(commands_of(config, root), config.setup.commands))
    own = user_instructions(user_home(config), settings.deny_globs, settings.secret_files)
    found = find_instructions(
        root, settings.instruction_files, settings.deny_globs, settings.secret_files
    )
    for file in own.files + found.files:
        applies = f"applies to {file.scope}" if file.scope else "applies to the whole workspace"
        if file.path.startswith(USER_PREFIX):
            applies = "yours: applies to every workspace"
        if file.imported_by:
            applies = f"imported by {file.imported_by}"
        inventory.add([SetupItem("instructions", file.path, file.path, "used", applies)])
    for note in own.notes + found.notes:
        inventory.add([SetupItem("instructions", "-", "instructions.files", "invalid", note)])
    return inventory


def setup_problems(config: ReinConfig, root: Path) -> list[str]:
    """One line per skill, agent or command file that is not used, and why
    (``rein run`` says them at its start; ``rein doctor`` lists them all)."""
    found: list[Invalid] = []
    if config.setup.skills:
        found.extend(skills_of(config, root).invalid)
    if config.setup.agents:
        found.extend(agents_of(config, root).invalid)
    if config.setup.commands:
        found.extend(commands_of(config, root).invalid)
    return [item.line() for item in found]
