"""The mapping of ``model_retry`` to ACP updates: one call per request's
retries, updated by each later retry, completed when the reply starts,
failed when the run ends without one (never completed by the turn's end: an
abort ends the turn before the run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rein.acp.updates import UpdateMapper
from rein.harness.events import (
    Event,
    MessageStart,
    ModelRetry,
    RunEnd,
    SubagentActivity,
    TurnEnd,
)


def _retry(attempt: int, wait_s: float = 1.0) -> ModelRetry:
    return ModelRetry(
        provider="openai (http://x/v1)",
        reason="openai (http://x/v1) server error (HTTP 503)",
        attempt=attempt,
        max_attempts=4,
        wait_s=wait_s,
    )


def _sent(mapper: UpdateMapper, event: Event) -> list[dict[str, Any]]:
    return [u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in mapper(event)]


def test_later_retries_update_the_call_and_a_failed_run_fails_it(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path, lambda _: None, lambda: 1000)
    [start] = _sent(mapper, _retry(1))
    [again] = _sent(mapper, _retry(2, 2.5))
    assert again["toolCallId"] == start["toolCallId"]
    assert again["title"] == "Model retry 2/4 in 2.5 s" and "status" not in again
    [failed] = _sent(mapper, RunEnd(run_id="r", status="failed", reason="model error"))
    assert failed == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": start["toolCallId"],
        "status": "failed",
    }
    # The next request's retries are a new call; the reply closes it.
    [second] = _sent(mapper, _retry(1))
    assert second["toolCallId"] != start["toolCallId"]
    assert _sent(mapper, MessageStart(role="user")) == []
    [closed] = _sent(mapper, MessageStart(role="assistant"))
    assert closed["status"] == "completed"
    assert _sent(mapper, MessageStart(role="assistant")) == []


def test_a_wait_ended_without_a_reply_is_failed_not_completed(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path, lambda _: None, lambda: 1000)
    [start] = _sent(mapper, _retry(1, 30.0))
    # An abort during the wait: the turn ends, then the run, with no reply.
    assert _sent(mapper, TurnEnd(turn=1)) == []
    [end] = _sent(mapper, RunEnd(run_id="r", status="aborted", reason="cancelled"))
    assert (end["toolCallId"], end["status"]) == (start["toolCallId"], "failed")
    # A steer during the wait: the turn ends, the steered request's reply
    # completes the call.
    [steered] = _sent(mapper, _retry(1, 30.0))
    assert _sent(mapper, TurnEnd(turn=2)) == []
    [closed] = _sent(mapper, MessageStart(role="assistant"))
    assert (closed["toolCallId"], closed["status"]) == (steered["toolCallId"], "completed")


def test_a_subagents_retry_is_a_line_on_its_task_call(tmp_path: Path) -> None:
    mapper = UpdateMapper(tmp_path, lambda _: None, lambda: 1000)
    child = _retry(1, 5.0).model_dump(mode="json")
    [update] = _sent(
        mapper,
        SubagentActivity(tool_call_id="call_t", child_id="c1", name="task", event=child),
    )
    assert update["toolCallId"] == "call_t"
    [content] = update["content"]
    assert content["content"]["text"] == (
        "  ↻ model retry 1/4 in 5.0 s: openai (http://x/v1) server error (HTTP 503)"
    )
