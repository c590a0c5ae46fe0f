"""The tool abstraction: a name, a description, a pydantic args model (whose
JSON Schema is what the model sees) and ``async execute(args, ctx)``.

Tools raise :class:`~rein.harness.errors.ToolError` (or anything else) to fail;
the loop turns every failure into an ``is_error`` result the model can read.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from rein.harness.calls.display import DisplayKind, check_display
from rein.harness.calls.tool_result import ToolResult
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.hooks import Hooks, Permit
from rein.harness.navigation_ports import Navigator
from rein.harness.ports import (
    ApprovalRuleBook,
    Approver,
    CommandExecutor,
    CommandSandbox,
    DiagnosticsSource,
    Model,
    ToolSchema,
    UserChannel,
    Workspace,
)
from rein.harness.run.run_record import RunRecord
from rein.harness.run.steering import Steering, SteeringSignal

__all__ = [
    "DisplayKind",
    "Tool",
    "ToolCallExecutor",
    "ToolClass",
    "ToolContext",
    "ToolEnvironment",
    "ToolRegistry",
    "ToolResult",
    "ToolkitRules",
    "execute_tool_call",
]

ToolClass = Literal["read", "write", "command", "other"]
ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(slots=True)
class ToolEnvironment:
    """The ports a tool may use. Any of them may be absent (None)."""

    workspace: Workspace | None = None
    diagnostics: DiagnosticsSource | None = None
    approver: Approver | None = None
    #: The approval rules the person kept ("always allow"); None: none.
    approval_rules: ApprovalRuleBook | None = None
    user: UserChannel | None = None
    #: The tools' settings (a frozen ``rein.tools.settings.ToolSettings``:
    #: approval policy, deny globs, ...); None means the tools' defaults. The
    #: core carries it and never reads it, so it is typed ``Any`` here and the
    #: harness imports nothing from ``rein.tools``.
    settings: Any = None
    #: Makes child agents for the ``task`` tool (None: no subagents).
    subagents: Any = None
    #: The log of every workspace change; through it the changes of processes
    #: a tool starts count for the run. Defaults to a TrackedWorkspace's log.
    changes: MutationLog | None = None
    #: Returns once every change written to disk before the call has been
    #: seen (a disk watcher's probe); None when nothing watches the disk.
    settle_changes: Callable[[], Awaitable[None]] | None = None
    #: Where ``run_command`` runs its commands (the ACP client's terminal);
    #: None: a local process group of its own.
    commands: CommandExecutor | None = None
    #: The OS sandbox ``run_command``'s local commands run in when
    #: ``approval.command`` is "sandboxed"; None: none (every command asks).
    sandbox: CommandSandbox | None = None
    #: Answers the navigation tools (definitions, references, rename) from
    #: a language server; None: they are not offered.
    navigator: Navigator | None = None

    def __post_init__(self) -> None:
        if self.changes is None and isinstance(self.workspace, TrackedWorkspace):
            self.changes = self.workspace.mutations


class ToolContext:
    """What one tool call sees: its id, the environment, a way to stream
    progress, and the soft-yield signal raised by steering."""

    __slots__ = (
        "_emit",
        "_is_yield_requested",
        "_update",
        "env",
        "hooks",
        "model",
        "name",
        "offered",
        "permit",
        "record",
        "steering",
        "steering_arrived",
        "tool_call_id",
    )

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        env: ToolEnvironment,
        update: Callable[[str, str], None],
        is_yield_requested: Callable[[], bool],
        record: RunRecord,
        emit: Callable[[Any], None] | None = None,
        *,
        steering_arrived: SteeringSignal | None = None,
        steering: Steering | None = None,
        hooks: Hooks | None = None,
        model: Model | None = None,
        permit: Permit | None = None,
        offered: frozenset[str] | None = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        #: How a ``before_tool_call`` hook decided this call is approved
        #: (None: by the approval policy alone).
        self.permit = permit
        #: The names of the tools the calling agent is offered (a result
        #: that suggests a tool names only these); None: not known.
        self.offered = offered
        #: The model ``prepare_next_turn`` chose for the turn that made this
        #: call (None: the agent's own): a ``task`` child runs on it.
        self.model = model
        #: The calling agent's steering (a subagent takes its parent's
        #: messages from it) and hooks (they see the subagent's calls too);
        #: None outside a run.
        self.steering = steering
        self.hooks = hooks
        #: Set when steering arrives while this call runs (a steer, a poke,
        #: external mail): ``await ctx.steering_arrived.wait()`` next to the
        #: tool's own work to wrap up softly. Delivery is at the boundary.
        self.steering_arrived = steering_arrived or SteeringSignal()
        self._emit = emit
        self.name = name
        self.env = env
        self._update = update
        self._is_yield_requested = is_yield_requested
        #: The run's record (read stamps, changes, tools used); the workspace
        #: layer fills in the changes.
        self.record = record

    def update(self, text: str, kind: str = "output") -> None:
        """Stream progress to the client as a ``tool_call_update`` event."""
        self._update(text, kind)

    def emit(self, event: Any) -> None:
        """Emit an event of the run (subagent activity); dropped without a run."""
        if self._emit is not None:
            self._emit(event)

    @property
    def yield_requested(self) -> bool:
        """True once steering arrived in this tool phase: long tools should wrap up."""
        return self._is_yield_requested()


class ToolkitRules(Protocol):
    """What a tool's toolkit (a :class:`~rein.harness.toolkit.Toolkit`)
    gives the prompt: its name and its rules."""

    @property
    def name(self) -> str: ...

    @property
    def instructions(self) -> str: ...


class Tool(ABC, Generic[ArgsT]):
    name: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    tool_class: ClassVar[ToolClass] = "other"
    #: Soft limit: past it the tool gets heartbeat events; hard limit cancels it.
    timeout_s: ClassVar[float | None] = None
    #: The tool's lines in the system prompt's "# Tools" section; empty: its
    #: name and the first paragraph of its description.
    prompt_section: str = ""
    #: The toolkit the tool belongs to (its rules go into the prompt of a
    #: role offered the tool); None for a tool of no toolkit.
    toolkit: ToolkitRules | None = None
    #: How clients show the tool's result (``tool_call_end.display``):
    #: "text", "markdown", "diff", "table", "json" or "locations"; the model reads the
    #: same text whatever the kind.
    display: DisplayKind = "text"

    _schema: ToolSchema | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "display" in cls.__dict__:
            check_display(f"tool {cls.__qualname__}", cls.__dict__["display"])

    @abstractmethod
    async def execute(self, args: ArgsT, ctx: ToolContext) -> ToolResult | str: ...

    def start_details(self) -> dict[str, Any]:
        """What ``tool_call_start`` says about this tool besides its name
        (an MCP tool: its server and its own name); empty by default."""
        return {}

    def schema(self) -> ToolSchema:
        if self._schema is None:
            params = self.args_model.model_json_schema()
            params.pop("title", None)
            self._schema = ToolSchema(
                name=self.name, description=self.description, parameters=params
            )
        return self._schema


class ToolRegistry:
    """Tools by name; schemas are computed once and cached."""

    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self._schemas: list[ToolSchema] | None = None
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._schemas = None

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def tools(self) -> list[Tool[Any]]:
        """The tools, in registration order."""
        return list(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def schemas(self) -> list[ToolSchema]:
        if self._schemas is None:
            self._schemas = [t.schema() for t in self._tools.values()]
        return self._schemas

    def extended(self, tools: Iterable[Tool[Any]]) -> ToolRegistry:
        """A new registry with these tools and ``tools`` (this one unchanged);
        a name in both is an error."""
        registry = ToolRegistry(self._tools.values())
        for tool in tools:
            registry.register(tool)
        return registry

    def unregister(self, name: str) -> None:
        """Take the tool ``name`` out (tools that come and go between turns:
        an MCP server's); a name not registered is an error."""
        if name not in self._tools:
            raise KeyError(f"tool {name!r} is not registered")
        del self._tools[name]
        self._schemas = None

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        return ToolRegistry(self._tools[n] for n in names if n in self._tools)


class ToolCallExecutor(Protocol):
    """The port that executes one tool call (``Agent(tool_executor=...)``).

    The loop calls it with the resolved tool, the validated arguments and the
    call's context, after ``before_tool_call`` allowed the call and before
    ``after_tool_call`` sees the result. Everything around it stays the
    loop's: events, the time limit and heartbeats, the misuse breaker, abort,
    and exactly one result per call in call order. It may raise (a
    :class:`~rein.harness.errors.ToolError` or anything else): the loop turns
    that into an ``is_error`` result, as it does for a tool. The default,
    :func:`execute_tool_call`, runs ``tool.execute(args, ctx)``.
    """

    def __call__(
        self, tool: Tool[Any], args: BaseModel, ctx: ToolContext
    ) -> Awaitable[ToolResult | str]: ...


async def execute_tool_call(tool: Tool[Any], args: BaseModel, ctx: ToolContext) -> ToolResult | str:
    """The default :class:`ToolCallExecutor`: run the tool in this process."""
    return await tool.execute(args, ctx)
