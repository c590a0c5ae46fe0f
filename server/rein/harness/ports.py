"""The Protocols the core depends on. Adapters (providers/, lsp/, headless/,
store/) implement them; tests use the fakes in tests/fakes/.

The core never imports pygls, httpx or sqlite3: everything foreign comes in
through these ports.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from rein.harness.approval_ports import (
    ApprovalAnswer,
    ApprovalClass,
    ApprovalRequest,
    ApprovalRule,
    ApprovalRuleBook,
    ApprovalRuleKind,
    Approver,
    RememberScope,
    UserChannel,
)
from rein.harness.diagnostics_ports import (
    AnsweringDiagnostics,
    CounterfactualDiagnostics,
    Diagnostic,
    DiagnosticsSnapshot,
    DiagnosticsSource,
    DiskDiagnostics,
    DiskErrors,
    ReleasingDiagnostics,
    SettlingDiagnostics,
)
from rein.harness.messages import AssistantMessage, Message
from rein.harness.navigation_ports import Navigator
from rein.harness.process_ports import (
    CommandExecutor,
    CommandResult,
    CommandRunner,
    CommandSandbox,
    PreviewProcess,
    PreviewProcessFactory,
    ProcessSandbox,
    SandboxedStart,
)

__all__ = [
    "AfterChange",
    "AnnouncesSending",
    "AnnouncingWorkspace",
    "AnsweringDiagnostics",
    "AppliedChange",
    "ApprovalAnswer",
    "ApprovalClass",
    "ApprovalRequest",
    "ApprovalRule",
    "ApprovalRuleBook",
    "ApprovalRuleKind",
    "Approver",
    "BeforeChange",
    "ChangeAnnouncer",
    "CommandAhead",
    "CommandExecutor",
    "CommandResult",
    "CommandRunner",
    "CommandSandbox",
    "CounterfactualDiagnostics",
    "Diagnostic",
    "DiagnosticsSnapshot",
    "DiagnosticsSource",
    "DiskDiagnostics",
    "DiskErrors",
    "FileContent",
    "FileUpdate",
    "Model",
    "ModelDelta",
    "ModelOptions",
    "ModelRequest",
    "MultiFileWorkspace",
    "Mutation",
    "MutationListening",
    "MutationOrigin",
    "Navigator",
    "Persistence",
    "PreviewProcess",
    "PreviewProcessFactory",
    "ProcessSandbox",
    "ReleasingDiagnostics",
    "RememberScope",
    "RetryWait",
    "SandboxedStart",
    "SendingListener",
    "SettlingDiagnostics",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolSchema",
    "TurnDone",
    "UserChannel",
    "Workspace",
    "Writes",
]


# --------------------------------------------------------------------------- model


class ToolSchema(BaseModel):
    """What the model sees of a tool: its name, description and JSON Schema."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    description: str
    parameters: dict[str, Any]


ToolChoice = Literal["auto", "required", "none"] | str


class ModelOptions(BaseModel):
    """Per-request options. ``None`` means "the provider's configured default"."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    #: "auto" | "required" | "none" | the name of one tool.
    tool_choice: ToolChoice | None = None


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One assistant turn to produce.

    ``messages`` is the transcript as it is to be sent (after
    ``transform_context``). It is not copied: a model that keeps requests
    must copy what it keeps.
    """

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSchema]
    options: ModelOptions = field(default_factory=ModelOptions)


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call: the first for an index carries id and name."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""


@dataclass(frozen=True, slots=True)
class TurnDone:
    """The last item of every stream: the whole assistant message with usage."""

    message: AssistantMessage


@dataclass(frozen=True, slots=True)
class RetryWait:
    """The model's request failed before any reply and is sent again after
    ``wait_s`` seconds: yielded as the wait begins (never after it), so the
    harness tells the person (a ``model_retry`` event) and can end the wait
    early (an abort, a steer) by closing the stream. Not a part of the reply.
    A model without retries never yields one."""

    #: Who failed: the provider's label (``openai (https://api.openai.com/v1)``).
    provider: str
    #: What failed, as the error says it (never a key or a header's value).
    reason: str
    #: This retry's number: 1 for the second attempt.
    attempt: int
    #: The retries the model may make (``rein.model.maxRetries``).
    max_attempts: int
    wait_s: float


ModelDelta = TextDelta | ThinkingDelta | ToolCallDelta | RetryWait | TurnDone


