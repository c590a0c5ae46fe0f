"""Print a run's events in a terminal (``rein run``, ``rein demo``)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, TextIO

from rein.harness.calls.display import parse_table
from rein.harness.events import Event

__all__ = ["EventPrinter", "result_lines"]

_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}
#: A blocked gate's blockers listed under its line; the rest counted.
SHOWN_BLOCKERS = 8
#: The lines of a tool's result shown under its call (the rest counted).
RESULT_LINES = 40
#: the lines of a failed call's result shown below its first, from its end.
ERROR_TAIL_LINES = 8
_GREEN, _RED, _CYAN, _RESET = "\x1b[32m", "\x1b[31m", "\x1b[36m", "\x1b[0m"


def _diff_line(line: str, colour: bool) -> str:
    if not colour:
        return line
    if line.startswith("@@"):
        return _CYAN + line + _RESET
    if line.startswith("+") and not line.startswith("+++"):
        return _GREEN + line + _RESET
    if line.startswith("-") and not line.startswith("---"):
        return _RED + line + _RESET
    return line


def _table_lines(text: str) -> list[str] | None:
    table = parse_table(text)
    if table is None:
        return None
    header, rows = table
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    aligned = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return [aligned[0], "  ".join("-" * w for w in widths), *aligned[1:]]


def _json_lines(text: str) -> list[str] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return json.dumps(value, indent=2, ensure_ascii=False).splitlines()


def result_lines(content: str, display: str, *, colour: bool = False) -> list[str]:
    """A tool result shown by its display kind: markdown as it is, a diff
    with its added and removed lines coloured (``colour``: a terminal), a
    table in aligned columns, JSON pretty-printed; at most ``RESULT_LINES``."""
    lines: list[str] | None = None
    if display == "table":
        lines = _table_lines(content)
    elif display == "json":
        lines = _json_lines(content)
    if lines is None:
        lines = content.strip("\n").splitlines()
    if display == "diff":
        lines = [_diff_line(line, colour) for line in lines]
    if len(lines) > RESULT_LINES:
        lines = [*lines[:RESULT_LINES], f"… ({len(lines) - RESULT_LINES} more lines)"]
    return lines


def _cut(line: str, limit: int = 200) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _one_line(text: str, limit: int = 100) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return _cut(first, limit)


def _error_tail(text: str) -> list[str]:
    """The lines of an error result after its first (which the mark's line
    shows), at most the last ``ERROR_TAIL_LINES``: a failed command's last
    output and its exit code."""
    rest = [_cut(line) for line in text.strip().splitlines()[1:]]
    if len(rest) <= ERROR_TAIL_LINES:
        return rest
    return [f"… ({len(rest) - ERROR_TAIL_LINES} lines before)", *rest[-ERROR_TAIL_LINES:]]


def _args(arguments: dict[str, Any]) -> str:
    parts = []
    for key, value in arguments.items():
        shown = json.dumps(value) if not isinstance(value, str) else value
        shown = shown.replace("\n", "⏎")
        if len(shown) > 40:
            shown = shown[:39] + "…"
        parts.append(f"{key}={shown}")
    return " ".join(parts)


def _to_devnull(out: TextIO) -> None:
    """Point a closed pipe's descriptor at the null device, so that later
    writes (the result's line, the interpreter's last flush) do not fail."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, out.fileno())
        os.close(null)


