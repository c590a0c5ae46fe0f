"""Every test double in one place. Each is a real implementation of a port.

Never redefine a fake in a test module: add it here.
"""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import itertools
import json
import selectors
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.lowlevel
import httpx
from acp.exceptions import RequestError
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from lsprotocol import types as lsp
from pydantic import BaseModel, Field
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

# The benchmark's workload tool lives in the package (``rein bench core`` uses it).
from rein.bench.tools import FixedReadArgs as FixedReadArgs
from rein.bench.tools import FixedReadTool as FixedReadTool
from rein.harness.checkpoints import (
    CheckpointChange,
    CheckpointRun,
    FileChange,
    FileVersion,
    MemoryCheckpointStore,
)
from rein.harness.coordinators import DiagnosticsCoordinator
from rein.harness.errors import FileChangedError, StoreError, ToolError
from rein.harness.events import Event
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.messages import (
    AssistantMessage,
    TextPart,
    ToolCall,
    Usage,
)
from rein.harness.ports import (
    ApprovalAnswer,
    ApprovalRequest,
    Diagnostic,
    DiagnosticsSnapshot,
    FileContent,
    ModelDelta,
    ModelRequest,
    Mutation,
    MutationOrigin,
    TextDelta,
    ToolCallDelta,
    TurnDone,
)
from rein.harness.restore import Restorer
from rein.harness.run_record import RunRecord, recording
from rein.harness.steering import SteeringSignal
from rein.harness.tools import Tool, ToolClass, ToolContext, ToolEnvironment, ToolResult
from rein.lsp._protocol import plain_dict_converter

if TYPE_CHECKING:
    from rein.disk.analyzers import AnalyzerPool
    from rein.session import SessionPorts

# ----------------------------------------------------------------- models


class FunctionModel:
    """A Model whose turn is computed by ``fn(request) -> AssistantMessage``
    (sync or async). Records every request."""

    def __init__(
        self,
        fn: Callable[[ModelRequest], AssistantMessage | Awaitable[AssistantMessage]],
        name: str = "function",
    ) -> None:
        self.fn = fn
        self._name = name
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.requests.append(
            ModelRequest(request.system, list(request.messages), request.tools, request.options)
        )
        result = self.fn(request)
        if not isinstance(result, AssistantMessage):
            result = await result
        for part in result.content:
            if isinstance(part, TextPart):
                yield TextDelta(part.text)
        for i, call in enumerate(result.tool_calls):
            yield ToolCallDelta(i, call.id, call.name, "")
        yield TurnDone(result)


class YieldingModel:
    """Wraps a Model; yields to the event loop before each turn, as a model
    across a network does (a ReplayModel without delays never yields)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def requests(self) -> list[ModelRequest]:
        return list(self.inner.requests)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        await anyio.lowlevel.checkpoint()
        async for delta in self.inner.stream(request):
            yield delta


class StallingModel:
    """Wraps a Model; its turn number ``stall_turn`` (1-based) sets
    ``stalled`` and never answers, like a model that hangs: the test aborts
    the run there (or cancels it, as a kill would). Other turns are the
    inner model's."""

    def __init__(self, inner: Any, stall_turn: int) -> None:
        self.inner = inner
        self.stall_turn = stall_turn
        self.turn = 0
        self.stalled = anyio.Event()

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.turn += 1
        if self.turn == self.stall_turn:
            self.stalled.set()
            await anyio.sleep_forever()
        async for delta in self.inner.stream(request):
            yield delta


class PausingModel:
    """A Model that streams scripted turns delta by delta and pauses each
    turn listed in ``pause_turns`` (1-based) before its delta number
    ``pause_at`` (``len(deltas)``: before the final message): ``paused`` is
    set while it waits for :meth:`resume`. A turn is ``(deltas, final
    message)``; the final message ends the turn."""

    def __init__(
        self,
        turns: Sequence[tuple[Sequence[ModelDelta], AssistantMessage]],
        *,
        pause_at: int = 1,
        pause_turns: Sequence[int] = (1,),
    ) -> None:
        self.turns = list(turns)
        self.pause_at = pause_at
        self.pause_turns = set(pause_turns)
        self.requests: list[ModelRequest] = []
        self.paused = anyio.Event()
        self._resume = anyio.Event()

    @property
    def name(self) -> str:
        return "pausing"

    def resume(self) -> None:
        """Let the paused turn go on; ``paused`` is a fresh event from now."""
        resume = self._resume
        self.paused, self._resume = anyio.Event(), anyio.Event()
        resume.set()

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        self.requests.append(request)
        number = len(self.requests)
        deltas, final = self.turns[number - 1]
        for index, delta in enumerate([*deltas, TurnDone(final)]):
            if index == self.pause_at and number in self.pause_turns:
                resume = self._resume
                self.paused.set()
                await resume.wait()
            yield delta


def assistant(text: str = "", *calls: ToolCall, usage: Usage | None = None) -> AssistantMessage:
    parts: list[Any] = []
    if text:
        parts.append(TextPart(text=text))
    parts.extend(calls)
    return AssistantMessage(
        content=tuple(parts),
        stop_reason="tool_use" if calls else "stop",
        usage=usage or Usage(input_tokens=10, output_tokens=5),
    )


