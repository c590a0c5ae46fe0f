"""The tools' settings, typed and frozen: validated once, read as attributes.

Where it lives and why: the settings hold tool matters (approval policies,
deny globs, the grep backend, which tools exist), so they belong to
``rein.tools``, not to the core. The core only carries them:
``ToolEnvironment.settings`` (``rein.harness.tools``) is typed ``Any`` and
never read by the harness, so ``rein.harness`` imports nothing from
``rein.tools`` or ``rein.config``. Tools get them through :func:`settings_of`,
which gives the defaults when a session has none.

The two wire sections are defined here, once, with their defaults, and
``rein.config.ReinConfig`` uses them as its ``approval`` and ``tools`` keys
(camelCase on the wire, snake_case in Python)::

    "approval": {"read": "allow", "write": "allow", "command": "sandboxed",
                 "denyGlobs": [".git", ".env*", ...]},
    "tools": {"grepBackend": "auto", "disabled": ["run_command"],
              "toolkits": ["my_tools:NotesToolkit"]}

``ReinConfig.tool_settings()`` builds one :class:`ToolSettings` from them and
``harness.maxToolResultChars``; a bad value fails there, naming its key, and
never reaches a tool.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from rein.harness.config import AnalyzerGateConfig, HarnessConfig
from rein.harness.ports import ApprovalClass
from rein.tools.secret_files import DEFAULT_SECRET_FILES, SecretFiles

if TYPE_CHECKING:
    from rein.harness.tools import ToolContext

__all__ = [
    "DEFAULT_DENY_GLOBS",
    "DEFAULT_INSTRUCTION_FILES",
    "DEFAULT_SECRET_FILES",
    "DEFAULT_TOOL_NAMES",
    "DEFAULT_TOOL_SETTINGS",
    "DISABLEABLE_TOOL_NAMES",
    "ApprovalSettings",
    "CommandPolicy",
    "GrepBackend",
    "InstructionSettings",
    "Policy",
    "ToolOptions",
    "ToolSettings",
    "WritePolicy",
    "settings_of",
]

Policy = Literal["allow", "ask", "deny"]
#: Writes also have "review": applied without asking, then kept or undone by
#: the person after the run (``rein.checkpoints.review``).
WritePolicy = Literal["allow", "ask", "deny", "review"]
#: Commands also have "sandboxed" (the default): a command runs without
#: asking in the OS sandbox (``rein.sandboxing``); one that asks to leave
#: it, or any command where the sandbox cannot start, asks every time.
CommandPolicy = Literal["allow", "ask", "deny", "sandboxed"]
_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
GrepBackend = Literal["auto", "rg", "python"]

#: Files never written by tools, read only with the person's approval.
#: ``.git`` is a repository's folder, or in a submodule or worktree the file
#: that points git at one (its hooks run on the person's next commit).
DEFAULT_DENY_GLOBS: tuple[str, ...] = (".git", ".env*", "*.pem", "*.key", "**/*secret*")

#: The project's instruction files, as globs relative to the workspace root
#: (``**/`` matches any folder, the root included). An AGENTS.md in a
#: subfolder applies to the files under it (rein.tools.bootstrap).
DEFAULT_INSTRUCTION_FILES: tuple[str, ...] = (
    "**/AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    ".cursor/rules/*.mdc",
)

#: The names of :func:`rein.tools.registry.default_tools`, in its order (a
#: test keeps the two equal): what ``tools.disabled`` may name.
DEFAULT_TOOL_NAMES: tuple[str, ...] = (
    "read_file",
    "list_dir",
    "glob",
    "grep",
    "edit_file",
    "write_file",
    "delete_file",
    "move_file",
    "run_command",
    "get_diagnostics",
    "ask_user",
)

#: What ``tools.disabled`` may name: the standard tools and ``task`` (the
#: subagent tool the session assembly adds outside explain mode).
DISABLEABLE_TOOL_NAMES: tuple[str, ...] = (*DEFAULT_TOOL_NAMES, "task")


class _Section(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class ApprovalSettings(_Section):
    """``rein.approval``: a policy per tool class, and the protected files."""

    read: Policy = "allow"
    write: WritePolicy = "allow"
    command: CommandPolicy = "sandboxed"
    #: Calls of MCP servers' tools (``rein.mcp``).
    mcp: Policy = "ask"
    #: MCP calls allowed without asking: ``"server"`` (every tool of that
    #: server) or ``"server/tool"``; a "deny" policy still wins.
    mcp_allow: tuple[str, ...] = ()
    #: Globs that are never written and need approval to read (replaces the
    #: defaults when set).
    deny_globs: tuple[str, ...] = DEFAULT_DENY_GLOBS
    #: Bound on a person's answer (``rein/confirm``, ``rein/askUser``): past
    #: it an approval is refused and a question unanswered, results the
    #: model reads. Long: a person may be away for a while.
    timeout_ms: int = Field(600_000, ge=100)

    def policy(self, approval_class: ApprovalClass) -> WritePolicy | CommandPolicy:
        policies: dict[ApprovalClass, WritePolicy | CommandPolicy] = {
            "read": self.read,
            "write": self.write,
            "command": self.command,
            "mcp": self.mcp,
        }
        return policies[approval_class]

    def mcp_allowed(self, server: str, tool: str) -> bool:
        """An ``mcpAllow`` rule names this server or this server's tool."""
        return server in self.mcp_allow or f"{server}/{tool}" in self.mcp_allow

    @property
    def review(self) -> bool:
        """Edits are reviewed after the run (``write: "review"``)."""
        return self.write == "review"


