"""A run's result, usage and a session's summary on the wire: one spelling
(camelCase) for ``rein/prompt``, ``rein/sessions`` and ``rein run --json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.checkpoints.model import FileChange
    from rein.harness import RunResult, Usage
    from rein.session.session import Session
    from rein.store import SessionRecord

from rein.checkpoints.capture import changes_json

__all__ = ["record_summary", "result_json", "summary", "usage_json"]

_USAGE_KEYS = (
    ("input_tokens", "inputTokens"),
    ("output_tokens", "outputTokens"),
    ("cache_read_tokens", "cacheReadTokens"),
    ("cache_write_tokens", "cacheWriteTokens"),
)


def usage_json(usage: Usage | Mapping[str, Any] | None) -> dict[str, int | bool]:
    """Token usage as the wire spells it, with ``estimated: true`` when the
    provider reported no counts (vscode-lm). Takes a :class:`Usage` or its
    stored dict (snake_case keys)."""
    if usage is None:
        data: Mapping[str, Any] = {}
    elif isinstance(usage, Mapping):
        data = usage
    else:
        data = usage.model_dump()
    wire: dict[str, int | bool] = {name: int(data.get(key) or 0) for key, name in _USAGE_KEYS}
    if data.get("estimated") is True:
        wire["estimated"] = True
    return wire


def result_json(
    session_id: str,
    result: RunResult,
    changes: Sequence[FileChange] = (),
    reviews: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The result of one run: the ``rein/prompt`` result and the ``result``
    object of ``rein run --json``. ``changes``: the net change per path of
    the prompt's runs (its checkpoint); ``reviews``: their review state by
    path (``approval.write: "review"``), added to each as ``review``."""
    payload: dict[str, Any] = {
        "sessionId": session_id,
        "runId": result.run_id,
        "status": result.status,
        "text": result.text,
        "turns": result.turns,
        "repairAttempts": result.repair_attempts,
        "generations": list(result.generations),
        "usage": usage_json(result.usage),
        "cost": result.cost,
        "context": result.context.model_dump(mode="json") if result.context else None,
        "changes": [
            {**entry, "review": reviews[entry["path"]]}
            if reviews and entry["path"] in reviews
            else entry
            for entry in changes_json(changes)
        ],
    }
    if result.error:
        payload["error"] = result.error
    if result.blockers:
        payload["blockers"] = [b.model_dump(mode="json") for b in result.blockers]
    if result.unverified:
        # Gates that could not look: these generations are not validated.
        payload["unverified"] = [u.model_dump(mode="json") for u in result.unverified]
    return payload


def summary(session: Session) -> dict[str, Any]:
    """A live session as ``rein/sessions`` lists it."""
    return _summary_json(session, session.usage)


def record_summary(record: SessionRecord) -> dict[str, Any]:
    """A stored session as ``rein/sessions`` lists it."""
    return _summary_json(record, record.usage or {})


def _summary_json(item: Session | SessionRecord, usage: Any) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "status": item.status,
        "updatedAt": item.updated_at,
        "mode": item.mode,
        "origin": item.origin,
        "turns": item.turns,
        "usage": usage_json(usage),
    }