class EventPrinter:
    """A listener that prints each event as it comes (or as JSON lines).
    Waits (``gate_waiting``) go to ``err`` (stderr), the rest to ``out``."""

    def __init__(
        self, out: TextIO | None = None, *, as_json: bool = False, err: TextIO | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.as_json = as_json
        self._in_text = False
        self.count = 0
        #: ``out`` was closed by its reader (``rein run --json | head``).
        self.closed = False

    def _line(self, text: str) -> None:
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self.out.write(text + "\n")

    def __call__(self, ev: Event) -> None:
        if self.closed:
            return
        try:
            self._print(ev)
        except BrokenPipeError:
            # Its reader is gone: said once, and the run goes on unprinted
            # (not a traceback per event).
            self.closed = True
            _to_devnull(self.out)
            self.err.write("! standard output was closed: the run's events are not printed\n")

    def _print(self, ev: Event) -> None:
        event: Any = ev  # dispatched on .type below
        self.count += 1
        if self.as_json:
            self.out.write(event.model_dump_json() + "\n")
            self.out.flush()
            return
        t = event.type
        if t == "run_start":
            self._line(f"▶ run {event.run_id}: {_one_line(event.prompt or '')}")
        elif t == "turn_start":
            self._line(f"── turn {event.turn}")
        elif t == "message_delta":
            if event.kind == "text":
                if not self._in_text:
                    self.out.write("  💬 ")
                    self._in_text = True
                self.out.write(event.delta)
            elif event.kind == "thinking":
                self._line(f"  💭 {_one_line(event.delta)}")
        elif t == "tool_call_start":
            server = event.details.get("mcpServer")
            via = f" (MCP server {server})" if server else ""
            self._line(f"  ⚙ {event.name}{via} {_args(event.arguments)}")
        elif t == "tool_call_end":
            mark = "✗" if event.is_error else "✓"
            detail = event.details.get("diff") if isinstance(event.details, dict) else None
            if event.display != "text" and not event.is_error:
                self._line(f"    {mark} {event.name} ({event.duration_ms:.0f} ms):")
                colour = self.out.isatty()
                for line in result_lines(event.content, event.display, colour=colour):
                    self.out.write(f"      {line}\n" if line else "\n")
            else:
                # An error's first line is its reason: shown whole, up to a bound.
                first = _one_line(event.content, 400 if event.is_error else 100)
                self._line(f"    {mark} {event.name} ({event.duration_ms:.0f} ms): {first}")
                if event.is_error:  # why it failed: a command's output and exit code
                    for line in _error_tail(event.content):
                        self.out.write(f"      {line}\n" if line else "\n")
            if isinstance(detail, str) and detail:
                for line in detail.splitlines()[:12]:
                    self.out.write(f"      {line}\n" if line else "\n")
        elif t == "tool_retry":
            self._line(
                f"    ↻ {event.name} retry {event.attempt} of {event.max_attempts} "
                f"in {event.delay_ms} ms: {_one_line(event.reason, 200)}"
            )
        elif t == "model_retry":
            # The reason names the provider; the wait is announced as it begins.
            what = " (compaction)" if event.purpose == "compaction" else ""
            self._line(
                f"  ↻ model retry{what} {event.attempt} of {event.max_attempts} in "
                f"{event.wait_s:.3g} s: {_one_line(event.reason, 300)}"
            )
        elif t == "carried_changes":
            self._line(
                f"  ↺ validating changes an earlier run left unvalidated: {', '.join(event.paths)}"
            )
        elif t == "steering_applied":
            self._line(f"  ↪ steering: {'; '.join(event.texts)}")
        elif t == "follow_up_started":
            self._line(f"  ↪ follow-up: {_one_line(event.text)}")
        elif t == "gate_start":
            self._line(f"  ⛨ gate {event.gate} (generation {event.generation})")
        elif t == "gate_waiting":
            files = f" ({event.files} file(s))" if event.files else ""
            if event.phase == "begin":
                self.err.write(f"  ⧗ waiting for {event.message}{files}\n")
            else:
                self.err.write(f"  ⧗ done waiting for {event.message}\n")
            self.err.flush()
        elif t == "gate_result":
            if event.status == "unverified":
                self._line(f"    ? {event.gate} unverified: {_one_line(event.detail, 200)}")
            elif event.passed:
                stale = " (diagnostics may be stale)" if event.stale else ""
                about = f": {_one_line(event.detail, 300)}" if event.detail else ""
                self._line(f"    ✓ {event.gate} passed in {event.duration_ms:.0f} ms{stale}{about}")
            else:
                about = f" ({_one_line(event.detail, 300)})" if event.detail else ""
                self._line(f"    ✗ {event.gate}: {len(event.blockers)} blocker(s){about}")
                for b in event.blockers[:SHOWN_BLOCKERS]:
                    column = f":{b.character + 1}" if b.character is not None else ""
                    where = f"{b.path}:{(b.line or 0) + 1}{column}" if b.path else ""
                    code = f" {b.code}" if b.code else ""
                    sev = _SEVERITY.get(b.severity or 1, "error")
                    self._line(f"      {where} {sev}{code}: {_one_line(b.message)}")
                if len(event.blockers) > SHOWN_BLOCKERS:
                    self._line(f"      … and {len(event.blockers) - SHOWN_BLOCKERS} more")
        elif t == "preview_started":
            self._line(f"  ▣ preview started (pid {event.pid}, generation {event.generation})")
        elif t == "preview_reloaded":
            self._line(f"  ▣ preview reloaded ({event.strategy}, generation {event.generation})")
        elif t == "preview_error":
            self._line(f"  ▣ preview: {_one_line(event.message, 200)}")
        elif t == "plan_state":
            if event.previous == event.state:  # a resumed plan says where it stands
                self._line(f"  ◆ plan: {event.state} (resumed)")
            else:
                self._line(f"  ◆ plan: {event.previous} -> {event.state}")
        elif t == "plan_updated":
            marks = {"pending": "·", "running": "▸", "done": "✓", "failed": "✗"}
            steps = "  ".join(f"{marks.get(s.status, '?')} {s.id}" for s in event.steps)
            self._line(f"  ◆ plan ({event.reason}): {steps}")
        elif t == "subagent_activity":
            inner = event.event
            if inner.get("type") in ("run_start", "tool_call_start", "run_end"):
                what = inner.get("name") or inner.get("status") or "started"
                self._line(f"  ↳ [{event.name}] {inner['type']}: {what}")
            elif inner.get("type") == "model_retry":
                self._line(
                    f"  ↳ [{event.name}] model retry {inner.get('attempt')} of "
                    f"{inner.get('max_attempts')} in {inner.get('wait_s')} s: "
                    f"{_one_line(str(inner.get('reason', '')), 200)}"
                )
        elif t == "review_pending":
            self._line(
                f"  ⧗ pending review ({len(event.paths)} file(s), applied; keep or undo them): "
                f"{', '.join(event.paths)}"
            )
        elif t == "review_decided":
            which = f" hunk {event.hunk}" if event.hunk is not None else ""
            self._line(f"  ⧗ review: {event.decision} {event.path}{which} -> {event.status}")
        elif t == "repair_attempt":
            self._line(f"  ↻ repair attempt {event.attempt} of {event.max_attempts}")
        elif t == "compaction":
            self._line(
                f"  ⇣ compaction ({event.kind}): "
                f"{event.tokens_before} -> {event.tokens_after} tokens"
            )
        elif t == "error":
            if event.where == "run" and event.fatal:
                return  # the run's end says it: "■ failed (<reason>) ..."
            self._line(f"  ! {event.where}: {_one_line(event.message, 200)}")
        elif t == "mcp_server_state":
            if event.state in ("running", "failed", "skipped"):
                tools = f" with {event.tools} tool(s)" if event.state == "running" else ""
                why = f": {_one_line(event.error, 200)}" if event.error else ""
                self._line(f"  ⧉ MCP server {event.server} {event.state}{tools}{why}")
                for line in _error_tail(event.error or ""):  # its stderr's last lines
                    self._line(f"      {line}")
        elif t == "mcp_budget_warning":
            self._line(
                f"  ⧉ the MCP tools take {event.tokens} tokens ({event.share:.0%} of the window): "
                f"{event.offered} of {event.total} offered (rein.mcp.maxToolShare)"
            )
        elif t == "hook":
            tool = f" on {event.tool}" if event.tool else ""
            command = f" `{_one_line(event.command, 80)}`" if event.command else ""
            self._line(
                f"  ⚓ {event.event} hook{command} ({event.source}) {event.outcome}{tool}"
                + (f": {_one_line(event.message, 200)}" if event.message else "")
            )
        elif t == "checkpoint_dropped":
            self._line(
                f"  ⌫ checkpoint of run {event.run_id} dropped ({event.reason}): "
                "it can no longer be undone"
            )
        elif t == "budget_exceeded":
            what = "tokens" if event.limit == "tokens" else "cost (USD)"
            self._line(f"  $ budget: {what} {event.spent:g} over {event.allowed:g}")
        elif t == "run_end":
            from rein.harness.cost.spend import spend_line

            reason = f" ({event.reason})" if event.reason else ""
            self._line(
                f"■ {event.status}{reason} after {event.turns} turn(s); "
                + spend_line(event.usage, event.context, event.cost)
            )
            for u in event.unverified:
                self._line(f"  ? not verified: generation {u.generation} ({u.gate}: {u.reason})")
        self.out.flush()
