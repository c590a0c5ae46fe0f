"""Tools: scripted ``Tool`` implementations, and the recorder that runs a
tool as the loop does."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel
from pydantic import BaseModel, Field

# The benchmark's workload tool lives in the package (``rein bench core`` uses it).
from rein.bench.tools import FixedReadArgs as FixedReadArgs
from rein.bench.tools import FixedReadTool as FixedReadTool
from rein.harness.errors import ToolError
from rein.harness.ports import ChangeAnnouncer
from rein.harness.run.run_record import RunRecord, recording
from rein.harness.run.steering import SteeringSignal
from rein.harness.tools import Tool, ToolClass, ToolContext, ToolResult
from tests.fakes.workspace import FakeWorkspace


class EchoArgs(BaseModel):
    text: str = Field(description="Text to echo back")


class EchoTool(Tool[EchoArgs]):
    name = "echo"
    description = "Echo the text back."
    args_model = EchoArgs
    tool_class = "read"

    async def execute(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"echo: {args.text}")


ToolFunction = Callable[[EchoArgs, ToolContext], ToolResult | str | Awaitable[ToolResult | str]]


class FunctionTool(Tool[EchoArgs]):
    """A tool named ``name`` whose result is ``fn(args, ctx)`` (sync or async;
    a string is the result's text). It takes EchoTool's one argument, ``text``."""

    name = "function"
    description = "A scripted tool."
    args_model = EchoArgs
    tool_class = "read"

    def __init__(self, name: str, fn: ToolFunction) -> None:
        self.name = name  # type: ignore[misc]
        self.fn = fn

    async def execute(self, args: EchoArgs, ctx: ToolContext) -> ToolResult | str:
        result = self.fn(args, ctx)
        return await result if inspect.isawaitable(result) else result


class FailArgs(BaseModel):
    message: str = "boom"
    kind: str = "tool_error"


class FailTool(Tool[FailArgs]):
    """Raises ToolError (kind "tool_error") or RuntimeError (kind "crash");
    counts its executions in ``executed``."""

    name = "fail"
    description = "Always fails."
    args_model = FailArgs

    def __init__(self) -> None:
        self.executed = 0

    async def execute(self, args: FailArgs, ctx: ToolContext) -> ToolResult:
        self.executed += 1
        if args.kind == "crash":
            raise RuntimeError(args.message)
        raise ToolError(args.message)


class FlakyTool(Tool[EchoArgs]):
    """Raises ``errors[i]`` on its i-th execution while there is one, then
    echoes; ``tool_class`` as given (a read, a write, a command). Counts its
    executions in ``executed``."""

    name = "flaky"
    description = "Fails a few times, then works."
    args_model = EchoArgs

    def __init__(self, errors: Sequence[BaseException], tool_class: ToolClass = "read") -> None:
        self.errors = list(errors)
        self.tool_class = tool_class  # type: ignore[misc]
        self.executed = 0

    async def execute(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        self.executed += 1
        if self.executed <= len(self.errors):
            raise self.errors[self.executed - 1]
        return ToolResult(f"worked: {args.text}")


class SleepArgs(BaseModel):
    seconds: float = 10.0


class SleepTool(Tool[SleepArgs]):
    """Sleeps, or returns early when steering asks tools to yield. Signals
    ``started`` so a test can act while it runs."""

    name = "sleep"
    description = "Sleep for a while."
    args_model = SleepArgs

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = False
        self.yielded = False

    async def execute(self, args: SleepArgs, ctx: ToolContext) -> ToolResult:
        self.started.set()
        try:
            with anyio.move_on_after(args.seconds):
                while True:
                    if ctx.yield_requested:
                        self.yielded = True
                        return ToolResult("stopped early: steering message waiting")
                    ctx.update("tick", "heartbeat")
                    await anyio.sleep(0.01)
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        return ToolResult(f"slept {args.seconds}s")


class WriteArgs(BaseModel):
    path: str
    content: str


class FakeWriteTool(Tool[WriteArgs]):
    """Writes through the Workspace port and calls no record function: the
    workspace layer (a TrackedWorkspace) counts the change for the run."""

    name = "write"
    description = "Write a file."
    args_model = WriteArgs
    tool_class = "write"

    async def execute(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        workspace = ctx.env.workspace
        assert workspace is not None
        mutation = await workspace.write_text(args.path, args.content)
        return ToolResult(f"wrote {args.path} (generation {mutation.generation})")


class CommandArgs(BaseModel):
    path: str
    content: str


class FakeCommandTool(Tool[CommandArgs]):
    """A ``run_command`` stand-in: a "process" writes ``path`` behind the
    workspace's back (like ``sed -i``), and a "watcher" records the change as
    external while the process runs, as the disk watcher does."""

    name = "run_command"
    description = "Run a command that writes a file."
    args_model = CommandArgs
    tool_class = "command"

    def __init__(self, workspace: FakeWorkspace, log: Any) -> None:
        self.workspace = workspace
        self.log = log

    async def execute(self, args: CommandArgs, ctx: ToolContext) -> ToolResult:
        if isinstance(ctx.env.workspace, ChangeAnnouncer):
            await ctx.env.workspace.before_command()  # as run_command does
        with self.log.attributing_processes():
            self.workspace.files[args.path] = args.content
            self.log.record(self.workspace._mutate((args.path,), "external"))
        return ToolResult(f"the command wrote {args.path}")


class ToolCallRecorder:
    """Builds the :class:`ToolContext` a tool sees in a run, recording its
    progress updates; ``record`` is the record of one run, active while a
    call runs (so a TrackedWorkspace counts the calls' changes in it).
    ``run(tool, **arguments)`` validates like the loop does and lets
    ToolError propagate (assert it with ``pytest.raises``)."""

    def __init__(
        self,
        env: Any,
        *,
        on_update: Callable[[str, str], None] | None = None,
        offered: frozenset[str] | None = None,
    ) -> None:
        self.env = env
        #: The tools the calling agent is offered (``ToolContext.offered``).
        self.offered = offered
        self.record = RunRecord()
        self.updates: list[tuple[str, str]] = []
        self.yield_requested = False
        #: The calls' steering signal: a test sets it to steer mid-call.
        self.steering = SteeringSignal()
        self._on_update = on_update

    def _update(self, text: str, kind: str) -> None:
        self.updates.append((text, kind))
        if self._on_update is not None:
            self._on_update(text, kind)

    def context(self, name: str, call_id: str = "call_1") -> ToolContext:
        return ToolContext(
            call_id,
            name,
            self.env,
            self._update,
            lambda: self.yield_requested,
            self.record,
            steering_arrived=self.steering,
            offered=self.offered,
        )

    async def run(self, tool: Tool[Any], **arguments: Any) -> ToolResult:
        args = tool.args_model.model_validate(arguments)
        with recording(self.record):
            result = await tool.execute(args, self.context(tool.name))
        return result if isinstance(result, ToolResult) else ToolResult(str(result))

    def output(self) -> str:
        return "".join(text for text, kind in self.updates if kind == "output")