def call(name: str, call_id: str = "c1", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


# ------------------------------------------------------------------ tools


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


# -------------------------------------------------------------- workspace


class FakeWorkspace:
    """An in-memory Workspace: files in a dict, one generation per change.
    ``buffers`` holds "open editor documents" that win over ``files``."""

    def __init__(self, files: dict[str, str] | None = None, root: str = "/fake") -> None:
        self.files: dict[str, str] = dict(files or {})
        self.buffers: dict[str, tuple[str, int]] = {}
        self._root = root
        self._generation = 0
        self.mutations: list[Mutation] = []
        #: Set to a message to make the next write fail like a refused edit.
        self.refuse_next: str | None = None

    @property
    def root(self) -> str:
        return self._root

    @property
    def generation(self) -> int:
        return self._generation

    def _mutate(self, paths: tuple[str, ...], origin: MutationOrigin = "agent") -> Mutation:
        self._generation += 1
        mutation = Mutation(self._generation, paths, origin)
        self.mutations.append(mutation)
        return mutation

    def person_edits(self, path: str, text: str) -> Mutation:
        """Simulate the person typing in an open buffer."""
        version = self.buffers.get(path, ("", 0))[1] + 1
        self.buffers[path] = (text, version)
        return self._mutate((path,), "person")

    async def read_text(self, path: str) -> FileContent:
        if path in self.buffers:
            text, version = self.buffers[path]
            return FileContent(path, text, version, self._generation)
        if path not in self.files:
            raise ToolError(f"File not found: {path}")
        return FileContent(path, self.files[path], None, self._generation)

    async def exists(self, path: str) -> bool:
        return path in self.files or path in self.buffers

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        if self.refuse_next is not None:
            message, self.refuse_next = self.refuse_next, None
            raise ToolError(message)
        if expected_text is not None and expected_text != (
            self.buffers[path][0] if path in self.buffers else self.files.get(path)
        ):
            raise FileChangedError(f"{path} changed since it was read; it was not written")
        if path in self.buffers:
            current = self.buffers[path][1]
            if expected_version is not None and expected_version != current:
                raise ToolError(f"{path} changed in the editor since it was read; read it again")
            self.buffers[path] = (text, current + 1)
        self.files[path] = text
        return self._mutate((path,))

    async def delete(self, path: str) -> Mutation:
        if path not in self.files:
            raise ToolError(f"File not found: {path}")
        del self.files[path]
        self.buffers.pop(path, None)
        return self._mutate((path,))

    async def rename(self, old: str, new: str) -> Mutation:
        if old not in self.files:
            raise ToolError(f"File not found: {old}")
        self.files[new] = self.files.pop(old)
        return self._mutate((old, new))

    def glob(self, pattern: str) -> list[str]:
        return sorted(p for p in self.files if fnmatch.fnmatch(p, pattern))


class CheckpointJournal:
    """Plays runs on a FakeWorkspace and records them in a
    MemoryCheckpointStore as the capture does (one change per turn)."""

    SID = "ses_1"

    def __init__(self, files: dict[str, str]) -> None:
        self.ws = FakeWorkspace(files)
        self.store = MemoryCheckpointStore()
        self.clock = itertools.count(1000)
        self.ids = (f"restore-{i}" for i in itertools.count(1))

    def restorer(self, workspace: object | None = None) -> Restorer:
        return Restorer(
            self.store,
            workspace or self.ws,  # type: ignore[arg-type]
            clock=lambda: float(next(self.clock)),
            new_id=lambda: next(self.ids),
        )

    async def version(self, text: str | None) -> FileVersion:
        if text is None:
            return FileVersion.absent()
        await self.store.put_text(text)
        return FileVersion.of_text(text)

    async def run(self, run_id: str, turns: dict[int, dict[str, str | None]]) -> None:
        """``turns``: turn -> {path: new text or None (deleted)}."""
        await self.store.begin_run(
            CheckpointRun(self.SID, run_id, self.ws.root, "run", run_id, float(next(self.clock)))
        )
        for turn, edits in sorted(turns.items()):
            files = []
            for path, text in edits.items():
                before = self.ws.files.get(path)
                if text is None:
                    await self.ws.delete(path)
                else:
                    await self.ws.write_text(path, text)
                files.append(FileChange(path, await self.version(before), await self.version(text)))
            await self.store.record(
                CheckpointChange(
                    self.SID,
                    run_id,
                    turn,
                    self.ws.generation,
                    "tool",
                    tuple(files),
                    float(next(self.clock)),
                )
            )

    async def run_ids(self) -> list[str]:
        return [r.run_id for r in await self.store.runs(self.SID)]


class FakeDiagnostics:
    """A DiagnosticsSource answering from a settable list."""

    def __init__(self, diagnostics: Sequence[Diagnostic] = ()) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.generation = 0
        self.calls: list[tuple[Sequence[str] | None, int]] = []
        self.stale = False

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        self.calls.append((paths, min_generation))
        found = [d for d in self.diagnostics if paths is None or d.path in paths]
        return DiagnosticsSnapshot(tuple(found), max(self.generation, min_generation), self.stale)


class SettlingFakeDiagnostics(FakeDiagnostics):
    """A FakeDiagnostics that also offers SettlingDiagnostics and records
    every call in ``log`` ("ensure_open a.py", "wait_idle", "snapshot a.py",
    "environment_changed pyproject.toml"). ``idle`` is what wait_idle
    answers; ``blind`` makes every snapshot one nobody looked at; and
    ``on_environment_changed`` lets a test change what the analyzer sees
    (the install made an import resolvable)."""

    def __init__(
        self, diagnostics: Sequence[Diagnostic] = (), *, sources: Sequence[str] = ()
    ) -> None:
        super().__init__(diagnostics)
        self.log: list[str] = []
        self.idle = True
        self.blind: str | None = None
        self.sources = tuple(sources)
        self.on_environment_changed: Callable[[], None] | None = None
        #: File by file (a large workspace): only opened files are analysed,
        #: and opening a file opens its ``importers`` too.
        self.file_by_file = False
        self.importers: dict[str, list[str]] = {}
        self.opened: set[str] = set()
        #: What snapshot_with answers (None: it cannot tell).
        self.counterfactual: list[Diagnostic] | None = None

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        self.log.append("snapshot " + (" ".join(paths) if paths is not None else "*"))
        snap = await super().snapshot(paths, min_generation=min_generation)
        found = () if self.blind else snap.diagnostics
        if self.file_by_file:
            found = tuple(d for d in found if d.path in self.opened)
        return DiagnosticsSnapshot(
            found, snap.generation, snap.stale, blind=self.blind, sources=self.sources
        )

    async def wait_idle(self, timeout_s: float) -> bool:
        self.log.append("wait_idle")
        return self.idle

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        self.log.append("ensure_open " + " ".join(paths))
        opened: list[str] = []
        for path in paths:
            more = self.importers.get(path, []) if importers and self.file_by_file else []
            for target in [path, *more]:
                if target not in self.opened:
                    self.opened.add(target)
                    opened.append(target)
        return opened

    def release_opened(self) -> Sequence[str]:
        """File by file, every opened file is closed (what the pool does once
        the changes they were opened for are validated)."""
        self.log.append("release_opened")
        if not self.file_by_file:
            return ()
        closed, self.opened = sorted(self.opened), set()
        return closed

    async def snapshot_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot | None:
        """What the analyzer would say with ``texts`` shown: ``counterfactual``
        (a test sets it), limited to ``paths``; None when it is unset."""
        self.log.append("snapshot_with " + " ".join(sorted(texts)) + " -> " + " ".join(paths))
        if self.counterfactual is None:
            return None
        found = tuple(d for d in self.counterfactual if d.path in paths)
        return DiagnosticsSnapshot(found, self.generation, sources=self.sources)

    async def environment_changed(self, paths: Sequence[str]) -> None:
        self.log.append("environment_changed " + " ".join(paths))
        if self.on_environment_changed is not None:
            self.on_environment_changed()


class RaisingGate:
    """A gate whose check raises (a bug in a gate)."""

    name = "broken"

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: Any) -> Any:
        raise RuntimeError("the gate's analyzer connection broke")


