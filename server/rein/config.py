"""The whole ``rein`` configuration section, typed.

camelCase on the wire (LSP ``workspace/configuration``, initializationOptions,
a JSON/YAML file), snake_case in Python. Two ways in:

- :func:`load_config` is strict: ConfigError names every bad key, and the
  value each allows (``rein run``: a bad file or flag stops it before any
  request).
- :func:`resolve_config` fails safe, key by key (the language server): an
  invalid value falls back to the last good value of that key, or its
  default, and is reported as a :class:`ConfigIssue`; every other setting
  stays as configured. The model's endpoint settings
  (:data:`ENDPOINT_KEYS`) never fall back: one that is invalid makes the
  model configuration unusable (runs fail with the reason), so the
  workspace is never sent to an endpoint the person did not configure.

The ``approval`` and ``tools`` sections are the tools' own models
(:mod:`rein.tools.settings`, where their defaults live);
:meth:`ReinConfig.tool_settings` turns the validated configuration into the
frozen :class:`~rein.tools.settings.ToolSettings` a session hands its tools.
"""

from __future__ import annotations

import copy
import types
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from rein.harness.config import GatesConfig, HarnessConfig
from rein.harness.errors import ConfigError
from rein.providers.config import ModelConfig
from rein.sandboxing.settings import SandboxSettings
from rein.tools.settings import ApprovalSettings, InstructionSettings, ToolOptions, ToolSettings

__all__ = [
    "ENDPOINT_KEYS",
    "HOOK_EVENTS",
    "CheckpointLimits",
    "ConfigIssue",
    "HookCommand",
    "HookEventName",
    "HookMatcher",
    "HookOptions",
    "McpSettings",
    "ReinConfig",
    "ResolvedConfig",
    "SessionLimits",
    "SetupSettings",
    "load_config",
    "resolve_config",
]

#: Settings that decide where model requests go and which key they carry:
#: an invalid one never falls back (the default endpoint is another host).
ENDPOINT_KEYS: frozenset[str] = frozenset(
    {"model", "model.provider", "model.baseUrl", "model.apiKeyEnv"}
)
#: Values quoted in messages are cut to this many characters.
_SHOWN_CHARS = 80


