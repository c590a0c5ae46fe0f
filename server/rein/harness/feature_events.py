"""The events of the features around a run: plan mode, subagents, the
preview, review, restore and checkpoints, MCP servers. They are members of
the one closed union :data:`rein.harness.events.Event` (import them from
there); this module only keeps them apart from the run's own events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from rein.harness._event_base import EVENT_CONFIG, _Event

__all__ = [
    "CheckpointDropped",
    "FilesRestored",
    "HookActivity",
    "McpBudgetWarning",
    "McpServerState",
    "PlanState",
    "PlanStateName",
    "PlanStep",
    "PlanUpdated",
    "PreviewError",
    "PreviewOutput",
    "PreviewReloaded",
    "PreviewStarted",
    "PreviewStateName",
    "PreviewStopped",
    "ReviewDecided",
    "ReviewPending",
    "SubagentActivity",
]


PlanStateName = Literal[
    "idle", "planning", "executing", "updating", "summarizing", "completed", "failed", "waiting"
]


class PlanState(_Event):
    """A transition of the plan-act state machine."""

    type: Literal["plan_state"] = "plan_state"
    state: PlanStateName
    previous: PlanStateName


class PlanStep(BaseModel):
    model_config = EVENT_CONFIG

    id: str
    description: str
    status: Literal["pending", "running", "done", "failed"] = "pending"
    summary: str | None = None


class PlanUpdated(_Event):
    """The plan as it stands: after planning, after each step, after a revision."""

    type: Literal["plan_updated"] = "plan_updated"
    steps: list[PlanStep]
    reason: Literal["planned", "step_done", "step_failed", "revised", "step_started"] = "planned"


class SubagentActivity(_Event):
    """An event of a subagent (the ``task`` tool), forwarded so a client can
    render one box per child."""

    type: Literal["subagent_activity"] = "subagent_activity"
    child_id: str
    name: str
    tool_call_id: str
    event: dict[str, Any]


PreviewStateName = Literal["off", "stopped", "starting", "running", "reloading", "exited", "failed"]


class PreviewStarted(_Event):
    """The preview (the person's program, run by Rein) started and is ready."""

    type: Literal["preview_started"] = "preview_started"
    pid: int
    #: The mutation generation whose files it runs.
    generation: int
    command: str = ""
    state: PreviewStateName = "running"


class PreviewReloaded(_Event):
    """Validated changes were loaded into the running preview."""

    type: Literal["preview_reloaded"] = "preview_reloaded"
    generation: int
    strategy: Literal["restart", "signal", "self"]
    pid: int | None = None
    state: PreviewStateName = "running"


class PreviewOutput(_Event):
    """What the preview printed since the last such event (stdout and stderr
    merged; at most one event per ~100 ms; long bursts keep their tail)."""

    type: Literal["preview_output"] = "preview_output"
    text: str
    #: Lines left out of ``text`` to keep it bounded.
    lines_dropped: int = 0


class PreviewError(_Event):
    """A runtime error: the preview failed to start or reload, exited with an
    error, or printed error output while Rein watched it."""

    type: Literal["preview_error"] = "preview_error"
    message: str
    #: The matching lines with their traceback, or the output tail.
    lines: list[str] = Field(default_factory=list)
    #: The preview's state after the error.
    state: PreviewStateName = "running"
    exit_code: int | None = None


class PreviewStopped(_Event):
    """The preview is no longer running: stopped by Rein ("stopped") or it
    exited without an error ("exited")."""

    type: Literal["preview_stopped"] = "preview_stopped"
    reason: str
    state: Literal["stopped", "exited"] = "stopped"
    exit_code: int | None = None


class ReviewPending(_Event):
    """A run in review mode (``approval.write: "review"``) ended and left
    changed files for the person to keep or undo (``rein/review``)."""

    type: Literal["review_pending"] = "review_pending"
    session_id: str
    run_id: str
    #: The files now pending, workspace-relative.
    paths: list[str]


class ReviewDecided(_Event):
    """The person kept or undid a reviewed file, or one hunk of it
    (``rein/reviewDecide``)."""

    type: Literal["review_decided"] = "review_decided"
    session_id: str
    run_id: str
    path: str
    #: The hunk's index when one hunk was decided; None for the whole file.
    hunk: int | None = None
    decision: Literal["keep", "undo"]
    #: The hunk's status, or the file's when no hunk is named.
    status: Literal["pending", "kept", "undone", "mixed"]


class FilesRestored(_Event):
    """A restore (``rein/restore``, ``rein undo``) put files back as they
    were before a run or a turn. Outside any run: its id is the restore's
    own checkpoint run (undo it by restoring that id)."""

    type: Literal["files_restored"] = "files_restored"
    restore_id: str
    #: The run (and turn) restored to before.
    run_id: str
    turn: int | None = None
    #: Paths written back; conflicts (the person changed them, left as they
    #: are); skipped (content not stored).
    restored: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)


class CheckpointDropped(_Event):
    """The storage limits dropped a checkpoint run's content (the oldest
    runs of the workspace first): the run stays listed, it can no longer be
    restored. ``session_id`` is the run's session (the limits are per
    workspace, so it may be another session's run); ``bytes`` is what its
    content alone held."""

    type: Literal["checkpoint_dropped"] = "checkpoint_dropped"
    session_id: str
    run_id: str
    bytes: int
    reason: str


class McpServerState(_Event):
    """An MCP server of the workspace changed state: "starting", "running"
    (with its tool count), "failed" (with the error: a failed start, a
    crash, a restart that failed, or giving up), "stopped" or "skipped"
    (not started: disabled, not trusted, invalid; ``error`` says why)."""

    type: Literal["mcp_server_state"] = "mcp_server_state"
    server: str
    state: Literal["starting", "running", "failed", "stopped", "skipped"]
    tools: int = 0
    error: str | None = None
    source: str


class McpBudgetWarning(_Event):
    """The MCP tools' definitions together take more than
    ``rein.mcp.maxToolShare`` of the model's window (once per session):
    only ``offered`` of the ``total`` tools are offered."""

    type: Literal["mcp_budget_warning"] = "mcp_budget_warning"
    tokens: int
    window: int
    share: float
    offered: int
    total: int


class HookActivity(_Event):
    """A hook of the person's setup (Claude Code's protocol, ``.claude/settings.json``
    and the like) did something the person should see: ``blocked`` a tool
    call or a prompt, added ``context``, kept the run going (``continued``),
    asked for approval (``asked``), ``failed`` (a non-blocking error, a
    time-out, an exit code other than 0 and 2, an invalid entry) or was
    ``skipped`` (the workspace's hooks were not allowed)."""

    type: Literal["hook"] = "hook"
    #: The protocol's event: PreToolUse, UserPromptSubmit, Stop, ...
    event: str
    outcome: Literal["blocked", "context", "continued", "asked", "failed", "skipped"]
    #: The hook's command as written in its file.
    command: str
    #: Where it was defined: ".claude/settings.json", "~/.claude/settings.json", "rein.hooks", ...
    source: str
    #: The reason, the context added (cut), or what went wrong.
    message: str = ""
    #: The tool call it looked at, as the protocol names it (Bash, Edit, ...).
    tool: str | None = None
