"""A session's events as ACP ``session/update`` notifications.

:class:`UpdateMapper` is the mapping, one event in and the updates it
becomes out (pure but for what it remembers between events: the text of a
file before an edit, the output of a running command, the open gate and
repair calls); :class:`~rein.acp.update_stream.SessionUpdates` sends them
to the client.

The mapping (docs/acp.md draws it for clients):

- ``message_delta`` text / thinking -> ``agent_message_chunk`` / ``agent_thought_chunk``;
- ``tool_call_start`` -> ``tool_call`` (title, kind, ``in_progress``,
  locations, rawInput); ``tool_call_update`` output -> ``tool_call_update``
  with the output's bounded tail, a terminal -> terminal content;
  ``tool_call_end`` -> ``completed`` / ``failed`` with a diff for edits, else
  the result text (bounded; by its display kind: :mod:`rein.acp.result_text`);
- ``gate_start`` / ``gate_result`` -> a ``think`` call "Check: <gate>";
  ``repair_attempt`` -> an ``other`` call "Repair n/max" with its blockers;
- ``model_retry`` -> an ``other`` call "Model retry n/max in W s" with the
  reason (later retries of the request update it), ``completed`` when a
  reply starts, ``failed`` when the run ends without one (an abort ended
  the wait, the retries gave up); a turn that ends without a reply (a
  steer ended the wait) leaves it open for the next request's reply or
  retry: ACP has no status line, and every client shows a tool call;
- ``plan_updated`` -> ``plan``; ``turn_end`` -> ``usage_update``;
- ``subagent_activity`` -> content on the ``task`` call; ``error`` -> a message;
  ``gate_waiting`` (a wait on the analyzers past a second) -> a thought;
  ``hook`` (a hook of the person's setup) -> a thought; ``mcp_server_state``
  of a server that failed or was skipped -> a thought with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from acp import helpers
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ConfigOptionUpdate,
    ContentToolCallContent,
    Cost,
    CurrentModeUpdate,
    FileEditToolCallContent,
    PlanEntry,
    PlanEntryStatus,
    SessionInfoUpdate,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from rein.acp.result_text import result_locations, result_text
from rein.acp.tool_labels import tool_kind, tool_title
from rein.harness.events import Blocker, Event, PlanStep

__all__ = [
    "OUTPUT_TAIL_CHARS",
    "RESULT_CHARS",
    "SessionUpdate",
    "UpdateMapper",
]

SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | CurrentModeUpdate
    | UsageUpdate
    | SessionInfoUpdate
    | ConfigOptionUpdate
)
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

#: A running command's output is shown by its last this many characters.
OUTPUT_TAIL_CHARS = 8_000
#: A tool's result text is shown by its first this many characters.
RESULT_CHARS = 8_000

_EDITS = frozenset({"edit_file", "write_file"})
#: A plan step's status as a plan entry's (a failed step is done, and says so).
_PLAN_STATUS: dict[str, PlanEntryStatus] = {
    "pending": "pending",
    "running": "in_progress",
    "done": "completed",
    "failed": "completed",
}


def _text(text: str) -> ContentToolCallContent:
    return helpers.tool_content(helpers.text_block(text))


def _head(text: str, limit: int = RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _tail(text: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"… ({len(text) - limit} earlier characters)\n" + text[-limit:]


def _blockers_text(blockers: list[Blocker]) -> str:
    lines = []
    for b in blockers:
        where = f"{b.path}:{b.line + 1 if b.line is not None else ''}" if b.path else b.gate
        lines.append(f"- {where.rstrip(':')}: {b.message}")
    return "\n".join(lines)


def plan_entries(steps: list[PlanStep]) -> list[PlanEntry]:
    """Plan steps as ACP plan entries (a failed step: completed, "Failed: ...")."""
    entries = []
    for step in steps:
        content = step.description if step.status != "failed" else f"Failed: {step.description}"
        entries.append(helpers.plan_entry(content, status=_PLAN_STATUS[step.status]))
    return entries


class UpdateMapper:
    """Events in, ``session/update`` objects out, for one session.

    ``root``: the workspace (locations and diffs name absolute paths);
    ``text_now(rel)``: a file's text as the session sees it now (the
    client's buffer when it gave or was given one), None when it has none:
    read at an edit's start and end for its diff; ``context_window``: the
    size a ``usage_update`` reports.
    """

    def __init__(
        self,
        root: Path,
        text_now: Callable[[str], str | None],
        context_window: Callable[[], int],
    ) -> None:
        self.root = root
        self._text_now = text_now
        self._window = context_window
        #: USD of the session's turns so far; None once a turn's is unknown.
        self._cost: float | None = 0.0
        self._before: dict[str, tuple[str, str | None]] = {}
        #: The edits running now whose old text was not witnessed yet, by path.
        self._unwitnessed: dict[str, list[str]] = {}
        self._output: dict[str, str] = {}
        self._terminal: dict[str, str] = {}
        self._children: dict[str, list[str]] = {}
        self._gate_seq = 0
        self._gate_ids: dict[str, str] = {}
        self._repair_id: str | None = None
        #: The call showing the current request's retries (None: none waits).
        self._retry_id: str | None = None
        #: The events the client is told of, by type; the others are not shown.
        self._handlers: dict[str, Callable[[Any], list[SessionUpdate]]] = {
            "message_delta": self._on_message_delta,
            "error": self._on_error,
            "tool_call_start": self._on_tool_call_start,
            "tool_call_update": self._on_tool_call_update,
            "tool_call_end": self._on_tool_call_end,
            "subagent_activity": self._on_subagent_activity,
            "gate_start": self._on_gate_start,
            "gate_result": self._on_gate_result,
            "gate_waiting": self._on_gate_waiting,
            "hook": self._on_hook,
            "mcp_server_state": self._on_mcp_server_state,
            "repair_attempt": self._on_repair_attempt,
            "model_retry": self._on_model_retry,
            "message_start": self._on_message_start,
            "run_end": self._on_run_end,
            "plan_updated": self._on_plan_updated,
            "turn_end": self._on_turn_end,
        }

    def _abs(self, rel: str) -> str:
        return str((self.root / rel).resolve()) if rel else str(self.root)

    def __call__(self, event: Event) -> list[SessionUpdate]:
        handler = self._handlers.get(event.type)
        if handler is None:
            return []
        updates: list[SessionUpdate] = handler(event)
        return updates

    # ------------------------------------------------------------ messages

    def _on_message_delta(self, event: Any) -> list[SessionUpdate]:
        if not event.delta:
            return []
        if event.kind == "text":
            return [helpers.update_agent_message_text(event.delta)]
        if event.kind == "thinking":
            return [helpers.update_agent_thought_text(event.delta)]
        return []

    def _on_error(self, event: Any) -> list[SessionUpdate]:
        return [
            helpers.update_agent_message_text(f"\n\nRein error ({event.where}): {event.message}")
        ]

    def _on_gate_waiting(self, event: Any) -> list[SessionUpdate]:
        if event.phase == "begin":
            files = f" ({event.files} file(s))" if event.files else ""
            return [helpers.update_agent_thought_text(f"Waiting for {event.message}{files}…\n")]
        return [helpers.update_agent_thought_text(f"Done waiting for {event.message}.\n")]

    def _on_hook(self, event: Any) -> list[SessionUpdate]:
        """A hook of the person's setup blocked, added, continued or failed: a thought."""
        tool = f" on {event.tool}" if event.tool else ""
        why = f": {event.message}" if event.message else ""
        return [
            helpers.update_agent_thought_text(
                f"{event.event} hook ({event.source}) {event.outcome}{tool}{why}\n"
            )
        ]

    def _on_mcp_server_state(self, event: Any) -> list[SessionUpdate]:
        """An MCP server that did not start (failed, or skipped: not trusted,
        an input not given): a thought, so the person sees why its tools are
        missing (not only rein acp's stderr log)."""
        if event.state not in ("failed", "skipped"):
            return []
        why = f": {event.error}" if event.error else ""
        return [
            helpers.update_agent_thought_text(f"MCP server {event.server} {event.state}{why}\n")
        ]

    # ------------------------------------------------------------ tool calls

    def _on_tool_call_start(self, event: Any) -> list[SessionUpdate]:
        args: dict[str, Any] = dict(event.arguments)
        path = str(args.get("path") or "")
        locations = []
        if path and event.name != "run_command":
            line = args.get("offset") if event.name == "read_file" else None
            # The model's own argument: a line only when it is one (ACP's
            # lines are 1-based: 0 went out as a line, ``true`` as line 1).
            usable = isinstance(line, int) and not isinstance(line, bool) and line >= 1
            locations.append(ToolCallLocation(path=self._abs(path), line=line if usable else None))
        if event.name in _EDITS and path:
            self._before[event.tool_call_id] = (path, self._text_now(path))
            self._unwitnessed.setdefault(path, []).append(event.tool_call_id)
        return [
            helpers.start_tool_call(
                event.tool_call_id,
                tool_title(event.name, args),
                kind=tool_kind(event.name),
                status="in_progress",
                locations=locations or None,
                raw_input=args,
            )
        ]

    def before_change(self, path: str, text: str) -> None:
        """A tool is about to change ``path``, which held ``text`` (as the
        client showed it): the old text of the running edit of that file,
        better than what was known when the call started."""
        waiting = self._unwitnessed.get(path)
        if waiting:
            call = waiting.pop(0)
            self._before[call] = (path, text)

    def _on_tool_call_update(self, event: Any) -> list[SessionUpdate]:
        call = event.tool_call_id
        if event.kind == "terminal":
            self._terminal[call] = event.text
            return [helpers.update_tool_call(call, content=[helpers.tool_terminal_ref(event.text)])]
        if event.kind != "output" or not event.text or call in self._terminal:
            return []
        self._output[call] = _tail(self._output.get(call, "") + event.text, OUTPUT_TAIL_CHARS)
        return [helpers.update_tool_call(call, content=[_text(self._output[call])])]

    def _on_tool_call_end(self, event: Any) -> list[SessionUpdate]:
        call = event.tool_call_id
        self._output.pop(call, None)
        self._children.pop(call, None)
        before = self._before.pop(call, None)
        if before is not None and call in self._unwitnessed.get(before[0], []):
            self._unwitnessed[before[0]].remove(call)
        content: list[ToolContent] = []
        terminal = self._terminal.pop(call, None)
        if terminal is not None:
            content.append(helpers.tool_terminal_ref(terminal))
        if before is not None and not event.is_error:
            path, old = before
            new = self._text_now(path)
            if new is not None:
                content.append(helpers.tool_diff_content(self._abs(path), new, old))
        if not content or terminal is not None or event.is_error:
            if event.content:
                display = "text" if event.is_error else event.display
                content.append(_text(result_text(_head(event.content), display)))
        return [
            helpers.update_tool_call(
                call,
                status="failed" if event.is_error else "completed",
                content=content or None,
                locations=[
                    ToolCallLocation(path=self._abs(path), line=line)
                    for path, line in result_locations(event.content, event.display)
                ]
                or None,
                raw_output={"isError": event.is_error, "durationMs": round(event.duration_ms)},
            )
        ]

    def _on_subagent_activity(self, event: Any) -> list[SessionUpdate]:
        child = event.event
        kind = child.get("type")
        if kind == "tool_call_start":
            line = "▸ " + tool_title(str(child.get("name", "")), dict(child.get("arguments") or {}))
        elif kind == "tool_call_end" and child.get("is_error"):
            line = f"  ✗ {str(child.get('content', ''))[:200]}"
        elif kind == "model_retry":
            line = (
                f"  ↻ model retry {child.get('attempt')}/{child.get('max_attempts')} in "
                f"{child.get('wait_s')} s: {str(child.get('reason', ''))[:200]}"
            )
        elif kind == "run_end":
            line = f"{event.name}: {child.get('status')}"
        else:
            return []
        lines = self._children.setdefault(event.tool_call_id, [])
        lines.append(line)
        del lines[:-40]
        return [helpers.update_tool_call(event.tool_call_id, content=[_text("\n".join(lines))])]

    # ------------------------------------------------------------ gates, repairs

    def _close_repair(self) -> list[SessionUpdate]:
        if self._repair_id is None:
            return []
        call, self._repair_id = self._repair_id, None
        return [helpers.update_tool_call(call, status="completed")]

    def _on_gate_start(self, event: Any) -> list[SessionUpdate]:
        self._gate_seq += 1
        call = f"rein-gate-{self._gate_seq}-{event.gate}"
        self._gate_ids[event.gate] = call
        return [
            *self._close_repair(),
            helpers.start_tool_call(
                call,
                f"Check: {event.gate}",
                kind="think",
                status="in_progress",
                raw_input={"gate": event.gate, "generation": event.generation},
            ),
        ]

    def _on_gate_result(self, event: Any) -> list[SessionUpdate]:
        call = self._gate_ids.pop(event.gate, None)
        if call is None:
            return []
        ok = event.passed or event.status == "unverified"
        if event.blockers and not event.passed:
            text = _blockers_text(event.blockers)
        elif event.status == "unverified":
            text = f"unverified: {event.detail}" if event.detail else "unverified"
        else:
            text = event.detail or "passed"
        return [
            helpers.update_tool_call(
                call, status="completed" if ok else "failed", content=[_text(_head(text))]
            )
        ]

    def _on_repair_attempt(self, event: Any) -> list[SessionUpdate]:
        updates = self._close_repair()
        self._gate_seq += 1
        self._repair_id = f"rein-repair-{self._gate_seq}"
        updates.append(
            helpers.start_tool_call(
                self._repair_id,
                f"Repair {event.attempt}/{event.max_attempts}",
                kind="other",
                status="in_progress",
                content=[_text(_head(_blockers_text(event.blockers)))] if event.blockers else None,
            )
        )
        return updates

    def _on_run_end(self, event: Any) -> list[SessionUpdate]:
        return [*self._close_repair(), *self._close_retry("failed")]

    # ------------------------------------------------------------ model retries

    def _on_model_retry(self, event: Any) -> list[SessionUpdate]:
        title = f"Model retry {event.attempt}/{event.max_attempts} in {event.wait_s:.3g} s"
        content = [_text(_head(event.reason))]
        raw = {
            "provider": event.provider,
            "attempt": event.attempt,
            "maxAttempts": event.max_attempts,
            "waitS": event.wait_s,
        }
        if self._retry_id is not None:
            return [
                helpers.update_tool_call(
                    self._retry_id, title=title, content=content, raw_input=raw
                )
            ]
        self._gate_seq += 1
        self._retry_id = f"rein-retry-{self._gate_seq}"
        return [
            helpers.start_tool_call(
                self._retry_id,
                title,
                kind="other",
                status="in_progress",
                content=content,
                raw_input=raw,
            )
        ]

    def _on_message_start(self, event: Any) -> list[SessionUpdate]:
        return self._close_retry("completed") if event.role == "assistant" else []

    def _close_retry(self, status: Literal["completed", "failed"]) -> list[SessionUpdate]:
        if self._retry_id is None:
            return []
        call, self._retry_id = self._retry_id, None
        return [helpers.update_tool_call(call, status=status)]

    # ------------------------------------------------------------ plan, usage

    def _on_plan_updated(self, event: Any) -> list[SessionUpdate]:
        return [helpers.update_plan(plan_entries(event.steps))]

    def _on_turn_end(self, event: Any) -> list[SessionUpdate]:
        # A retry still open: the turn ended with no reply (an abort or a
        # steer ended the wait). Not closed here: the run's end fails it,
        # the steered request's reply completes it.
        closed: list[SessionUpdate] = []
        usage = event.usage
        context = event.context
        if context is not None:
            used, size = context.used, context.window
        else:
            used, size = usage.input_tokens + usage.output_tokens, self._window()
        if used <= 0:
            return closed
        # The session's cost in this process, while every turn's is known.
        if event.cost is None:
            self._cost = None
        elif self._cost is not None:
            self._cost += event.cost
        cost = None if self._cost is None else Cost(amount=round(self._cost, 6), currency="USD")
        return [
            *closed,
            UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost),
        ]