class ToolOptions(_Section):
    """``rein.tools``: which tools the model gets, and how grep searches."""

    #: "auto" (ripgrep when on PATH, else Python), "rg" (ripgrep only) or
    #: "python".
    grep_backend: GrepBackend = "auto"
    #: Tools left out of the registry, and so out of the prompt.
    disabled: frozenset[str] = frozenset()
    #: Environment variables passed to commands although their names look
    #: secret (``*_TOKEN``, ``*_API_KEY``, ...) or a provider reads its key
    #: from them; every other such variable is removed from a child's
    #: environment.
    pass_env: tuple[str, ...] = ()
    #: Toolkits to add, as import paths "package.module:ClassName"
    #: (``rein.tools.toolkit``); imported when a session is built.
    toolkits: tuple[str, ...] = ()
    #: Files no tool shows the model (``rein.tools.secret_files``): the
    #: person's list, ``!glob`` for an exception; ``[]`` turns it off.
    secret_files: tuple[str, ...] = DEFAULT_SECRET_FILES
    #: Secret-file globs a workspace's settings add (the editor extension
    #: sends the workspace's and folders' ``secretFiles`` here): added to
    #: ``secret_files``, never an exception.
    workspace_secret_files: tuple[str, ...] = ()

    @field_validator("secret_files", "workspace_secret_files", mode="before")
    @classmethod
    def _secret_globs(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, str) and v.strip() and v.strip() != "!" for v in value
        ):
            raise ValueError('must be a list of globs, e.g. [".env", "!.env.example"]')
        if info.field_name == "workspace_secret_files":
            unlocking = [repr(v) for v in value if v.strip().startswith("!")]
            if unlocking:
                raise ValueError(
                    f"{', '.join(unlocking)}: a workspace only adds secret files; an "
                    "exception (!) belongs in your user settings"
                )
        return tuple(v.strip() for v in value)

    @field_validator("toolkits", mode="before")
    @classmethod
    def _import_paths(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise ValueError('must be a list of import paths, e.g. ["my_tools:NotesToolkit"]')
        bad = [repr(v) for v in value if not isinstance(v, str) or not _IMPORT_PATH.match(v)]
        if bad:
            raise ValueError(
                f'{", ".join(bad)}: each entry is an import path "package.module:ClassName"'
            )
        return value

    @field_validator("disabled", mode="before")
    @classmethod
    def _known_tools(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple | set | frozenset):
            raise ValueError('must be a list of tool names, e.g. ["run_command"]')
        unknown = sorted(repr(v) for v in value if v not in DISABLEABLE_TOOL_NAMES)
        if unknown:
            raise ValueError(
                f"unknown tool name(s) {', '.join(unknown)}; "
                f"the tools are {', '.join(DISABLEABLE_TOOL_NAMES)}"
            )
        return value


class InstructionSettings(_Section):
    """``rein.instructions``: which files hold the project's instructions
    for agents (every one found is read; rein.tools.bootstrap)."""

    files: tuple[str, ...] = DEFAULT_INSTRUCTION_FILES

    @field_validator("files", mode="before")
    @classmethod
    def _globs(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, str) and v.strip() for v in value
        ):
            raise ValueError('must be a list of globs, e.g. ["**/AGENTS.md", "CLAUDE.md"]')
        outside = [v for v in value if v.startswith(("/", "../")) or "/../" in v]
        if outside:
            raise ValueError(
                f"{', '.join(map(repr, outside))}: a glob is relative to the workspace root"
            )
        return value


class ToolSettings(BaseModel):
    """Everything the tools read, for one session. Frozen; build it with
    ``ReinConfig.tool_settings()`` (or directly in tests)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    approval: ApprovalSettings = ApprovalSettings()
    tools: ToolOptions = ToolOptions()
    instructions: InstructionSettings = InstructionSettings()
    #: read_file's page size (the loop cuts every result at this length).
    max_tool_result_chars: int = Field(
        HarnessConfig.model_fields["max_tool_result_chars"].default, ge=200
    )
    #: get_diagnostics' bound on the deferred whole-workspace analysis it
    #: starts (the analyzer gate's: ``gates.analyzer.settleTimeoutMs``).
    diagnostics_wait_ms: int = Field(
        AnalyzerGateConfig.model_fields["settle_timeout_ms"].default, ge=100
    )

    @property
    def grep_backend(self) -> GrepBackend:
        return self.tools.grep_backend

    @property
    def disabled_tools(self) -> frozenset[str]:
        return self.tools.disabled

    @property
    def toolkits(self) -> tuple[str, ...]:
        return self.tools.toolkits

    @property
    def deny_globs(self) -> tuple[str, ...]:
        return self.approval.deny_globs

    @property
    def instruction_files(self) -> tuple[str, ...]:
        return self.instructions.files

    @property
    def secret_files(self) -> SecretFiles:
        """The secret files in force: the person's list and a workspace's
        additions (``rein.tools.secret_files``)."""
        return SecretFiles.of(self.tools.secret_files, self.tools.workspace_secret_files)


DEFAULT_TOOL_SETTINGS = ToolSettings()


def settings_of(ctx: ToolContext) -> ToolSettings:
    """The session's tool settings (the defaults when it has none)."""
    settings = ctx.env.settings
    if settings is None:
        return DEFAULT_TOOL_SETTINGS
    if not isinstance(settings, ToolSettings):
        raise TypeError(
            f"ToolEnvironment.settings must be a ToolSettings, not {type(settings).__name__}"
        )
    return settings
