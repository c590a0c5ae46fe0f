"""Validation gates and the repair prompt.

When the model gives a final answer and the run has unvalidated mutations,
the :class:`GatePipeline` runs its gates in order (dependencies -> analyzer
-> tests -> preview load -> runtime observation -> preview start -> runtime
command -> custom commands; the tests gate is in :mod:`rein.testgate.gate`,
the preview gates are in :mod:`rein.preview.gates`)
and stops at the first that finds blockers. The loop then injects one focused repair
prompt and continues, up to ``maxRepairAttempts``.

Every gate's text (its blockers: a failing test's output, an analyzer's
message, a command's tail; its detail and why it could not look; its
waits and background failures; why it could not take its baseline) passes :mod:`rein.harness.redaction` here,
once for all gates, before it reaches an event, the store or a repair
prompt: the redactor tool results pass (a test that prints the provider's
key shows ``[redacted]``).

A gate that raises is a blocker naming the gate and its error (never a pass);
a gate that could not look is "unverified": the generation is not marked
validated and the run's result lists it. The pipeline lives as long as the
session and keeps the session's validation state
(:class:`~rein.harness.gating.validation.SessionValidation`): changes a run left
unvalidated are validated by the next run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rein.harness.events import (
    Blocker,
    Emit,
    ErrorEvent,
    GateResult,
    GateStart,
    GateStatus,
    GateWaiting,
    Unverified,
)
from rein.harness.gating.dependencies import DependencyCoordinator
from rein.harness.gating.gate_types import (
    MAX_BLOCKERS_IN_PROMPT,
    SEVERITY_LEVELS,
    SEVERITY_NAMES,
    BaselineGate,
    ChangeObserver,
    ClosingGate,
    Gate,
    GateContext,
    GateOutcome,
    ReportingGate,
    RunEndListener,
    StatefulGate,
    ValidationListener,
    code_context,
)
from rein.harness.gating.validation import SessionValidation
from rein.harness.ports import CommandRunner, Mutation, Workspace
from rein.harness.redaction import redact

log = logging.getLogger(__name__)

__all__ = [
    "SEVERITY_LEVELS",
    "SEVERITY_NAMES",
    "CommandGate",
    "DependencyGate",
    "Gate",
    "GateContext",
    "GateOutcome",
    "GatePipeline",
    "Verdict",
    "build_repair_prompt",
    "code_context",
]


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
    """Awaits the installs the DependencyCoordinator runs for manifest
    changes (and redoes an install an abort or a crash interrupted). Each
    manifest counts on its own: a failed install is a blocker with its output
    until that manifest's install succeeds, whatever other manifests do.

    With ``only_when_owed`` (the installs Rein detected, none configured) the
    pipeline skips the gate until a manifest change was owed an install: a
    project with nothing to install sees no dependencies gate."""

    name = "dependencies"

    def __init__(self, coordinator: DependencyCoordinator, *, only_when_owed: bool = False) -> None:
        self.coordinator = coordinator
        self.only_when_owed = only_when_owed

    @property
    def skipped(self) -> bool:
        """No manifest change was owed an install, and the gate only runs then."""
        return self.only_when_owed and not self.coordinator.manifests

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: GateContext) -> GateOutcome:
        await self.coordinator.settle()
        failed = self.coordinator.failed()
        ran = self.coordinator.take_reported()
        if not failed:
            if not ran:
                return GateOutcome(detail="no manifest changed")
            return GateOutcome(
                detail="; ".join(
                    f"`{o.command}` succeeded (generation {o.generation})" for o in ran
                )
            )
        return GateOutcome(
            [
                Blocker(
                    gate=self.name,
                    path=manifest,
                    message=f"the install command `{o.command}` failed with exit code "
                    f"{o.result.exit_code}"
                    + (" (timed out)" if o.result.timed_out else "")
                    + f" (after a change to {manifest})",
                    context=_tail(o.result.output),
                )
                for manifest, o in failed
            ],
            detail="install failed",
        )


@dataclass(slots=True)
class Verdict:
    """What one pass through the gates found."""

    blockers: list[Blocker] = field(default_factory=list)
    #: Gates that could not look (only when nothing blocked).
    unverified: list[Unverified] = field(default_factory=list)
    #: What the blocking gate did not check yet (its outcome's
    #: ``unverified``: a partial verdict), for the repair prompt.
    not_checked: list[str] = field(default_factory=list)

    @property
    def validated(self) -> bool:
        return not self.blockers and not self.unverified


def _redacted_blocker(blocker: Blocker) -> Blocker:
    return blocker.model_copy(
        update={
            "message": redact(blocker.message),
            "context": redact(blocker.context) if blocker.context else blocker.context,
            "also": [redact(text) for text in blocker.also],
            "code": redact(blocker.code) if blocker.code else blocker.code,
        }
    )


def redacted_outcome(outcome: GateOutcome) -> GateOutcome:
    """``outcome`` with every text a gate wrote redacted (its paths are the
    workspace's own)."""
    return GateOutcome(
        [_redacted_blocker(b) for b in outcome.blockers],
        stale=outcome.stale,
        detail=redact(outcome.detail),
        unverified=redact(outcome.unverified) if outcome.unverified else outcome.unverified,
    )


def _shown_detail(outcome: GateOutcome, status: GateStatus) -> str:
    """A gate result's detail: an unverified verdict always says why, first.
    The tests gate's re-run timeout came with no detail ("? tests
    unverified: "), and a verdict judged ahead with only its note ("judged
    ahead, while the model took its turn": trial31; why, ``pytest: command
    not found``, reached neither the terminal nor ACP)."""
    why = outcome.unverified
    if status != "unverified" or not why:
        return outcome.detail
    # Said already ("nobody looked: X" beside "no diagnostics: X").
    if (why.partition(": ")[2] or why) in outcome.detail:
        return outcome.detail
    return f"{why}; {outcome.detail}" if outcome.detail else why


def _status(outcome: GateOutcome) -> GateStatus:
    if outcome.blockers:
        return "blocked"
    return "unverified" if outcome.unverified else "passed"


class _EmitProgress:
    """A gate's waits as ``gate_waiting`` events, its background failures
    as ``error`` events."""

    def __init__(self, gate: str, emit: Emit) -> None:
        self.gate = gate
        self.emit = emit

    def waiting(self, message: str, files: int | None = None) -> None:
        self.emit(GateWaiting(gate=self.gate, phase="begin", message=redact(message), files=files))

    def done(self, message: str) -> None:
        self.emit(GateWaiting(gate=self.gate, phase="end", message=redact(message)))

    def failed(self, message: str) -> None:
        self.emit(ErrorEvent(message=redact(message), where=f"gate:{self.gate}"))


class GatePipeline:
    """The gates of one agent, in order, and the session's validation state."""

    def __init__(
        self,
        gates: Sequence[Gate],
        *,
        dependencies: DependencyCoordinator | None = None,
    ) -> None:
        self.gates = list(gates)
        self.dependencies = dependencies
        self.validation = SessionValidation()

    @property
    def validated_generation(self) -> int:
        return self.validation.validated_generation

    async def close(self) -> None:
        """The session is over: each gate that holds something past its
        runs (:class:`ClosingGate`) lets it go; what raises is logged."""
        for gate in self.gates:
            if isinstance(gate, ClosingGate):
                try:
                    await gate.close()
                except Exception:
                    log.exception("closing the %s gate failed", gate.name)

    def on_run_end(self) -> None:
        """The run ended: what a gate still does in the background for it
        (a baseline no change has waited for) is stopped."""
        for gate in self.gates:
            if isinstance(gate, ReportingGate | RunEndListener):
                gate.on_run_end()

    async def on_run_start(self, generation: int, emit: Emit) -> None:
        """Each gate starts its baseline (the analyzer's is taken in the
        background) and gets the run's progress reporter."""
        for gate in self.gates:
            if isinstance(gate, ReportingGate):
                gate.report_progress(_EmitProgress(gate.name, emit))
            try:
                await gate.on_run_start(generation)
            except Exception as exc:  # one failing part does not stop the others
                log.exception("gate %s could not take its baseline", gate.name)
                emit(
                    ErrorEvent(
                        message=redact(f"gate {gate.name} could not take its baseline: {exc}"),
                        where=f"gate:{gate.name}",
                    )
                )

    async def before_change(self, paths: Sequence[str], workspace: Workspace) -> None:
        """The run is about to change ``paths``: gates capture their
        baselines. Never raises (a failure only costs the baseline)."""
        for gate in self.gates:
            if not isinstance(gate, BaselineGate):
                continue
            try:
                await gate.before_change(paths, workspace)
            except Exception:
                log.exception("gate %s could not capture a baseline for %s", gate.name, paths)

    def on_mutation(self, mutation: Mutation, spawn: Callable[..., object]) -> None:
        if self.dependencies is not None:
            self.dependencies.on_mutation(mutation, spawn)
        for gate in self.gates:
            if isinstance(gate, ChangeObserver):
                try:
                    gate.on_change(mutation)
                except Exception:  # costs only the work it would start
                    log.exception("gate %s could not take a change", gate.name)

    async def check(self, ctx: GateContext, emit: Emit) -> Verdict:
        """Run the gates in order; stop at the first with blockers. The
        generation is validated only when every gate looked and passed."""
        if ctx.emit is None:
            ctx.emit = emit
        verdict = Verdict()
        for gate in self.gates:
            if isinstance(gate, DependencyGate) and gate.skipped:
                continue
            emit(GateStart(gate=gate.name, generation=ctx.generation))
            started = time.perf_counter()
            try:
                outcome = await gate.check(ctx)
            except Exception as exc:
                log.exception("gate %s failed to run", gate.name)
                error = redact(f"{type(exc).__name__}: {exc}")
                outcome = GateOutcome(
                    [
                        Blocker(
                            gate=gate.name, message=f"the {gate.name} gate failed to run: {error}"
                        )
                    ],
                    detail=f"the gate failed to run: {error}",
                )
                emit(ErrorEvent(message=outcome.detail, where=f"gate:{gate.name}"))
            outcome = redacted_outcome(outcome)  # the one place for every gate's text
            status = _status(outcome)
            emit(
                GateResult(
                    gate=gate.name,
                    passed=status == "passed",
                    status=status,
                    blockers=outcome.blockers,
                    duration_ms=(time.perf_counter() - started) * 1000.0,
                    stale=outcome.stale,
                    detail=_shown_detail(outcome, status),
                )
            )
            if outcome.blockers:
                verdict.blockers = outcome.blockers
                verdict.unverified = []
                verdict.not_checked = [outcome.unverified] if outcome.unverified else []
                return verdict
            if outcome.unverified:
                verdict.unverified.append(
                    Unverified(gate=gate.name, generation=ctx.generation, reason=outcome.unverified)
                )
        if verdict.validated:
            self.mark_validated(ctx.generation)
        return verdict

    def state_json(self) -> dict[str, Any]:
        """The session's validation state for the store: the unvalidated
        changes and, while there are any, the gates' baselines for them."""
        data = self.validation.to_json()
        if self.validation.pending:
            gates = {
                gate.name: gate.export_state()
                for gate in self.gates
                if isinstance(gate, StatefulGate)
            }
            data["gates"] = {name: state for name, state in gates.items() if state}
        return data

    def restore_state(self, data: dict[str, Any]) -> None:
        """A stored :meth:`state_json` (a resumed session)."""
        self.validation = SessionValidation.from_json(data)
        stored = data.get("gates") or {}
        for gate in self.gates:
            if isinstance(gate, StatefulGate) and isinstance(stored.get(gate.name), dict):
                try:
                    gate.import_state(stored[gate.name])
                except Exception:
                    log.exception("gate %s could not restore its stored state", gate.name)

    def mark_validated(self, generation: int) -> None:
        self.validation.validated(generation)
        for gate in self.gates:
            if isinstance(gate, ValidationListener):
                gate.on_validated(generation)


def _format_blocker(b: Blocker) -> str:
    if b.path is not None and b.line is not None:
        where = f"{b.path}:{b.line + 1}:{(b.character or 0) + 1}"
        sev = SEVERITY_NAMES.get(b.severity or 1, "error")
        code = f" {b.code}" if b.code else ""
        source = f" ({b.source})" if b.source else ""
        head = f"- [{b.gate}] {where} {sev}{code}{source}: {b.message}"
    else:
        head = f"- [{b.gate}] {b.message}"
    for other in b.also:
        head += f"\n    also reported by {other}"
    if b.context:
        body = "\n".join("    " + line for line in b.context.splitlines())
        return f"{head}\n{body}"
    return head


#: How many other places of one error the prompt lists after its first.
MAX_PLACES_LISTED = 10


def _place(b: Blocker) -> str:
    """``path:line:column`` (1-based; the column when known): one line may
    hold the error twice."""
    column = f":{b.character + 1}" if b.character is not None else ""
    return f"{b.path}:{(b.line or 0) + 1}{column}"


def _group_same_error(blockers: Sequence[Blocker]) -> list[list[Blocker]]:
    """Blockers of one gate with the same rule and message at several
    places (one cause: a name that went away, a module that cannot be
    imported) are one group, in the order of their first member."""
    groups: dict[tuple[object, ...], list[Blocker]] = {}
    out: list[list[Blocker]] = []
    for b in blockers:
        if b.path is None or b.line is None:
            out.append([b])
            continue
        key = (b.gate, b.code, b.source, b.message)
        group = groups.get(key)
        if group is None:
            groups[key] = group = []
            out.append(group)
        group.append(b)
    return out


def build_repair_prompt(
    blockers: Sequence[Blocker], attempt: int, max_attempts: int, not_checked: Sequence[str] = ()
) -> str:
    """The focused repair prompt. It lists what blocks in the order the gate
    gave (the analyzer gate: the cause first), one error at several places
    once with the other places, at most :data:`MAX_BLOCKERS_IN_PROMPT` of
    them, and says how many it left out, and what the blocking check did
    not look at yet (``not_checked``: a partial verdict). It claims nothing
    about the checks that did not run."""
    lines = [
        "The checks that ran after your changes found problems that must be fixed before "
        "the task is done:",
        "",
    ]
    groups = _group_same_error(blockers)
    shown = 0
    for group in groups[:MAX_BLOCKERS_IN_PROMPT]:
        head, others = group[0], group[1:]
        text = _format_blocker(head)
        if others:
            places = ", ".join(_place(b) for b in others[:MAX_PLACES_LISTED])
            more = len(others) - MAX_PLACES_LISTED
            text += f"\n    the same error at {len(others)} more place(s): {places}"
            if more > 0:
                text += f" and {more} more"
        lines.append(text)
        shown += len(group)
    left_out = len(blockers) - shown
    if left_out > 0:
        lines.append(
            f"- ... and {left_out} more problem(s) not shown here "
            f"({len(blockers)} in all; fix the ones above first, the checks run again)"
        )
    for clause in not_checked:
        lines.append(
            f"- Not everything was checked ({clause}); the checks run again after your fix."
        )
    lines += [
        "",
        f"Repair attempt {attempt} of {max_attempts}. Fix the cause (do not silence the "
        "checker), then reply with a short summary of what you changed.",
    ]
    return "\n".join(lines)
