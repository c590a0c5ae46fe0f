"""The context budget: keep what is sent to the model under its window.

Before every model call the loop estimates the request (system prompt + tool
schemas + the messages ``transform_context`` produced). Over the effective
window (``contextWindowCap`` when set, else ``maxContextTokens``) it asks the
over-window relief (:mod:`rein.harness.conversation.relief`); the default relief is
:meth:`ContextBudget.fit`, which

1. elides the oldest tool results (their content replaced by a short marker;
   the message skeleton and call/result pairing stay intact; the newest
   results stay whole), then, if that is not enough,
2. asks the model to summarise the oldest turns and replaces them with one
   summary message (cut only where no call is separated from its result).

Both are reported as ``compaction`` events. When neither brings the context
under the window, the run fails with a clear reason.

The estimate is incremental: a message is measured once, so the per-turn cost
does not grow with the history.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from rein.harness.conversation.tokens import estimate_message_tokens, estimate_tokens
from rein.harness.errors import ModelError, ReinError
from rein.harness.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rein.harness.ports import (
    Model,
    ModelOptions,
    ModelRequest,
    RetryWait,
    ToolSchema,
    TurnDone,
)
from rein.harness.retries import closing_stream

__all__ = [
    "ContextBudget",
    "ContextOverflowError",
    "FitReport",
    "Summarize",
    "estimate_message_tokens",
    "estimate_text_tokens",
    "render_for_summary",
    "valid_cut_points",
]

_ELIDED_PREFIX = "[tool result elided to fit the context window"


def estimate_text_tokens(text: str) -> int:
    return estimate_tokens(text)


def estimate_schema_tokens(system: str, tools: Sequence[ToolSchema]) -> int:
    total = estimate_text_tokens(system)
    for tool in tools:
        total += estimate_text_tokens(tool.name) + estimate_text_tokens(tool.description)
        total += estimate_text_tokens(json.dumps(tool.parameters))
    return total


class ContextOverflowError(ReinError):
    """The context cannot be brought under the window."""


@dataclass(frozen=True, slots=True)
class FitReport:
    kind: Literal["elide", "summarize"]
    tokens_before: int
    tokens_after: int
    messages_affected: int
    detail: str


def valid_cut_points(messages: Sequence[Message]) -> list[int]:
    """Indices ``j`` such that ``messages[:j]`` can be replaced by a summary:
    ``messages[j]`` starts a turn (user or assistant message) and every tool
    call before ``j`` has its result before ``j``."""
    points: list[int] = []
    open_calls: set[str] = set()
    for j, message in enumerate(messages):
        if j > 0 and not open_calls and not isinstance(message, ToolResultMessage):
            points.append(j)
        if isinstance(message, AssistantMessage):
            open_calls.update(c.id for c in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            open_calls.discard(message.tool_call_id)
    return points


def render_for_summary(messages: Sequence[Message], limit_chars: int = 60_000) -> str:
    """The transcript as plain text for the summariser (bounded)."""
    lines: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            lines.append(f"USER: {message.content}")
        elif isinstance(message, ToolResultMessage):
            flag = " (error)" if message.is_error else ""
            lines.append(f"TOOL RESULT {message.tool_name}{flag}: {message.content[:2000]}")
        else:
            for part in message.content:
                if isinstance(part, TextPart):
                    lines.append(f"ASSISTANT: {part.text}")
                elif isinstance(part, ToolCall):
                    lines.append(f"ASSISTANT CALLS {part.name} {json.dumps(part.arguments)[:500]}")
    text = "\n".join(lines)
    if len(text) > limit_chars:
        half = limit_chars // 2
        text = text[:half] + "\n[... middle omitted ...]\n" + text[-half:]
    return text


SUMMARY_SYSTEM = (
    "You compress the history of a coding session so the work can continue in a "
    "smaller context. Be faithful and specific."
)
SUMMARY_INSTRUCTION = (
    "Summarise the conversation above for the agent that continues it: the person's "
    "task and constraints, decisions made, files read and changed (with paths), "
    "commands run and their outcomes, errors still open, and what was about to "
    "happen next. Use short bullet points."
)


async def summarize(
    model: Model, text: str, on_retry: Callable[[RetryWait], None] | None = None
) -> tuple[str, Usage]:
    """Ask ``model`` (no tools) for a summary of ``text``; the summary and
    the tokens it cost. Each retry's wait is passed to ``on_retry`` as it
    begins (the run announces it); the stream is closed when this returns or
    is cancelled, so an abort ends a wait at once."""
    request = ModelRequest(
        system=SUMMARY_SYSTEM,
        messages=[UserMessage(content=text + "\n\n" + SUMMARY_INSTRUCTION, origin="compaction")],
        tools=[],
        options=ModelOptions(tool_choice="none"),
    )
    done: AssistantMessage | None = None
    async with closing_stream(model.stream(request)) as stream:
        async for delta in stream:
            if isinstance(delta, TurnDone):
                done = delta.message
            elif isinstance(delta, RetryWait) and on_retry is not None:
                on_retry(delta)
    if done is None or not done.text.strip():
        raise ModelError("the model returned no summary")
    return done.text, done.usage


Summarize = Callable[[str], Awaitable[str]]


class ContextBudget:
    """Keeps the running estimate of one transcript and fits it to the window.

    ``keep_recent_results`` newest tool results are never elided.
    """

    def __init__(self, window: int, keep_recent_results: int = 4, low_water: float = 0.75) -> None:
        #: The effective window; the Agent sets it before every run (its
        #: configuration and ``context_window_cap`` may have changed).
        self.window = window
        #: Elision frees down to this share of the window, so it happens in
        #: batches (rarely) instead of on every turn, and a provider's prompt
        #: cache survives between batches.
        self.low_water_share = low_water
        self.keep_recent_results = keep_recent_results
        self._sizes: list[int] = []
        self._total = 0
        self._last: Message | None = None
        self._elide_cursor = 0

    # --------------------------------------------------------------- estimate

    def _sync(self, messages: Sequence[Message]) -> None:
        n = len(self._sizes)
        if n > len(messages) or (n and messages[n - 1] is not self._last):
            # The transcript was replaced (reset, compaction by someone else).
            self._sizes, self._total, self._elide_cursor = [], 0, 0
            n = 0
        for message in messages[n:]:
            size = estimate_message_tokens(message)
            self._sizes.append(size)
            self._total += size
        self._last = messages[-1] if messages else None

    def estimate(self, messages: Sequence[Message], overhead: int = 0) -> int:
        self._sync(messages)
        return self._total + overhead

    # -------------------------------------------------------------------- fit

    @property
    def low_water(self) -> int:
        return int(self.window * self.low_water_share)

    def elide(
        self, messages: list[Message], overhead: int, window: int | None = None
    ) -> FitReport | None:
        """Elide the oldest tool results until under ``window`` (default: the
        budget's) (in place)."""
        window = self.window if window is None else window
        low_water = int(window * self.low_water_share)
        before = self.estimate(messages, overhead)
        if before <= window:
            return None
        result_indices = [
            i
            for i in range(self._elide_cursor, len(messages))
            if isinstance(messages[i], ToolResultMessage)
        ]
        protected = (
            set(result_indices[-self.keep_recent_results :]) if self.keep_recent_results else set()
        )
        elided = 0
        for i in result_indices:
            if self._total + overhead <= low_water:
                break
            if i in protected:
                break
            message = messages[i]
            assert isinstance(message, ToolResultMessage)
            self._elide_cursor = i + 1
            if message.content.startswith(_ELIDED_PREFIX):
                continue
            images = f" and {len(message.images)} images" if message.images else ""
            marker = (
                f"{_ELIDED_PREFIX}: {len(message.content)} characters{images}; "
                "run the tool again if you need it]"
            )
            replacement = message.model_copy(update={"content": marker, "images": ()})
            messages[i] = replacement
            size = estimate_message_tokens(replacement)
            self._total += size - self._sizes[i]
            self._sizes[i] = size
            if i == len(messages) - 1:
                self._last = replacement
            elided += 1
        if not elided:
            return None
        after = self._total + overhead
        return FitReport("elide", before, after, elided, f"elided the {elided} oldest tool results")

    async def fit(
        self,
        messages: list[Message],
        overhead: int,
        summarize: Summarize,
        window: int | None = None,
    ) -> list[FitReport]:
        """Bring ``messages`` (in place) under ``window`` (default: the
        budget's); raise :class:`ContextOverflowError` when it cannot be
        done."""
        window = self.window if window is None else window
        reports: list[FitReport] = []
        report = self.elide(messages, overhead, window)
        if report is not None:
            reports.append(report)
        if self.estimate(messages, overhead) <= window:
            return reports
        before = self._total + overhead
        points = valid_cut_points(messages)
        # Keep the newest turns: cut as late as needed to free half the window,
        # but never the last turn start (the model needs the current turn).
        target = window // 2
        cut = None
        running = self._total + overhead
        prefix = 0
        for j in points[:-1] if len(points) > 1 else []:
            while prefix < j:
                running -= self._sizes[prefix]
                prefix += 1
            cut = j
            if running <= target:
                break
        if cut is None:
            raise ContextOverflowError(
                f"the context (~{before} tokens) exceeds the window ({window} tokens) "
                "and has no older turns left to summarise"
            )
        summary = await summarize(render_for_summary(messages[:cut]))
        summary_message = UserMessage(
            content="Summary of the earlier conversation (compacted to fit the context "
            f"window):\n{summary}",
            origin="compaction",
        )
        messages[:cut] = [summary_message]
        self._sizes, self._total, self._elide_cursor, self._last = [], 0, 0, None
        after = self.estimate(messages, overhead)
        reports.append(
            FitReport(
                "summarize",
                before,
                after,
                cut,
                f"summarised the {cut} oldest messages into one",
            )
        )
        if after > window:
            raise ContextOverflowError(
                f"the context is still ~{after} tokens after compaction, over the window of "
                f"{window} tokens (harness.maxContextTokens / contextWindowCap)"
            )
        return reports
