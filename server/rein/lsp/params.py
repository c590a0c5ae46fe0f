"""Params of the custom requests, validated with pydantic.

A wrong or missing field is answered with InvalidParams (-32602) whose
message names the field (:func:`parse`).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

__all__ = [
    "AbortParams",
    "DiagnosticsChangedParams",
    "FollowUpParams",
    "PreviewParams",
    "PromptContext",
    "PromptParams",
    "SessionParams",
    "SessionsParams",
    "SteerParams",
    "parse",
]

_CONFIG = ConfigDict(extra="forbid", populate_by_name=True)


class PromptContext(BaseModel):
    """What the client attaches to a prompt (a selection, a file, problems)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    uri: str | None = None
    selection: str | None = None
    range: dict[str, Any] | None = None
    diagnostics: list[dict[str, Any]] | None = None


class PromptParams(BaseModel):
    model_config = _CONFIG

    text: str = Field(min_length=1)
    session_id: str | None = Field(None, alias="sessionId")
    mode: Literal["agent", "plan", "explain"] = "agent"
    context: PromptContext | None = None
    work_done_token: str | int | None = Field(None, alias="workDoneToken")


class SteerParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")
    text: str = Field(min_length=1)


FollowUpParams = SteerParams


class AbortParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")


class SessionsParams(BaseModel):
    model_config = _CONFIG


class SessionParams(BaseModel):
    model_config = _CONFIG

    session_id: str = Field(alias="sessionId")


class PreviewParams(BaseModel):
    model_config = _CONFIG

    action: Literal["start", "stop", "restart", "status"]


class DiagnosticsChangedParams(BaseModel):
    model_config = _CONFIG

    uris: list[str]


M = TypeVar("M", bound=BaseModel)


def _loc(err: Any) -> str:
    return ".".join(str(p) for p in err["loc"]) or "params"


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