class SlowGate:
    """A gate that works for ``seconds`` (on the virtual clock) and passes."""

    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: Any) -> Any:
        from rein.harness.gates import GateOutcome

        await anyio.sleep(self.seconds)
        return GateOutcome(detail=f"worked {self.seconds:g} s")


class FakeApprover:
    """Answers every request with ``answer`` (an ApprovalAnswer says to
    remember the offered rules)."""

    def __init__(self, answer: bool | ApprovalAnswer = True) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        self.requests.append(request)
        return self.answer


class FakeUserChannel:
    def __init__(self, answers: Sequence[str | None] = ()) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None


# ------------------------------------------------------------------ events


class EventLog:
    """A listener that keeps every event; helpers to query them."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, type_: str) -> list[Any]:
        return [e for e in self.events if e.type == type_]


def assert_well_formed(types: Sequence[str]) -> None:
    """Every *_start has its *_end, properly nested for agent/run/turn/message."""
    open_counts: dict[str, int] = {}
    ends = {"gate_result": "gate_end"}
    for t in (ends.get(t, t) for t in types):
        if t.endswith("_start") and t != "follow_up_started":
            key = t[: -len("_start")]
            open_counts[key] = open_counts.get(key, 0) + 1
        elif t.endswith("_end"):
            key = t[: -len("_end")]
            assert open_counts.get(key, 0) > 0, f"{t} without a matching start in {types}"
            open_counts[key] -= 1
    assert all(v == 0 for v in open_counts.values()), f"unclosed: {open_counts} in {types}"


# ------------------------------------------------------------ gates support


class FakeCommandRunner:
    """A CommandRunner answering from a dict command -> (exit_code, output);
    ``gate`` (an anyio.Event) holds every run until set, to test overlap."""

    def __init__(self, results: dict[str, tuple[int, str]] | None = None) -> None:
        from rein.harness.ports import CommandResult

        self._result_type = CommandResult
        self.results = dict(results or {})
        self.calls: list[str] = []
        self.running = 0
        self.max_running = 0
        self.gate: anyio.Event | None = None

    async def run(self, command: str, *, timeout_s: float = 600.0):  # type: ignore[no-untyped-def]
        self.calls.append(command)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            else:
                await anyio.lowlevel.checkpoint()
        finally:
            self.running -= 1
        code, output = self.results.get(command, (0, ""))
        return self._result_type(exit_code=code, output=output)


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
        with self.log.attributing_processes():
            self.workspace.files[args.path] = args.content
            self.log.record(self.workspace._mutate((args.path,), "external"))
        return ToolResult(f"the command wrote {args.path}")


# ------------------------------------------------------------ tool calls


class ToolCallRecorder:
    """Builds the :class:`ToolContext` a tool sees in a run, recording its
    progress updates; ``record`` is the record of one run, active while a
    call runs (so a TrackedWorkspace counts the calls' changes in it).
    ``run(tool, **arguments)`` validates like the loop does and lets
    ToolError propagate (assert it with ``pytest.raises``)."""

    def __init__(self, env: Any, *, on_update: Callable[[str, str], None] | None = None) -> None:
        self.env = env
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
        )

    async def run(self, tool: Tool[Any], **arguments: Any) -> ToolResult:
        args = tool.args_model.model_validate(arguments)
        with recording(self.record):
            result = await tool.execute(args, self.context(tool.name))
        return result if isinstance(result, ToolResult) else ToolResult(str(result))

    def output(self) -> str:
        return "".join(text for text, kind in self.updates if kind == "output")


class FailingApprover:
    """An Approver whose client is gone: ``confirm`` raises."""

    def __init__(self, message: str = "the client went away") -> None:
        self.message = message
        self.requests: list[ApprovalRequest] = []

    async def confirm(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        raise ConnectionError(self.message)


class MemoryPersistence:
    """A Persistence that records what an agent asked it to keep."""

    def __init__(self) -> None:
        from rein.harness.messages import Message

        self.committed: list[Message] = []
        self.queued: list[Message] = []
        self.replaced: list[tuple[int, Message]] = []
        self.rewrites = 0
        self.checkpoints = 0

    def append(self, message) -> None:  # type: ignore[no-untyped-def]
        self.queued.append(message)

    def replace(self, index: int, message) -> None:  # type: ignore[no-untyped-def]
        self.replaced.append((index, message))
        if index < len(self.committed):
            self.committed[index] = message

    async def checkpoint(self) -> None:
        self.checkpoints += 1
        self.committed.extend(self.queued)
        self.queued = []

    async def rewrite(self, messages) -> None:  # type: ignore[no-untyped-def]
        self.rewrites += 1
        self.committed = list(messages)
        self.queued = []


# ----------------------------------------------------------------- preview


class FakePreviewProcess:
    """A PreviewProcess the test drives: ``print(*lines)`` adds output,
    ``exit(code)`` ends it. ``stop`` ends it like SIGTERM (-15), ``kill``
    like SIGKILL (-9); signals go to the factory's ``on_signal``."""

    def __init__(self, factory: FakePreviewFactory, pid: int, command: str) -> None:
        self.factory = factory
        self._pid = pid
        self.command = command
        self._send, self._receive = anyio.create_memory_object_stream[str](10_000)
        self._exit_code: int | None = None
        self.exited = anyio.Event()
        self.signals: list[int] = []

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def exit_code(self) -> int | None:
        return self._exit_code

    def print(self, *lines: str) -> None:
        for line in lines:
            self._send.send_nowait(line)

    def exit(self, code: int) -> None:
        if self._exit_code is None:
            self._exit_code = code
            self._send.close()
            self.exited.set()

    async def read_line(self) -> str | None:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            return None

    async def wait(self) -> int:
        await self.exited.wait()
        assert self._exit_code is not None
        return self._exit_code

    def send_signal(self, signum: int) -> None:
        with self.factory.operation("signal", self.pid):
            self.signals.append(signum)
            if self.factory.on_signal is not None:
                self.factory.on_signal(self, signum)

    async def stop(self, grace_s: float) -> None:
        with self.factory.operation("stop", self.pid):
            await anyio.lowlevel.checkpoint()
            self.exit(-15)

    def kill(self) -> None:
        self.exit(-9)


class FakePreviewFactory:
    """A PreviewProcessFactory of FakePreviewProcesses.

    ``on_start(process)`` runs right after each start (print "ready", or
    ``exit(1)``); ``on_signal(process, signum)`` on each signal. While
    ``hold`` (an anyio.Event) is not set, every start waits for it and
    ``holding`` is set. ``operations`` records ``(op, pid, began, ended)``
    on the event loop's clock; ``max_active`` is the most operations that
    ever overlapped. ``http_ready`` answers False for the first
    ``http_fails`` calls, then True."""

    def __init__(
        self,
        on_start: Callable[[FakePreviewProcess], None] | None = None,
        on_signal: Callable[[FakePreviewProcess, int], None] | None = None,
    ) -> None:
        self.on_start = on_start
        self.on_signal = on_signal
        self.processes: list[FakePreviewProcess] = []
        self.operations: list[tuple[str, int, float, float]] = []
        self.active = 0
        self.max_active = 0
        self.hold: anyio.Event | None = None
        self.holding = anyio.Event()
        self.http_fails = 0
        self.http_calls: list[str] = []
        self.fail_next: Exception | None = None

    def operation(self, name: str, pid: int) -> _PreviewOperation:
        return _PreviewOperation(self, name, pid)

    async def start(self, command: str) -> FakePreviewProcess:
        if self.fail_next is not None:
            exc, self.fail_next = self.fail_next, None
            raise exc
        pid = 4000 + len(self.processes)
        with self.operation("start", pid):
            if self.hold is not None and not self.hold.is_set():
                self.holding.set()
                await self.hold.wait()
            else:
                await anyio.lowlevel.checkpoint()
            process = FakePreviewProcess(self, pid, command)
            self.processes.append(process)
            if self.on_start is not None:
                self.on_start(process)
        return process

    async def http_ready(self, url: str, timeout_s: float) -> bool:
        self.http_calls.append(url)
        await anyio.lowlevel.checkpoint()
        return len(self.http_calls) > self.http_fails

    def ops(self, name: str | None = None) -> list[tuple[str, int, float, float]]:
        return [op for op in self.operations if name is None or op[0] == name]


class _PreviewOperation:
    """Records one operation of a FakePreviewFactory and counts overlaps."""

    def __init__(self, factory: FakePreviewFactory, name: str, pid: int) -> None:
        self.factory, self.name, self.pid = factory, name, pid
        self.began = 0.0

    def __enter__(self) -> None:
        self.began = anyio.current_time()
        self.factory.active += 1
        self.factory.max_active = max(self.factory.max_active, self.factory.active)

    def __exit__(self, *exc: object) -> None:
        self.factory.active -= 1
        self.factory.operations.append((self.name, self.pid, self.began, anyio.current_time()))


class WaitingEventLog(EventLog):
    """An EventLog a test can wait on: ``wait_for(predicate)`` returns once
    ``predicate(events)`` holds, failing after ``limit_s``."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = anyio.Event()

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(
        self, predicate: Callable[[list[Event]], bool], limit_s: float = 5.0
    ) -> None:
        with anyio.fail_after(limit_s):
            while not predicate(self.events):
                await self._changed.wait()


class LineAnalyzer:
    """A tiny analyzer over a FakeWorkspace: every line containing ERROR is an
    error diagnostic. It publishes after each mutation, like a real one."""

    def __init__(self, workspace: FakeWorkspace, coordinator_ref: list) -> None:
        self.workspace = workspace
        self.source = FakeDiagnostics()
        self.coordinator_ref = coordinator_ref

    def analyze(self) -> None:
        diags = []
        for path, text in sorted(self.workspace.files.items()):
            for i, line in enumerate(text.splitlines()):
                if "ERROR" in line:
                    diags.append(
                        Diagnostic(
                            path=path,
                            line=i,
                            character=line.index("ERROR"),
                            code="E1",
                            source="line",
                            message=f"bad token: {line.strip()}",
                        )
                    )
        self.source.diagnostics = diags

    def on_mutation(self, mutation: Mutation) -> None:
        self.analyze()
        self.coordinator_ref[0].notify_diagnostics_changed(list(mutation.paths))


# ------------------------------------------------------------ providers


class SleepLog:
    """Records the backoff waits instead of sleeping them."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await anyio.lowlevel.checkpoint()


class ChunkedStream(httpx.AsyncByteStream):
    """An HTTP response body arriving in the given chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


# ------------------------------------------------------------------ editor


_BOM = b"\xef\xbb\xbf"


def _offset(text: str, pos: lsp.Position) -> int:
    lines = text.split("\n")
    if pos.line >= len(lines):
        return len(text)
    return sum(len(line) + 1 for line in lines[: pos.line]) + min(
        pos.character, len(lines[pos.line])
    )


class Editor:
    """The editor, played by an LSP test client: it keeps documents, applies
    workspace/applyEdit to them and to disk, runs an analyzer pool on them,
    answers rein/diagnostics with its diagnostics and sends
    rein/diagnosticsChanged when they change. :func:`wire` registers its
    handlers on the client."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.docs: dict[str, tuple[int, str]] = {}
        self.generation = 0
        self.pool: AnalyzerPool | None = None
        self.confirm_answer = True
        #: Sent as the answer's ``remember`` ("always allow") when set.
        self.confirm_remember: Any = None
        #: Sent as the answer's ``prefix`` (keep the wider rules) when set.
        self.confirm_prefix: bool | None = None
        self.ask_answer: str | None = "yes"
        self.confirms: list[dict[str, Any]] = []
        #: The params of every rein/askUser.
        self.asks: list[dict[str, Any]] = []
        self.applied: list[lsp.ApplyWorkspaceEditParams] = []
        #: rel -> whether the file it loaded had a byte order mark.
        self.boms: dict[str, bool] = {}
        self.refused: list[str] = []
        #: (rel, text): the person types this just before the next edit arrives
        self.type_before_next_apply: tuple[str, str] | None = None
        self.events: list[dict[str, Any]] = []
        self.saved: list[str] = []
        self.event_arrived = asyncio.Event()
        #: Requests of these methods are never answered (an editor that
        #: hangs); each one that arrived is counted in ``held``.
        self.silent: set[str] = set()
        self.held: dict[str, int] = {}
        #: ... and how many of those the server cancelled ($/cancelRequest).
        self.cancelled: dict[str, int] = {}
        #: Set when a request of a silent method arrives.
        self.request_held = asyncio.Event()

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def rel(self, uri: str) -> str:
        return Path(uri.removeprefix("file://")).relative_to(self.root).as_posix()

    # ------------------------------------------------------------- documents

    def open(self, rel: str) -> None:
        text = (self.root / rel).read_text()
        self.docs[rel] = (1, text)
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(uri=self.uri(rel), language_id="python", version=1, text=text)
            )
        )

    def type(self, rel: str, text: str) -> None:
        """The person edits an open buffer (not saved)."""
        version = self.docs[rel][0] + 1
        self.docs[rel] = (version, text)
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=self.uri(rel), version=version
                ),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def save(self, rel: str) -> None:
        (self.root / rel).write_text(self.docs[rel][1])
        self._analyze(rel)
        self.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=self.uri(rel)))
        )

    def _analyze(self, *rels: str) -> None:
        self.generation += 1
        if self.pool is not None:
            self.pool.on_mutation(Mutation(self.generation, tuple(rels)))

    # --------------------------------------------------------------- handlers

    async def hold(self, method: str) -> None:
        """Never answer this request when ``method`` is silent (the server
        gives up on it; its cancellation ends the wait)."""
        if method not in self.silent:
            return
        self.held[method] = self.held.get(method, 0) + 1
        self.request_held.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled[method] = self.cancelled.get(method, 0) + 1
            raise

    def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        self.applied.append(params)
        if self.type_before_next_apply is not None:
            rel, text = self.type_before_next_apply
            self.type_before_next_apply = None
            self.type(rel, text)
        changed: list[str] = []
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.CreateFile):
                path = self.root / self.rel(change.uri)
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.exists():
                    path.write_text("")
            elif isinstance(change, lsp.DeleteFile):
                rel = self.rel(change.uri)
                (self.root / rel).unlink()
                self.docs.pop(rel, None)
                changed.append(rel)
            elif isinstance(change, lsp.RenameFile):
                old, new = self.rel(change.old_uri), self.rel(change.new_uri)
                (self.root / new).parent.mkdir(parents=True, exist_ok=True)  # as VS Code does
                (self.root / old).rename(self.root / new)
                changed += [old, new]
            elif isinstance(change, lsp.TextDocumentEdit):
                rel = self.rel(change.text_document.uri)
                if rel in self.docs:
                    version, text = self.docs[rel]
                    if (
                        change.text_document.version is not None
                        and change.text_document.version != version
                    ):
                        self.refused.append(rel)
                        return lsp.ApplyWorkspaceEditResult(
                            applied=False,
                            failure_reason=f"{rel} is at version {version}, not {change.text_document.version}",
                        )
                else:
                    data = (self.root / rel).read_bytes() if (self.root / rel).exists() else b""
                    # an editor opens any file (a binary one shows replacement
                    # characters); as VS Code, it keeps a byte order mark out
                    # of the text and puts it back when it saves
                    self.boms[rel] = data.startswith(_BOM)
                    version, text = 0, data.removeprefix(_BOM).decode("utf-8", "replace")
                for edit in change.edits:
                    start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
                    text = text[:start] + edit.new_text + text[end:]
                bom = _BOM if self.boms.get(rel) else b""
                (self.root / rel).write_bytes(bom + text.encode("utf-8"))
                if rel in self.docs:
                    self.docs[rel] = (version + 1, text)
                    self.client.text_document_did_change(
                        lsp.DidChangeTextDocumentParams(
                            text_document=lsp.VersionedTextDocumentIdentifier(
                                uri=self.uri(rel), version=version + 1
                            ),
                            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    )
                changed.append(rel)
        if changed:
            self._analyze(*changed)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    async def diagnostics(self, params: dict[str, Any]) -> dict[str, Any]:
        snap = await self.pool.snapshot() if self.pool else None
        wanted = params.get("uris")
        items: dict[str, list[dict[str, Any]]] = {}
        for d in snap.diagnostics if snap else ():
            uri = self.uri(d.path)
            if wanted is not None and uri not in wanted:
                continue
            items.setdefault(uri, []).append(
                {
                    "range": {
                        "start": {"line": d.line, "character": d.character},
                        "end": {"line": d.end_line or d.line, "character": d.end_character or 0},
                    },
                    "severity": d.severity,
                    "code": d.code,
                    "source": d.source,
                    "message": d.message,
                }
            )
        for uri in wanted or []:
            items.setdefault(uri, [])
        return {"items": [{"uri": u, "diagnostics": ds} for u, ds in items.items()]}

    def diagnostics_changed(self, paths: list[str]) -> None:
        self.client.protocol.notify(
            "rein/diagnosticsChanged", {"uris": [self.uri(p) for p in paths]}
        )

    async def wait_event(
        self, predicate: Any, limit_s: float = 20.0, *, after: int = 0
    ) -> dict[str, Any]:
        """The first event from index ``after`` on that ``predicate`` accepts."""

        async def find() -> dict[str, Any]:
            index = after
            while True:
                while index < len(self.events):
                    if predicate(self.events[index]):
                        return self.events[index]
                    index += 1
                self.event_arrived.clear()
                await self.event_arrived.wait()

        return await asyncio.wait_for(find(), limit_s)

    def event_types(self, session_id: str | None = None) -> list[str]:
        return [
            e["event"]["type"]
            for e in self.events
            if session_id is None or e["sessionId"] == session_id
        ]


def paired(messages: list[dict[str, Any]]) -> bool:
    """Every tool call in a JSON transcript has exactly one result."""
    calls = [
        p["id"]
        for m in messages
        if m["role"] == "assistant"
        for p in m["content"]
        if p["type"] == "tool_call"
    ]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return sorted(calls) == sorted(results)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_dict_converter)
    register_lsp_features(client)
    return client


