"""A run's side of validation: what its gates must look at, and what it
leaves to the session.

:class:`RunValidation` is created per run by the loop. At the start it
carries the changes earlier runs of the session left unvalidated (a
``carried_changes`` event says so), lets the gates take their run-start
baselines, and hooks the workspace layer so that the gates capture a file's
baseline before the run (or its subagents) first changes it. On a final
answer it runs the gates over every change in the run record (tools',
commands', subagents', carried); at the end it hands what is still not
validated back to the session's :class:`~rein.harness.gating.validation.
SessionValidation`.
"""

from __future__ import annotations

from collections.abc import Callable

from rein.harness.events import CarriedChanges, Emit, Unverified
from rein.harness.gating.gates import GateContext, GatePipeline, Verdict
from rein.harness.ports import ChangeAnnouncer, Workspace
from rein.harness.run.run_record import RunRecord, active_records

__all__ = ["RunValidation"]


class RunValidation:
    def __init__(self, gates: GatePipeline | None, record: RunRecord, emit: Emit) -> None:
        self.gates = gates
        self.record = record
        self.emit = emit
        #: Gates that could not look at this run's changes.
        self.unverified: list[Unverified] = []
        self._unhook: Callable[[], None] | None = None
        self._ended = False

    async def begin(self, workspace: Workspace | None) -> None:
        gates = self.gates
        if gates is None:
            return
        carried = [m for m in gates.validation.pending if m not in self.record.carried]
        if carried:
            self.record.carried.extend(carried)
            self.emit(
                CarriedChanges(
                    generations=sorted({m.generation for m in carried}),
                    paths=sorted({p for m in carried for p in m.paths}),
                )
            )
        if isinstance(workspace, ChangeAnnouncer):
            record = self.record

            async def before_change(paths: tuple[str, ...]) -> None:
                # Only this run's changes (its tools', its subagents').
                if any(r is record for r in active_records()):
                    await gates.before_change(paths, workspace)

            self._unhook = workspace.before_change(before_change)
        await gates.on_run_start(workspace.generation if workspace else 0, self.emit)

    def unvalidated(self) -> bool:
        gates = self.gates
        if gates is None:
            return False
        return any(gates.validation.is_pending(m) for m in self.record.to_validate())

    async def check(self, workspace: Workspace | None) -> Verdict:
        assert self.gates is not None
        mutations = self.record.to_validate()
        generation = max(m.generation for m in mutations)
        if workspace is not None:
            generation = max(generation, workspace.generation)
        touched = frozenset(p for m in mutations for p in m.paths)
        first: dict[str, int] = {}
        for m in mutations:
            for path in m.paths:
                first[path] = min(first.get(path, m.generation), m.generation)
        ctx = GateContext(generation, touched, workspace, first_change=first)
        verdict = await self.gates.check(ctx, self.emit)
        self.unverified = list(verdict.unverified)
        return verdict

    def end(self) -> None:
        """The run ended (any status): unhook, and leave what is not
        validated to the session."""
        if self._ended:
            return
        self._ended = True
        if self._unhook is not None:
            self._unhook()
            self._unhook = None
        if self.gates is not None:
            self.gates.on_run_end()
            self.gates.validation.run_ended(
                m for m in self.record.to_validate() if self.gates.validation.is_pending(m)
            )