class SessionLimits(BaseModel):
    """How many sessions the language server keeps in memory, and for how
    long an idle one stays there. An evicted session stays in the store and
    is loaded again, transcript and all, by the next request that names it."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: A session that ran and has been idle this long leaves memory (0: never).
    idle_evict_ms: int = Field(600_000, ge=0)
    #: At most this many idle sessions in memory; the least recently used go first.
    max_in_memory: int = Field(32, ge=1)


class CheckpointLimits(BaseModel):
    """Checkpoints: the content of what each run changed, kept in the
    storage folder (``checkpoints.db``) so a run can be undone, bounded per
    workspace (the oldest runs' content is dropped first, after each run)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: Record checkpoints at all.
    enabled: bool = True
    #: The stored (compressed) checkpoint content of one workspace, at most.
    max_mb: int = Field(200, ge=1)
    #: A run's content is dropped this many days after it started (0: never).
    max_age_days: int = Field(30, ge=0)
    #: A file larger than this is recorded without its content (unstored).
    max_file_kb: int = Field(2048, ge=1)


class McpSettings(BaseModel):
    """MCP tool servers (:mod:`rein.mcp.config` reads them): ``servers``
    defined in the settings, and whether the workspace's own files
    (``.vscode/mcp.json``, ``.mcp.json``) are read. Each server's fields are
    checked by :func:`rein.mcp.config.load_servers`, which skips an invalid
    one with the reason (the other servers and settings are unaffected)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: name -> the server's fields (``command``/``args``/``env``/``cwd`` or
    #: ``url``/``headers``, ``disabled``, ``includeTools``, ...).
    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Read ``.vscode/mcp.json`` and ``.mcp.json`` of the workspace.
    config_files: bool = True
    #: The names in ``servers`` that come from the workspace's own settings
    #: (set by the VS Code extension, which can tell): those start only
    #: after the person trusts them, like the servers of the two files.
    workspace_servers: list[str] = Field(default_factory=list)
    #: Offer one ``mcp_search_tools`` tool instead of every MCP tool; the
    #: model enables the tools it needs (:mod:`rein.mcp.offer`).
    lazy_tools: bool = False
    #: The share of the model's window the MCP tool definitions may take;
    #: past it only the tools of servers with ``includeTools`` are offered
    #: (and ``mcp_budget_warning`` says so).
    max_tool_share: float = Field(0.1, ge=0.0, le=1.0)


#: The events of Claude Code's hook protocol Rein runs hooks for.
HookEventName = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
]
HOOK_EVENTS: tuple[str, ...] = get_args(HookEventName)


class HookCommand(BaseModel):
    """One hook: a shell command (Claude Code's ``{"type": "command",
    "command": ..., "timeout": seconds}``, with its ``onFailure`` and
    ``statusMessage``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["command"]
    command: str = Field(min_length=1)
    #: Seconds before the command is stopped (default: ``hookOptions.timeoutS``);
    #: at most an hour, a finite number.
    timeout: float | None = Field(None, gt=0, le=3600, allow_inf_nan=False)
    #: ``block``: a hook that cannot start, times out or exits with a code
    #: other than 0 and 2 blocks as exit 2 would (fails closed).
    on_failure: Literal["continue", "block"] = Field("continue", alias="onFailure")
    #: What Claude Code shows while the hook runs; Rein shows the command.
    status_message: str | None = Field(None, alias="statusMessage")


class HookMatcher(BaseModel):
    """The hooks of one event whose ``matcher`` fits (a tool name, a regular
    expression such as ``Edit|Write``, ``*`` or empty for all)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matcher: str = ""
    hooks: list[HookCommand] = Field(min_length=1)


class HookOptions(BaseModel):
    """How the hooks run (:mod:`rein.bring.hooks_adapter`)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: Seconds a hook may run when its entry gives no ``timeout`` (Claude Code's 60).
    timeout_s: float = Field(60.0, gt=0, le=3600, allow_inf_nan=False)
    #: How many times ``Stop`` hooks may keep one run going.
    max_stop_continuations: int = Field(3, ge=0, le=100)


class SetupSettings(BaseModel):
    """The person's own skills, custom agents and commands
    (:mod:`rein.bring`): which kinds are read, from where, and how an
    agent's model name maps to the configured provider's models."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: Read skills (``SKILL.md`` folders) and offer the ``skill`` tool.
    skills: bool = True
    #: Read custom agents (subagent types of the ``task`` tool).
    agents: bool = True
    #: Read prompt files as slash commands.
    commands: bool = True
    #: More folders holding skill folders (relative to the workspace, or
    #: absolute; ``~`` is the home folder).
    skill_paths: list[str] = Field(default_factory=list)
    #: Read the user's folders too (``~/.claude/skills``, ``agents``, ``commands``,
    #: ``CLAUDE.md``).
    user_folders: bool = True
    #: A custom agent's or a command's ``model`` (``sonnet``, ``haiku``, a
    #: model id) -> the model name of the configured provider it runs on.
    agent_models: dict[str, str] = Field(default_factory=dict)


class ReinConfig(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    model: ModelConfig = Field(default_factory=ModelConfig)
    harness: HarnessConfig = HarnessConfig()
    gates: GatesConfig = GatesConfig()
    approval: ApprovalSettings = ApprovalSettings()
    tools: ToolOptions = ToolOptions()
    instructions: InstructionSettings = InstructionSettings()
    auto_repair: Literal["off", "onSave"] = "off"
    sessions: SessionLimits = SessionLimits()
    checkpoints: CheckpointLimits = CheckpointLimits()
    mcp: McpSettings = McpSettings()
    #: The OS sandbox of the model's commands (``approval.command: "sandboxed"``).
    sandbox: SandboxSettings = SandboxSettings()
    #: Hooks in Claude Code's shape: event name -> matchers (trusted: the
    #: person's own settings; a workspace's ``.claude/settings.json`` hooks are
    #: read by :mod:`rein.bring.hook_config` and run once allowed).
    hooks: dict[HookEventName, list[HookMatcher]] = Field(default_factory=dict)
    hook_options: HookOptions = HookOptions()
    setup: SetupSettings = SetupSettings()
    #: Where the session database lives (default: the user data dir).
    storage_path: str | None = None

    def sandbox_settings(self) -> SandboxSettings:
        """``sandbox`` with Rein's storage folder hidden too (``storage_path``,
        or the default one, which ``XDG_DATA_HOME`` moves out of
        ``~/.local/share/rein``): every session's transcript, the
        checkpoints' file contents and the isolated runs' copies are there."""
        # The store's default_storage_path (config.py sits below store/ in
        # the layers; tests/sandboxing/test_policy.py checks they agree).
        from platformdirs import user_data_dir

        storage = self.storage_path or user_data_dir("rein", appauthor=False)
        return self.sandbox.model_copy(update={"hidden": (*self.sandbox.hidden, storage)})

    def tool_settings(self) -> ToolSettings:
        """The tools' settings of a session with this configuration (built
        from sections already validated here; frozen)."""
        return ToolSettings(
            approval=self.approval,
            tools=self.tools,
            instructions=self.instructions,
            max_tool_result_chars=self.harness.max_tool_result_chars,
            diagnostics_wait_ms=self.gates.analyzer.settle_timeout_ms,
        )


@dataclass(frozen=True)
class ConfigIssue:
    """One invalid setting and what is used instead."""

    #: The setting, camelCase, without ``rein.``: ``"approval.command"``.
    key: str
    #: What is wrong, with the allowed values where there is a list of them.
    problem: str
    #: What happens instead: ``"using the last good value 'allow'"``,
    #: ``"using the default 'ask'"``, ``"ignored"`` (not a setting); for an
    #: endpoint setting, that runs fail and no model request is sent.
    instead: str

    def message(self, source: str = "configuration") -> str:
        return f"invalid {source}: rein.{self.key}: {self.problem}; {self.instead}"


@dataclass(frozen=True)
class ResolvedConfig:
    """The configuration to use and the invalid settings left out of it."""

    config: ReinConfig
    issues: tuple[ConfigIssue, ...] = ()


def load_config(data: Any, source: str = "configuration") -> ReinConfig:
    """Validate a ``rein`` section strictly: ConfigError names the first bad
    key (its ``key``) and lists the others."""
    if data is None:
        data = {}
    try:
        return ReinConfig.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        described = [(_setting(e["loc"]).key, _problem(e)) for e in errors]
        key, problem = described[0]
        message = f"invalid {source}: rein.{key}: {problem}"
        others = sorted({f"rein.{k}" for k, _ in described[1:] if k != key})
        if others:
            message += f" (also invalid: {', '.join(others)})"
        raise ConfigError(message, key) from exc


def resolve_config(
    data: Any, last_good: ReinConfig | None = None, source: str = "configuration"
) -> ResolvedConfig:
    """Validate a ``rein`` section key by key: each invalid value falls back
    to its value in ``last_good`` (else its default) and is reported; an
    invalid endpoint setting (:data:`ENDPOINT_KEYS`) makes the model
    configuration unusable instead."""
    base = last_good if last_good is not None else ReinConfig()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        problem = f"must be an object; got {_shown(data)}"
        return ResolvedConfig(
            base, (ConfigIssue("(root)", problem, "using the last good settings"),)
        )
    raw: dict[str, Any] = copy.deepcopy(data)
    previous = last_good.model_dump(by_alias=True, mode="json") if last_good else None
    issues: dict[str, ConfigIssue] = {}
    endpoint: list[ConfigIssue] = []
    fell_back: set[tuple[str, ...]] = set()
    config: ReinConfig | None = None
    # Each pass deletes a value or puts back a last good one (once per key),
    # so a few passes per key of the section are always enough.
    for _ in range(4 * _count_leaves(raw) + 4):
        try:
            config = ReinConfig.model_validate(raw)
            break
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        handled: list[tuple[str, ...]] = []
        for error in errors:
            setting = _setting(error["loc"])
            if any(setting.raw[: len(done)] == done for done in handled):
                continue  # another error of a key dealt with in this pass
            if not _present(raw, setting.raw):
                continue
            handled.append(setting.raw)
            problem = _problem(error)
            if setting.key in ENDPOINT_KEYS:
                _delete(raw, setting.raw)
                issue = ConfigIssue(setting.key, problem, _NO_REQUEST)
                endpoint.append(issue)
            elif not setting.known:
                _delete(raw, setting.raw)
                issue = ConfigIssue(setting.key, problem, "ignored")
            else:
                old = _lookup(previous, setting.alias)
                if old is _MISSING or setting.alias in fell_back:
                    _delete(raw, setting.raw)
                    instead = _DEFAULT
                else:
                    _assign(raw, setting.raw, old)
                    fell_back.add(setting.alias)
                    instead = _LAST_GOOD
                issue = ConfigIssue(setting.key, problem, instead)
            issues.setdefault(setting.key, issue)
    if config is None:  # pragma: no cover - the passes above always suffice
        config = base
    if endpoint:
        reason = "; ".join(f"rein.{i.key}: {i.problem}" for i in endpoint)
        config = config.model_copy(update={"model": config.model.unusable_because(reason)})
    shown = config.model_dump(by_alias=True, mode="json")
    final = tuple(_with_value(issue, shown) for issue in issues.values())
    return ResolvedConfig(config, final)


_NO_REQUEST = "runs fail with this reason until it is fixed; no model request is sent"
_DEFAULT = "using the default"
_LAST_GOOD = "using the last good value"


class _Missing:
    pass


_MISSING: Any = _Missing()


@dataclass(frozen=True)
class _Setting:
    #: The keys as the section spelled them (an alias or a field name).
    raw: tuple[str, ...]
    #: The same path in camelCase.
    alias: tuple[str, ...]
    #: False for a key that is not a setting.
    known: bool

    @property
    def key(self) -> str:
        return ".".join(self.alias) or "(root)"


def _model_class(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (``X`` or ``X | None``); None for a list, a
    dict or a plain value: a setting ends there."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        models = [a for a in get_args(annotation) if a is not type(None)]
        if len(models) == 1:
            return _model_class(models[0])
    return None


def _setting(loc: tuple[int | str, ...]) -> _Setting:
    """The setting an error is about: the path of model fields in ``loc``
    (an item of a list or a dict is part of its setting)."""
    model: type[BaseModel] | None = ReinConfig
    raw: list[str] = []
    alias: list[str] = []
    for part in loc:
        if model is None or not isinstance(part, str):
            break
        fields = model.model_fields
        name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
        raw.append(part)
        if name is None:
            alias.append(part)
            return _Setting(tuple(raw), tuple(alias), known=False)
        alias.append(fields[name].alias or name)
        model = _model_class(fields[name].annotation)
    return _Setting(tuple(raw), tuple(alias), known=True)


def _problem(error: Any) -> str:
    message = str(error["msg"])
    if error["type"] == "extra_forbidden":
        return f"not a setting ({message})"
    return f"{_inside(error['loc'])}{message}; got {_shown(error.get('input'))}"


def _inside(loc: tuple[int | str, ...]) -> str:
    """Where inside a setting that holds a list or a mapping (``hooks``) the
    problem is: ``PreToolUse[0].hooks[0].command: ``; empty for a plain one."""
    rest = loc[len(_setting(loc).raw) :]
    if not rest:
        return ""
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest).lstrip(".")
    return f"at {text}: "


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _present(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _delete(data: dict[str, Any], path: tuple[str, ...]) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    if path:
        del node[path[-1]]
    else:
        data.clear()


def _assign(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _lookup(data: dict[str, Any] | None, path: tuple[str, ...]) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _count_leaves(data: Any) -> int:
    if isinstance(data, dict):
        return 1 + sum(_count_leaves(v) for v in data.values())
    return 1


def _with_value(issue: ConfigIssue, shown: dict[str, Any]) -> ConfigIssue:
    """Name the value used instead, when it is one."""
    if issue.instead not in (_DEFAULT, _LAST_GOOD):
        return issue
    value = _lookup(shown, tuple(issue.key.split(".")))
    if value is _MISSING:
        return issue
    shown_value = "(unset)" if value is None else _shown(value)
    return ConfigIssue(issue.key, issue.problem, f"{issue.instead} {shown_value}")