@runtime_checkable
class Model(Protocol):
    """Streams one assistant turn.

    ``stream`` yields deltas as they arrive and ends with exactly one
    :class:`TurnDone`; a :class:`RetryWait` before the reply's first delta
    announces a retry's wait. Cancellation is structured: the agent runs the stream
    inside an anyio cancel scope and ``abort()`` cancels that scope, so a
    model must let ``CancelledError`` propagate and release its resources
    (close the HTTP response) in ``finally``. Failures are raised as
    :class:`rein.harness.errors.ModelError` subclasses.
    """

    @property
    def name(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]: ...


# ------------------------------------------------------------------- workspace

MutationOrigin = Literal["agent", "person", "external"]


@dataclass(frozen=True, slots=True)
class Mutation:
    """One applied workspace change: a new mutation generation."""

    generation: int
    paths: tuple[str, ...]
    origin: MutationOrigin = "agent"


@dataclass(frozen=True, slots=True)
class FileContent:
    path: str
    text: str
    #: The editor's document version when the text came from an open buffer.
    version: int | None = None
    #: The workspace generation at the time of reading.
    generation: int = 0


class Workspace(Protocol):
    """The files as the editor sees them (open buffers win over the disk).

    Paths are workspace-relative POSIX strings; the tools' sandbox resolves
    them before they get here.
    """

    @property
    def root(self) -> str: ...

    @property
    def generation(self) -> int: ...

    async def read_text(self, path: str) -> FileContent: ...

    async def exists(self, path: str) -> bool: ...

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        """Create or replace a file. Raises ToolError when the editor refuses.

        ``expected_text``: the text the new one was computed from (what was
        read). When the file no longer holds it the write is refused with
        :class:`~rein.harness.errors.FileChangedError` and nothing is
        written: checked against the disk under a lock every Rein process
        takes, or against the editor's buffer. Changes to one path are
        applied one at a time within a process. Bytes the text does not
        show are kept (a byte order mark)."""
        ...

    async def delete(self, path: str) -> Mutation: ...

    async def rename(self, old: str, new: str) -> Mutation: ...


@dataclass(frozen=True, slots=True)
class FileUpdate:
    """One file of a multi-file change (:class:`MultiFileWorkspace`): its
    new text (None: delete it), the text it was computed from
    (``expected_text``; None: not checked, a file that does not exist is
    created) and, for an editor buffer, that text's document version."""

    path: str
    text: str | None
    expected_text: str | None = None
    expected_version: int | None = None


@runtime_checkable
class MultiFileWorkspace(Workspace, Protocol):
    """A workspace that applies a change of several files as ONE mutation
    generation (a rename across files, an isolated run brought back): one
    before-change call with every path, one :class:`Mutation` whose paths
    are every file's, one after-change call. Every session workspace
    offers it (:class:`AnnouncingWorkspace`); how atomic it is depends on
    the adapter: the editor gets one ``workspace/applyEdit``, the ACP
    client's buffers and the disk are written file by file and a failure
    puts back the files already written."""

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        """Apply ``changes`` (one per path) as one generation. Every
        ``expected_text`` is checked before anything is written: a file
        that no longer holds it refuses the whole change with
        :class:`~rein.harness.errors.FileChangedError` and nothing is
        written. A failure after that (the editor refuses, the disk fails)
        raises ToolError and leaves nothing changed, except a file that
        changed again meanwhile, which is left alone and named in the
        error. ``label`` names the change for the person (the editor's
        undo entry)."""
        ...


#: Awaited with the paths a change is about to touch, before it is applied:
#: ``(path,)`` for a write or delete, ``(old, new)`` for a rename, every
#: path of a multi-file change.
BeforeChange = Callable[[tuple[str, ...]], Awaitable[None]]


class Writes(tuple[str, ...]):
    """The paths a before-change hook gets when the change replaces their
    text (a write: none is deleted or renamed), as a tuple: a hook that
    must tell a write from a deletion (the analyzer gate, which can show
    the analyzers a written file as it was, never a deleted one) checks
    for it; one that cannot tell (another workspace's change) gets a plain
    tuple."""

    __slots__ = ()


class CommandAhead(tuple[str, ...]):
    """What a before-change hook gets before a command of the run runs: no
    path (nobody can name what it changes), and its command line
    (``command``), for a hook that reads what it names (the analyzer gate:
    a setting the command may write, :func:`~rein.analysis.setting_changes.
    settings_named`)."""

    command: str

    def __new__(cls, command: str) -> CommandAhead:
        ahead = super().__new__(cls, ())
        ahead.command = command
        return ahead


