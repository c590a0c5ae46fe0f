"""Params of the custom requests, validated with pydantic.

A wrong or missing field is answered with InvalidParams (-32602) whose
message names the field (:func:`parse`).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)
from pygls.exceptions import JsonRpcInvalidParams

from rein.sandboxing.settings import check_hosts

__all__ = [
    "MAX_ATTACHMENTS",
    "AbortParams",
    "ApplyIsolatedParams",
    "ApprovalsParams",
    "Attachment",
    "CheckpointContentParams",
    "CheckpointsParams",
    "CommandsParams",
    "DiagnosticsChangedParams",
    "FollowUpParams",
    "IsolatedHunksParams",
    "McpServersParams",
    "NewSessionParams",
    "PreviewParams",
    "PromptContext",
    "PromptParams",
    "RestoreParams",
    "ReviewDecideParams",
    "ReviewParams",
    "RevokeApprovalParams",
    "SessionParams",
    "SessionsParams",
    "SteerParams",
    "parse",
]

_CONFIG = ConfigDict(extra="forbid", populate_by_name=True)


class _Position(BaseModel):
    model_config = ConfigDict(extra="allow")

    line: StrictInt = Field(ge=0)
    character: StrictInt = Field(ge=0)


class _Range(BaseModel):
    model_config = ConfigDict(extra="allow")

    start: _Position
    end: _Position


class _Diagnostic(BaseModel):
    model_config = ConfigDict(extra="allow")

    range: _Range
    message: str = ""
    severity: Literal[1, 2, 3, 4] | None = None
    code: str | StrictInt | None = None
    source: str | None = None


class PromptContext(BaseModel):
    """What the client attaches to a prompt (a selection, a file, problems).
    ``range`` and ``diagnostics`` are kept as the client sent them, once
    their shape is checked (an LSP Range; LSP Diagnostics)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    uri: str | None = None
    selection: str | None = None
    range: dict[str, Any] | None = None
    diagnostics: list[dict[str, Any]] | None = None

    @field_validator("range")
    @classmethod
    def _a_range(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            _Range.model_validate(value)
        return value

    @field_validator("diagnostics")
    @classmethod
    def _diagnostics(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for item in value or []:
            _Diagnostic.model_validate(item)
        return value


#: The most attachments one prompt may carry.
MAX_ATTACHMENTS = 20


class Attachment(BaseModel):
    """One piece of context the person attached with ``@`` (the panel's
    mention picker): a file, the selection, the Problems of a file or of the
    workspace, the terminal's last output. What each kind needs (a file's
    ``uri``, a selection's ``text`` ...) is checked where it is rendered
    (:mod:`rein.lsp.attachments`)."""

    model_config = _CONFIG

    kind: Literal["file", "selection", "problems", "terminal"]
    uri: str | None = Field(None, min_length=1)
    range: _Range | None = None
    text: str | None = None
    diagnostics: list[_Diagnostic] | None = None


class PromptParams(BaseModel):
    model_config = _CONFIG

    text: str = Field(min_length=1)
    session_id: str | None = Field(None, alias="sessionId")
    #: None: a command's own mode, else agent.
    mode: Literal["agent", "plan", "explain"] | None = None
    context: PromptContext | None = None
    attachments: list[Attachment] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)
    work_done_token: str | int | None = Field(None, alias="workDoneToken")


class SteerParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    text: str = Field(min_length=1)


FollowUpParams = SteerParams


class NewSessionParams(BaseModel):
    model_config = _CONFIG

    mode: Literal["agent", "plan", "explain"] = "agent"
    title: str = ""
    isolated: bool = False
    #: Hosts this session's sandboxed commands may reach besides
    #: ``sandbox.network`` (presets or host names).
    allow_hosts: tuple[str, ...] = Field((), alias="allowHosts")

    @field_validator("allow_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        return check_hosts(value)

    @model_validator(mode="after")
    def _hosts_not_isolated(self) -> NewSessionParams:
        if self.allow_hosts and self.isolated:
            raise ValueError("allowHosts: not available for an isolated session yet")
        return self


class ApplyIsolatedParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    action: Literal["keep", "discard", "branch"]
    branch: str | None = Field(None, min_length=1)
    #: The ids of the hunks to keep (``rein/isolatedHunks``); None: every
    #: clean hunk. Never empty (keeping nothing is ``discard``).
    hunks: tuple[str, ...] | None = Field(None, min_length=1)
    #: The person's open session the apply becomes a run of; None: a new
    #: session of the folder.
    into_session_id: str | None = Field(None, alias="intoSessionId", min_length=1)

    @model_validator(mode="after")
    def _branch_with_branch_only(self) -> ApplyIsolatedParams:
        if self.action == "branch" and self.branch is None:
            raise ValueError("branch: a name is needed with action 'branch'")
        if self.action != "branch" and self.branch is not None:
            raise ValueError(f"branch: only with action 'branch', not {self.action!r}")
        for name, value in (("hunks", self.hunks), ("intoSessionId", self.into_session_id)):
            if self.action != "keep" and value is not None:
                raise ValueError(f"{name}: only with action 'keep', not {self.action!r}")
        return self


class IsolatedHunksParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")


class AbortParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")


class CloseSessionParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    #: SessionEnd's ``reason``: ``clear`` (the person cleared the
    #: conversation), else the person closed it.
    reason: Literal["clear", "prompt_input_exit", "logout", "other"] = "prompt_input_exit"


class ApprovalsParams(BaseModel):
    model_config = _CONFIG

    session_id: str | None = Field(None, alias="sessionId")


class RevokeApprovalParams(BaseModel):
    model_config = _CONFIG

    id: str = Field(min_length=1)


class SessionsParams(BaseModel):
    model_config = _CONFIG


class CommandsParams(BaseModel):
    """``rein/commands`` takes no params."""

    model_config = _CONFIG


class McpServersParams(BaseModel):
    """``rein/mcpServers``: the servers are the workspace's, shared by its
    sessions; ``sessionId`` is accepted for symmetry and not needed."""

    model_config = _CONFIG

    session_id: str | None = Field(None, alias="sessionId")


class SessionParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")


class ReviewParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    run_id: str | None = Field(None, alias="runId", min_length=1)


class ReviewDecideParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    run_id: str = Field(alias="runId", min_length=1)
    decision: Literal["keep", "undo"]
    path: str | None = Field(None, min_length=1)
    hunk: StrictInt | None = Field(None, ge=0)


class PreviewParams(BaseModel):
    model_config = _CONFIG

    action: Literal["start", "stop", "restart", "status"]


class CheckpointsParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")


class RestoreParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    run_id: str = Field(alias="runId", min_length=1)
    turn: StrictInt | None = Field(None, ge=1)
    paths: list[str] | None = Field(None, min_length=1)


class CheckpointContentParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    run_id: str = Field(alias="runId", min_length=1)
    path: str = Field(min_length=1)
    side: Literal["before", "after"]
    turn: StrictInt | None = Field(None, ge=1)


class DiagnosticsChangedParams(BaseModel):
    model_config = _CONFIG

    uris: list[str]
    #: uri -> the version of the open document when its diagnostics
    #: changed (open documents only; an older client sends none).
    versions: dict[str, int] = Field(default_factory=dict)


M = TypeVar("M", bound=BaseModel)


def _loc(err: Any) -> str:
    """``attachments[0].uri``: list indices in brackets, fields dotted."""
    shown = ""
    for part in err["loc"]:
        shown += f"[{part}]" if isinstance(part, int) else (f".{part}" if shown else str(part))
    return shown or "params"


def parse(model: type[M], params: Any, method: str) -> M:
    """Validate ``params``; InvalidParams names the field on failure."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(
            f"{method}: params must be an object, got {type(params).__name__}"
        )
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(f"{_loc(e)}: {e['msg']}" for e in exc.errors(include_url=False))
        raise JsonRpcInvalidParams(f"{method}: invalid params: {problems}") from exc