def wire(ed: Editor) -> None:
    """Register the editor's handlers on its client."""
    lsp_client = ed.client

    @lsp_client.feature(lsp.WORKSPACE_APPLY_EDIT)
    async def apply_edit(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        await ed.hold(lsp.WORKSPACE_APPLY_EDIT)
        return ed.apply_edit(params)

    @lsp_client.feature("rein/diagnostics")
    async def diagnostics(params: dict[str, Any]) -> dict[str, Any]:
        await ed.hold("rein/diagnostics")
        return await ed.diagnostics(params)

    @lsp_client.feature("rein/confirm")
    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        ed.confirms.append(params)
        await ed.hold("rein/confirm")
        answer: dict[str, Any] = {"approved": ed.confirm_answer}
        if ed.confirm_remember is not None:
            answer["remember"] = ed.confirm_remember
        if ed.confirm_prefix is not None:
            answer["prefix"] = ed.confirm_prefix
        return answer

    @lsp_client.feature("rein/askUser")
    async def ask_user(params: dict[str, Any]) -> dict[str, Any]:
        ed.asks.append(params)
        await ed.hold("rein/askUser")
        return {"answer": ed.ask_answer}

    @lsp_client.feature("rein/saveDocuments")
    async def save_documents(params: dict[str, Any]) -> dict[str, Any]:
        await ed.hold("rein/saveDocuments")
        # Applied edits are already on disk here; record the request and
        # answer with didSave like an editor that saved.
        for uri in params["uris"]:
            ed.saved.append(ed.rel(uri))
            lsp_client.text_document_did_save(
                lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
            )
        return {"saved": params["uris"]}

    @lsp_client.feature("rein/event")
    def on_event(params: dict[str, Any]) -> None:
        ed.events.append(params)
        ed.event_arrived.set()


# ------------------------------------------------------------ virtual time

_T = TypeVar("_T")


class _JumpingSelector(selectors.DefaultSelector):
    """Polls for real I/O; when there is none and the loop would wait for a
    timer, moves the loop's clock to that timer instead of waiting."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:  # no timer at all: only real I/O can wake the loop
            return super().select(None)
        ready = super().select(0)
        if ready or timeout <= 0:
            return ready
        self._loop.now += timeout
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on a fake clock: time starts at 0 and, whenever every
    task waits, jumps to the next timer. Sleeps and timeouts take no wall
    time and happen in exact order. For in-memory tests only: a thread or a
    real process does not hold the clock back."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self.now


def run_in_virtual_time(main: Callable[[], Awaitable[_T]]) -> _T:
    """Run ``main()`` on a :class:`VirtualTimeLoop`. ``time.monotonic`` reads
    the same fake clock meanwhile: the harness measures idle time and tool
    heartbeats with it. Bound waits with ``anyio.fail_after``: a stuck test
    then jumps to its deadline and fails at once."""

    async def run() -> _T:
        return await main()

    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        real_monotonic = time.monotonic
        time.monotonic = runner.get_loop().time
        try:
            return runner.run(run())
        finally:
            time.monotonic = real_monotonic


def plan_turn(*steps: tuple[str, str]) -> dict[str, Any]:
    """A planner's script turn: ``submit_plan`` with (id, description) steps."""
    return {
        "tool_calls": [
            {
                "name": "submit_plan",
                "arguments": {"steps": [{"id": i, "description": d} for i, d in steps]},
            }
        ]
    }


def complete_turn(step: str, success: bool = True, summary: str = "done") -> dict[str, Any]:
    """An executor's script turn: ``complete_step``."""
    return {
        "tool_calls": [
            {
                "name": "complete_step",
                "arguments": {"step_id": step, "success": success, "summary": summary},
            }
        ]
    }


def analyzed_env(
    files: Mapping[str, str] | None = None, quiet_ms: int = 10
) -> tuple[ToolEnvironment, DiagnosticsCoordinator, FakeWorkspace]:
    """A tracked fake workspace (holding ``files``, already analyzed) whose
    :class:`LineAnalyzer` flags every line holding "ERROR", with the
    diagnostics coordinator the gates read."""
    workspace = FakeWorkspace(dict(files or {}))
    log = MutationLog()
    ref: list[Any] = [None]
    analyzer = LineAnalyzer(workspace, ref)
    analyzer.analyze()
    coordinator = DiagnosticsCoordinator(analyzer.source, quiet_ms=quiet_ms, max_wait_ms=2000)
    ref[0] = coordinator
    log.subscribe(coordinator.notify_mutation)
    log.subscribe(analyzer.on_mutation)
    env = ToolEnvironment(workspace=TrackedWorkspace(workspace, log), diagnostics=coordinator)
    return env, coordinator, workspace


# ------------------------------------------------------------- checkpoints


class FailingCheckpointStore(MemoryCheckpointStore):
    """A CheckpointStore whose writes fail like a full or broken disk."""

    def __init__(self, message: str = "disk I/O error") -> None:
        super().__init__()
        self.message = message
        self.attempts = 0

    async def put_text(self, text: str) -> str:
        self.attempts += 1
        raise StoreError(self.message)

    async def begin_run(self, run: CheckpointRun) -> None:
        self.attempts += 1
        raise StoreError(self.message)


class HangingCheckpointStore(MemoryCheckpointStore):
    """A CheckpointStore whose writes never return (a disk that hangs):
    they wait on ``release``, which nobody sets unless a test does."""

    def __init__(self) -> None:
        super().__init__()
        self.release = anyio.Event()
        self.waiting = 0

    async def put_text(self, text: str) -> str:
        self.waiting += 1
        await self.release.wait()
        return await super().put_text(text)


class FakeMcpPorts:
    """McpConfigPorts for unit tests: inputs answered from ``answers`` (a
    missing id: None, nobody answered), trust answered by ``trust_answer``;
    every question recorded in ``asked_inputs`` / ``asked_trust``."""

    def __init__(self, answers: Mapping[str, str] | None = None, trust_answer: bool = True) -> None:
        from rein.mcp.trust import MemoryTrustStore

        self.answers = dict(answers or {})
        self.trust_answer = trust_answer
        #: Any TrustStore (a test may put a FileTrustStore here).
        self.trust: Any = MemoryTrustStore()
        self.asked_inputs: list[str] = []
        self.asked_trust: list[str] = []

    async def ask_input(self, spec: Any) -> str | None:
        self.asked_inputs.append(spec.id)
        return self.answers.get(spec.id)

    async def confirm_trust(self, spec: Any) -> bool:
        self.asked_trust.append(spec.command_line())
        return self.trust_answer


class FakeMcpConnection:
    """An MCP server connection for unit tests of the offer and the manager
    (``McpManager(connect=FakeMcpConnection.factory(tools))``): it lists
    ``tools`` ({server: [McpToolInfo]}) and answers every call with the
    arguments echoed. ``starts``: the outcome of each start in order
    (True: it starts, False: it fails; past the list: it starts); a call
    of the tool "crash" fails as a closed connection."""

    def __init__(self, spec: Any, tools: list[Any], starts: list[bool] | None = None) -> None:
        self.spec = spec
        self.tools = tools
        self.closed = False
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._starts = starts if starts is not None else []

    @staticmethod
    def factory(
        tools: Mapping[str, list[Any]], starts: list[bool] | None = None
    ) -> Callable[[Any, Callable[[], None], Callable[[str], None]], Any]:
        shared = starts if starts is not None else []

        def make(
            spec: Any, on_tools_changed: Callable[[], None], on_closed: Callable[[str], None]
        ) -> FakeMcpConnection:
            return FakeMcpConnection(spec, list(tools.get(spec.name, [])), shared)

        return make

    async def start(self, timeout_s: float) -> None:
        if self._starts and not self._starts.pop(0):
            raise RuntimeError("the fake server does not start")

    async def list_tools(self) -> list[Any]:
        return list(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        from rein.mcp.tools import McpCallFailed

        self.calls.append((tool, arguments))
        if tool == "crash":
            self.closed = True
            raise McpCallFailed("closed", "the connection closed")
        return {"content": [{"type": "text", "text": f"{tool} {json.dumps(arguments)}"}]}

    async def stop(self) -> None:
        self.closed = True


class FakeClientChannel:
    """The editor side of ``rein.lsp.channel.ClientChannel`` for unit tests
    of the LSP adapters: ``answers[method]`` is a list of results (or
    exceptions to raise) given in order; every request is recorded."""

    def __init__(self, answers: Mapping[str, list[Any]] | None = None) -> None:
        self.answers = {m: list(a) for m, a in (answers or {}).items()}
        self.requests: list[tuple[str, Any]] = []
        self.unsupported: set[str] = set()

    def supports(self, method: str) -> bool:
        return method not in self.unsupported

    async def request(self, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        answer = self.answers[method].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def fake_session_ports(root: Path, model: Any) -> SessionPorts:
    """A session manager's ports over fakes: a FakeWorkspace at ``root``, no
    diagnostics, commands or questions, every approval granted, and ``model``
    for every run."""
    from rein.session import SessionPorts

    return SessionPorts(
        root=root,
        workspace=FakeWorkspace(root=str(root)),
        diagnostics=FakeDiagnostics(),
        runner=FakeCommandRunner(),
        approver=lambda _id: FakeApprover(),
        user=lambda _id: None,
        model_factory=lambda _config: model,
    )


# ------------------------------------------------------------------ ACP client


class FakeTerminal:
    """One scripted terminal of :class:`FakeAcpClient`. Each
    ``terminal/output`` serves the next chunk of ``chunks`` (the answer is
    everything served so far, as a client's is); once every chunk was
    served the command exits with ``exit_code`` (or ``signal``), unless it
    ``hangs``: then it runs until ``terminal/kill``."""

    def __init__(
        self,
        chunks: Sequence[str] = (),
        *,
        exit_code: int | None = 0,
        signal: str | None = None,
        hangs: bool = False,
    ) -> None:
        self.chunks = list(chunks)
        self.exit_code = exit_code
        self.signal = signal
        self.hangs = hangs
        self.served = 0
        self.killed = False
        self.released = False
        self._exited: anyio.Event | None = None

    @property
    def output(self) -> str:
        return "".join(self.chunks[: self.served])

    @property
    def exited(self) -> anyio.Event:
        if self._exited is None:
            self._exited = anyio.Event()
            self._check_exit()
        return self._exited

    def _check_exit(self) -> None:
        if self.killed or (self.served >= len(self.chunks) and not self.hangs):
            self.exited.set()

    def serve(self) -> None:
        self.served = min(self.served + 1, len(self.chunks))
        self._check_exit()

    def kill(self) -> None:
        if not self.exited.is_set():
            self.killed = True
            self.exit_code, self.signal = None, "SIGKILL"
        self.exited.set()

    def status(self) -> Any:
        if not self.exited.is_set():
            return None
        return TerminalExitStatus(exit_code=self.exit_code, signal=self.signal)


def permission_answer(answer: str, options: Sequence[Any]) -> RequestPermissionResponse:
    """The person's ``answer`` to a permission request: "cancelled", or the
    id or else the kind of the option they select (the first of that kind;
    an ``AssertionError`` when there is none)."""
    if answer == "cancelled":
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    option = next((o for o in options if o.option_id == answer), None)
    option = option or next((o for o in options if o.kind == answer), None)
    if option is None:
        raise AssertionError(f"no {answer!r} option among {[o.kind for o in options]}")
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
    )


class FakeAcpClient:
    """The editor's side of an ACP connection, for unit tests of the ports
    in ``rein.acp``: implements the requests they send (``fs/*``,
    ``terminal/*``, ``session/request_permission``, elicitation,
    ``session/update``) and records each as ``(method, params)`` in
    ``calls``.

    ``buffers`` maps absolute paths to the editor's (unsaved) texts; a read
    of any other path reads the disk, a write goes into ``buffers`` only
    (``save(path)`` is the person saving it). ``terminals`` are handed out in
    order by ``terminal/create``. ``permissions`` are the person's answers
    in order: an option kind ("allow_once", "allow_always", "reject_once",
    "reject_always", the option of that kind is selected) or "cancelled".
    ``fail[method]`` is raised by that method; a method in ``hang`` never
    answers. ``answered[method]`` is set after each answer."""

    def __init__(
        self,
        *,
        buffers: Mapping[str, str] | None = None,
        terminals: Sequence[FakeTerminal] = (),
        permissions: Sequence[str] = (),
        fail: Mapping[str, BaseException] | None = None,
        hang: Sequence[str] = (),
    ) -> None:
        self.buffers = dict(buffers or {})
        #: path -> whether the file it read from disk had a byte order mark.
        self.boms: dict[str, bool] = {}
        self.terminal_script = list(terminals)
        self.terminals: dict[str, FakeTerminal] = {}
        self.permissions = list(permissions)
        self.fail = dict(fail or {})
        self.hang = set(hang)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.updates: list[tuple[str, Any]] = []

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def params(self, method: str) -> list[dict[str, Any]]:
        return [params for m, params in self.calls if m == method]

    def save(self, path: str) -> None:
        """The person saves the editor's buffer of ``path`` to disk."""
        bom = _BOM if self.boms.get(path) else b""
        Path(path).write_bytes(bom + self.buffers[path].encode("utf-8"))

    async def _enter(self, method: str, **params: Any) -> None:
        self.calls.append((method, params))
        if method in self.hang:
            await anyio.sleep_forever()
        if method in self.fail:
            raise self.fail[method]

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        await self._enter("fs/read_text_file", session_id=session_id, path=path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            # As an editor loads a file: line ends as they are, a byte order
            # mark kept out of the text (and put back by ``save``).
            data = await anyio.Path(path).read_bytes()
            self.boms[path] = data.startswith(_BOM)
            return ReadTextFileResponse(content=data.removeprefix(_BOM).decode("utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        await self._enter("fs/write_text_file", session_id=session_id, path=path, content=content)
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> Any:
        await self._enter(
            "terminal/create",
            session_id=session_id,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = self.terminal_script.pop(0)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/output", session_id=session_id, terminal_id=terminal_id)
        terminal = self.terminals[terminal_id]
        terminal.serve()
        return TerminalOutputResponse(
            output=terminal.output, truncated=False, exit_status=terminal.status()
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/wait_for_exit", session_id=session_id, terminal_id=terminal_id)
        terminal = self.terminals[terminal_id]
        await terminal.exited.wait()
        return WaitForTerminalExitResponse(exit_code=terminal.exit_code, signal=terminal.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/kill", session_id=session_id, terminal_id=terminal_id)
        self.terminals[terminal_id].kill()
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._enter("terminal/release", session_id=session_id, terminal_id=terminal_id)
        terminal = self.terminals[terminal_id]
        terminal.kill()  # a released terminal's command ends (the ACP spec)
        terminal.released = True
        return None

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        await self._enter(
            "session/request_permission",
            session_id=session_id,
            tool_call=tool_call,
            options=options,
        )
        return permission_answer(self.permissions.pop(0), options)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        await self._enter("elicitation/create", message=message, mode=mode)
        raise AssertionError("Rein offers no elicitation in protocol version 1")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.calls.append(("session/update", {"session_id": session_id, "update": update}))
        self.updates.append((session_id, update))


class FakeClientLink:
    """A :class:`rein.acp.context.ClientLink` over a :class:`FakeAcpClient`:
    ``fs`` ("read", "write"), ``terminal`` and ``elicitation`` say what the
    client offered in ``initialize``; ``initialized=False`` is the time
    before it (no capabilities at all)."""

    def __init__(
        self,
        client: FakeAcpClient,
        *,
        fs: Sequence[str] = ("read", "write"),
        terminal: bool = True,
        elicitation: bool = False,
        initialized: bool = True,
    ) -> None:
        self.client = client
        self.capabilities: Any = (
            ClientCapabilities.model_validate(
                {
                    "fs": {"readTextFile": "read" in fs, "writeTextFile": "write" in fs},
                    "terminal": terminal,
                    **({"elicitation": {"form": {}}} if elicitation else {}),
                }
            )
            if initialized
            else None
        )

    @property
    def conn(self) -> Any:
        return self.client


class WatchedAcpClient(FakeAcpClient):
    """A :class:`FakeAcpClient` a test can wait on: :meth:`wait_update`
    returns the first ``session/update`` that matches (bounded), and
    :meth:`texts` joins the agent's message chunks. A method in ``held``
    answers only after :meth:`release` (the person is slow to decide)."""

    def __init__(self, *, held: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._arrived = asyncio.Condition()
        self._held = {method: asyncio.Event() for method in held}

    def release(self, method: str) -> None:
        self._held[method].set()

    async def _enter(self, method: str, **params: Any) -> None:
        await super()._enter(method, **params)
        if method in self._held:
            await self._held[method].wait()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        async with self._arrived:
            self._arrived.notify_all()

    async def wait_update(self, match: Callable[[Any], bool], timeout_s: float = 10.0) -> Any:
        async with self._arrived:
            await asyncio.wait_for(
                self._arrived.wait_for(lambda: any(match(u) for _, u in self.updates)),
                timeout_s,
            )
        return next(u for _, u in self.updates if match(u))

    def of(self, kind: str) -> list[Any]:
        """The updates of one ``sessionUpdate`` kind, in order."""
        return [u for _, u in self.updates if u.session_update == kind]

    def texts(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


# ------------------------------------------------------- editor language models


class LmReply(BaseModel):
    """One scripted answer of :class:`FakeLmHost` to ``rein/lm/chat``:
    the deltas it streams, then its result, or an error instead of a
    result (``error_code``), or no answer at all until cancelled (``hang``)."""

    deltas: list[dict[str, Any]] = Field(default_factory=list)
    stop_reason: str = "stop"
    error: str | None = None
    error_code: int | None = None
    hang: bool = False


class FakeLmHost:
    """The editor's side of the vscode-lm provider (:class:`rein.providers.
    vscode_lm.LmHost`): answers each ``rein/lm/chat`` with the next scripted
    :class:`LmReply` whatever it was asked, records the params, and sets
    :attr:`cancelled` when a call is cancelled."""

    def __init__(self, replies: Sequence[LmReply]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.cancelled = asyncio.Event()
        #: Set once a hanging reply has sent its deltas.
        self.hanging = asyncio.Event()

    async def chat(
        self, params: dict[str, Any], on_delta: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        from rein.providers.vscode_lm import LmRequestError

        self.requests.append(params)
        if not self.replies:
            raise LmRequestError(-32603, "the fake editor has no scripted reply left")
        reply = self.replies.pop(0)
        for delta in reply.deltas:
            on_delta({"requestId": params["requestId"], **delta})
            await asyncio.sleep(0)  # let the model read it, as a real stream would
        if reply.error_code is not None:
            raise LmRequestError(reply.error_code, reply.error or "error")
        if reply.hang:
            self.hanging.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        result: dict[str, Any] = {"stopReason": reply.stop_reason, "deltas": len(reply.deltas)}
        if reply.error is not None:
            result["error"] = reply.error
        return result


class FakeLmProtocol:
    """The part of a language server's protocol :class:`rein.lsp.lm.
    EditorLmHost` uses, with the client played by the test: each request is
    kept (method, params, its future) for the test to answer; notifications
    are recorded."""

    def __init__(self) -> None:
        import concurrent.futures

        self.requests: list[tuple[str, Any, concurrent.futures.Future[Any]]] = []
        self.notifications: list[tuple[str, Any]] = []
        self.sent = asyncio.Event()

    def send_request(self, method: str, params: Any, msg_id: str | None = None) -> Any:
        import concurrent.futures

        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.requests.append((method, params, future))
        self.sent.set()
        return future

    def notify(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))


class FakeLmServer:
    """A stand-in for the language server behind :class:`EditorLmHost`."""

    def __init__(self) -> None:
        self.protocol = FakeLmProtocol()


def wire_lm(ed: Editor, host: FakeLmHost, models: list[dict[str, Any]] | None = None) -> None:
    """The editor's language models on its client: ``rein/lm/chat`` played
    by ``host`` (its deltas sent as ``rein/lm/delta``, its errors as error
    answers) and ``rein/lm/models`` answering ``models`` (None: the client
    has no such method)."""
    from pygls.exceptions import JsonRpcException

    from rein.providers.vscode_lm import LmRequestError

    lsp_client = ed.client

    @lsp_client.feature("rein/lm/chat")
    async def chat(params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await host.chat(
                params, lambda delta: lsp_client.protocol.notify("rein/lm/delta", delta)
            )
        except LmRequestError as exc:
            raise JsonRpcException(code=exc.code, message=str(exc)) from exc

    if models is not None:

        @lsp_client.feature("rein/lm/models")
        def lm_models(params: dict[str, Any]) -> dict[str, Any]:
            return {"models": models}
