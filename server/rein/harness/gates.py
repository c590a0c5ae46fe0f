"""Validation gates and the repair prompt.

When the model gives a final answer and the run has unvalidated mutations,
the :class:`GatePipeline` runs its gates in order (dependencies -> analyzer
-> preview load -> runtime observation -> preview start -> runtime command
-> custom commands; the preview gates are in :mod:`rein.harness.preview`)
and stops at the first that finds blockers. The loop then injects one focused repair
prompt and continues, up to ``maxRepairAttempts``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rein.harness.coordinators import DependencyCoordinator
from rein.harness.errors import ReinError
from rein.harness.events import Blocker, Emit, GateResult, GateStart
from rein.harness.ports import (
    CommandRunner,
    Diagnostic,
    DiagnosticsSnapshot,
    DiagnosticsSource,
    Mutation,
    Workspace,
)

__all__ = [
    "AnalyzerGate",
    "CommandGate",
    "DependencyGate",
    "Gate",
    "GateContext",
    "GateOutcome",
    "GatePipeline",
    "build_repair_prompt",
    "code_context",
]

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SEVERITY_LEVELS = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}
MAX_BLOCKERS_IN_PROMPT = 20


@dataclass(slots=True)
class GateContext:
    generation: int
    #: Paths the agent changed in this run.
    touched: frozenset[str]
    workspace: Workspace | None = None
    #: The run's emit, set by :meth:`GatePipeline.check`: events a gate causes
    #: (the preview's) reach the run's listeners.
    emit: Emit | None = None


@dataclass(slots=True)
class GateOutcome:
    blockers: list[Blocker] = field(default_factory=list)
    stale: bool = False
    detail: str = ""


class Gate(Protocol):
    name: str

    async def on_run_start(self, generation: int) -> None: ...

    async def check(self, ctx: GateContext) -> GateOutcome: ...


async def code_context(
    workspace: Workspace | None, path: str, line: int, radius: int = 2
) -> str | None:
    """Lines ``line-radius .. line+radius`` (0-based ``line``) with numbers
    and a marker on the line itself."""
    if workspace is None:
        return None
    try:
        text = (await workspace.read_text(path)).text
    except (ReinError, OSError):
        return None
    lines = text.splitlines()
    if not lines:
        return None
    start = max(0, line - radius)
    end = min(len(lines), line + radius + 1)
    width = len(str(end))
    return "\n".join(
        f"{'>' if i == line else ' '} {str(i + 1).rjust(width)} | {lines[i]}"
        for i in range(start, end)
    )


def _key(d: Diagnostic) -> tuple[str, str | None, str]:
    return (d.path, d.code, d.message)


def _new_or_touched(
    current: Sequence[Diagnostic], baseline: Sequence[Diagnostic], touched: frozenset[str]
) -> list[Diagnostic]:
    """The blocking diagnostics: all in touched files; elsewhere those not in
    the baseline. A file the run did not touch kept its lines, so a baseline
    entry is matched at the same line first (so a new duplicate of an old
    error is the one reported); what is left is matched by file, code and
    message alone (lines the person moved meanwhile)."""
    exact = Counter((*_key(d), d.line) for d in baseline)
    loose = Counter(_key(d) for d in baseline)
    ordered = sorted(current, key=lambda d: (d.path, d.line, d.character))
    unmatched: list[Diagnostic] = []
    blocking: list[Diagnostic] = []
    for d in ordered:
        if d.path in touched:
            blocking.append(d)
        elif exact[(*_key(d), d.line)] > 0:
            exact[(*_key(d), d.line)] -= 1
            loose[_key(d)] -= 1
        else:
            unmatched.append(d)
    for d in unmatched:
        if loose[_key(d)] > 0:
            loose[_key(d)] -= 1
        else:
            blocking.append(d)
    return sorted(blocking, key=lambda d: (d.path, d.line, d.character))


class AnalyzerGate:
    """Blocking: diagnostics at or above ``severity`` in files touched this
    run, plus such diagnostics elsewhere that were not in the baseline taken
    at run start (matched by file, code and message as a multiset)."""

    name = "analyzer"

    def __init__(self, diagnostics: DiagnosticsSource, severity: str | int = "error") -> None:
        self.diagnostics = diagnostics
        self.threshold = severity if isinstance(severity, int) else SEVERITY_LEVELS[severity]
        self.baseline: DiagnosticsSnapshot | None = None

    async def on_run_start(self, generation: int) -> None:
        self.baseline = await self.diagnostics.snapshot(None, min_generation=generation)

    async def check(self, ctx: GateContext) -> GateOutcome:
        snap = await self.diagnostics.snapshot(None, min_generation=ctx.generation)
        serious = [d for d in snap.diagnostics if d.severity <= self.threshold]
        baseline = self.baseline.diagnostics if self.baseline else ()
        blocking = _new_or_touched(serious, baseline, ctx.touched)
        blockers = [
            Blocker(
                gate=self.name,
                path=d.path,
                line=d.line,
                character=d.character,
                severity=d.severity,
                code=d.code,
                source=d.source,
                message=d.message,
                context=await code_context(ctx.workspace, d.path, d.line),
            )
            for d in blocking[:MAX_BLOCKERS_IN_PROMPT]
        ]
        detail = f"{len(serious)} diagnostics at or above the threshold, {len(blocking)} blocking"
        if snap.stale:
            detail += "; diagnostics may be stale (the analyzer did not answer in time)"
        return GateOutcome(blockers, snap.stale, detail)


def _tail(text: str, limit: int = 3000) -> str:
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


class CommandGate:
    """A one-shot command (the runtime check, e.g. the tests, or a custom
    gate): a non-zero exit is a blocker with the output tail."""

    def __init__(
        self, name: str, command: str, runner: CommandRunner, timeout_s: float = 600.0
    ) -> None:
        self.name = name
        self.command = command
        self.runner = runner
        self.timeout_s = timeout_s

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: GateContext) -> GateOutcome:
        result = await self.runner.run(self.command, timeout_s=self.timeout_s)
        if result.exit_code == 0 and not result.timed_out:
            return GateOutcome(detail=f"`{self.command}` exited 0")
        how = "timed out" if result.timed_out else f"exited with {result.exit_code}"
        return GateOutcome(
            [
                Blocker(
                    gate=self.name, message=f"`{self.command}` {how}", context=_tail(result.output)
                )
            ],
            detail=how,
        )


class DependencyGate:
    """Awaits the install the DependencyCoordinator started for a manifest
    change; a failed install is a blocker with its output."""

    name = "dependencies"

    def __init__(self, coordinator: DependencyCoordinator) -> None:
        self.coordinator = coordinator
        self._checked_outcomes = 0

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: GateContext) -> GateOutcome:
        outcome = await self.coordinator.wait()
        outcomes = self.coordinator.outcomes
        fresh = outcomes[self._checked_outcomes :]
        self._checked_outcomes = len(outcomes)
        if outcome is None or not fresh:
            return GateOutcome(detail="no manifest changed")
        failed = outcome.result.exit_code != 0 or outcome.result.timed_out
        if not failed:
            return GateOutcome(
                detail=f"`{outcome.command}` succeeded (generation {outcome.generation})"
            )
        # A failed install stays a blocker until a newer one succeeds.
        self._checked_outcomes -= 1
        return GateOutcome(
            [
                Blocker(
                    gate=self.name,
                    message=f"the install command `{outcome.command}` failed with exit code "
                    f"{outcome.result.exit_code}",
                    context=_tail(outcome.result.output),
                )
            ],
            detail="install failed",
        )


class GatePipeline:
    """The gates of one agent, in order."""

    def __init__(
        self,
        gates: Sequence[Gate],
        *,
        dependencies: DependencyCoordinator | None = None,
    ) -> None:
        self.gates = list(gates)
        self.dependencies = dependencies
        self.validated_generation = 0

    async def on_run_start(self, generation: int, emit: Emit) -> None:
        for gate in self.gates:
            try:
                await gate.on_run_start(generation)
            except Exception as exc:  # one failing part does not stop the others
                from rein.harness.events import ErrorEvent

                emit(
                    ErrorEvent(
                        message=f"gate {gate.name} could not take its baseline: {exc}",
                        where=f"gate:{gate.name}",
                    )
                )

    def on_mutation(self, mutation: Mutation, spawn: Callable[..., object]) -> None:
        if self.dependencies is not None:
            self.dependencies.on_mutation(mutation, spawn)

    async def check(self, ctx: GateContext, emit: Emit) -> list[Blocker]:
        """Run the gates in order; stop at the first with blockers."""
        if ctx.emit is None:
            ctx.emit = emit
        for gate in self.gates:
            emit(GateStart(gate=gate.name, generation=ctx.generation))
            started = time.perf_counter()
            try:
                outcome = await gate.check(ctx)
            except Exception as exc:
                outcome = GateOutcome(detail=f"the gate failed to run: {type(exc).__name__}: {exc}")
                from rein.harness.events import ErrorEvent

                emit(ErrorEvent(message=outcome.detail, where=f"gate:{gate.name}"))
            emit(
                GateResult(
                    gate=gate.name,
                    passed=not outcome.blockers,
                    blockers=outcome.blockers,
                    duration_ms=(time.perf_counter() - started) * 1000.0,
                    stale=outcome.stale,
                    detail=outcome.detail,
                )
            )
            if outcome.blockers:
                return outcome.blockers
        self.validated_generation = max(self.validated_generation, ctx.generation)
        return []


def _format_blocker(b: Blocker) -> str:
    if b.path is not None and b.line is not None:
        where = f"{b.path}:{b.line + 1}:{(b.character or 0) + 1}"
        sev = SEVERITY_NAMES.get(b.severity or 1, "error")
        code = f" {b.code}" if b.code else ""
        source = f" ({b.source})" if b.source else ""
        head = f"- [{b.gate}] {where} {sev}{code}{source}: {b.message}"
    else:
        head = f"- [{b.gate}] {b.message}"
    if b.context:
        body = "\n".join("    " + line for line in b.context.splitlines())
        return f"{head}\n{body}"
    return head


def build_repair_prompt(blockers: Sequence[Blocker], attempt: int, max_attempts: int) -> str:
    lines = [
        "The checks that ran after your changes found problems that must be fixed before "
        "the task is done:",
        "",
    ]
    lines.extend(_format_blocker(b) for b in blockers[:MAX_BLOCKERS_IN_PROMPT])
    if len(blockers) > MAX_BLOCKERS_IN_PROMPT:
        lines.append(f"- ... and {len(blockers) - MAX_BLOCKERS_IN_PROMPT} more")
    lines += [
        "",
        f"Repair attempt {attempt} of {max_attempts}. Fix the cause (do not silence the "
        "checker), then reply with a short summary of what you changed.",
    ]
    return "\n".join(lines)