@dataclass(frozen=True, slots=True)
class AppliedChange:
    """A change a workspace has just applied (and recorded): its mutation
    (``paths`` is ``(path,)``, or ``(old, new)`` for a rename, every file
    of a multi-file change), what it did, and for a write the text written
    (what the file now holds: no second read, and no race with the
    editor's echo of it). For a multi-file change (``"files"``),
    ``texts`` holds each path's text in the order of ``mutation.paths``
    (None: deleted)."""

    mutation: Mutation
    kind: Literal["write", "delete", "rename", "files"]
    text: str | None = None
    texts: tuple[str | None, ...] = ()


#: Awaited with every change after it is applied, in the writer's context.
AfterChange = Callable[[AppliedChange], Awaitable[None]]


@runtime_checkable
class ChangeAnnouncer(Protocol):
    """The change hooks of a workspace: what the core hooks to see every
    change, whoever makes it (a tool, a subagent), in the writer's context.
    Every workspace the sessions write through offers them
    (:class:`AnnouncingWorkspace`): the headless
    :class:`~rein.harness.generations.TrackedWorkspace` and the editor's
    workspace, both through :class:`~rein.harness.generations.
    RecordingWorkspace`; :func:`rein.session.build_session` wraps any other
    workspace in a ``TrackedWorkspace``. An :class:`~rein.harness.Agent`
    built by hand may run over a plain Workspace (whose changes no log
    records): its run validation checks with ``isinstance``.

    Callbacks run in the writer's context (so they can tell which run
    writes) and must not raise; a raising one is logged and the change goes
    on. An edit that fails after the before-callbacks gets no after-call."""

    def before_change(self, callback: BeforeChange) -> Callable[[], None]:
        """Register ``callback``, awaited with the paths before a write,
        delete or rename is applied (the analyzer gate captures a file's
        baseline there). Returns the function that removes it."""
        ...

    def after_change(self, callback: AfterChange) -> Callable[[], None]:
        """Register ``callback``, awaited with the :class:`AppliedChange`
        once it is applied (checkpoints store the new content there).
        Returns the function that removes it."""
        ...

    async def before_command(self, command: str = "") -> None:
        """A process of the run (``run_command``, its ``command`` line) is
        about to change files nobody can name: the before-change callbacks
        are awaited with no paths (a :class:`CommandAhead`), so what must
        predate every change (the analyzer gate's run-start baseline) is
        taken first."""
        ...


#: Called with the paths a change is about to be sent for (before it is applied).
SendingListener = Callable[[tuple[str, ...]], None]


@runtime_checkable
class AnnouncesSending(Protocol):
    """A workspace that sends its changes to someone who applies them later
    (the editor's: ``workspace/applyEdit``) and says so first, so that
    diagnostics published before the answer count for the change (the
    folder host connects the diagnostics coordinator's ``expect``)."""

    def on_sending(self, listener: SendingListener) -> Callable[[], None]:
        """Register ``listener``, called with the paths right before a
        change of them is sent; returns the function that removes it."""
        ...


class AnnouncingWorkspace(MultiFileWorkspace, ChangeAnnouncer, Protocol):
    """A workspace with its change hooks and multi-file changes: what a
    session's checkpoints and gates are given (every change is seen, none
    is missed)."""


# ----------------------------------------------------------------- diagnostics


@runtime_checkable
class MutationListening(Protocol):
    """A diagnostics source that wants to hear of every applied change (the
    editor's: a changed file's analysis is owed until the editor says it is
    done); the folder host subscribes it to the mutation log."""

    def notify_mutation(self, mutation: Mutation) -> None: ...


# -------------------------------------------------------------------- commands


class Persistence(Protocol):
    """Where an agent's transcript is kept as it is produced (the store's
    ``StorePersistence``, one per agent memory)."""

    def append(self, message: Message) -> None:
        """Queue one appended message; must be cheap (no I/O)."""
        ...

    def replace(self, index: int, message: Message) -> None:
        """The message at ``index`` was replaced (an answered question)."""
        ...

    async def checkpoint(self) -> None:
        """Commit everything queued (before a model call or tool execution)."""
        ...

    async def rewrite(self, messages: Sequence[Message]) -> None:
        """The transcript was rewritten (compaction replaced old turns)."""
        ...
