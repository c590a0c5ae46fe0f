"""One edit through a project's tests gate, for ``rein bench tests
--corpus`` (:mod:`rein.bench.tests_corpus`): the gate built as a session
builds it (:func:`gate_for`), a seeded or clean edit judged and restored
(:func:`judge_edit`), and the words of its progress line."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import anyio

from rein.bench.tests_scores import Case
from rein.bench.tests_seeds import Mutation, apply
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.config import TestsGateConfig
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.harness.ports import Mutation as Change
from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.sandboxing import SandboxSettings
from rein.sandboxing.others import OtherCommandsSandbox
from rein.testgate.gate import TestGate
from rein.testgate.runner import RunnerSpec
from rein.testgate.selection import select_tests

__all__ = ["gate_for", "judge_edit", "node_of", "not_by_coverage", "pytest_runs"]


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def node_of(message: str, truth: list[str]) -> str | None:
    """The broken test a blocker names, None when it names none. A test
    file that cannot be collected with the seed (the order the selected
    files import in can differ from the whole suite's) is one when the seed
    breaks any of its tests."""
    for node in truth:
        if message.startswith(node + " "):
            return node
    file, collect, _rest = message.partition(" cannot be collected")
    if collect and any(node == file or node.startswith(file + "::") for node in truth):
        return file
    return None


def gate_for(root: Path, spec: RunnerSpec) -> TestGate:
    """The project's gate, built as the session builder builds it (its
    warm pytest included, in the gates' OS sandbox as the default
    ``sandbox.also`` runs it where bubblewrap works), kept for all of the
    project's verdicts as a session keeps it."""
    config = TestsGateConfig(enabled=True)
    sandbox = OtherCommandsSandbox(str(root), SandboxSettings, "gates")
    return TestGate(
        root,
        SubprocessRunner(str(root), sandbox=sandbox),
        config,
        python=spec.python,
        xdist=spec.xdist,
        launcher=KeptProcessLauncher(str(root), sandbox),
        sandboxed=lambda: sandbox.sandbox() is not None,
    )


async def judge_edit(
    gate: TestGate,
    root: Path,
    mutation: Mutation,
    truth: list[str],
    *,
    repair: bool = False,
    turn_s: float = 0.0,
) -> tuple[Case, GateOutcome]:
    """One seeded edit through the project's gate: before_change, write,
    the gate told of the change, the model's next turn (``turn_s``, at
    least the gate's read-ahead), check, restore; with ``repair``, the
    restored file checked again by the same gate (the repair's verdict, in
    the shadows the first one left); then the run validated."""
    workspace = DiskWorkspace(root)
    config = gate.config
    file = root / mutation.path
    original = file.read_text(encoding="utf-8")
    case = Case(mutation, truth, 0.0)
    selection = select_tests(root, [mutation.path], max_tests=config.max_tests)
    case.selected, case.total, case.run_all = (
        len(selection.files),
        selection.total_files,
        selection.run_all,
    )
    await gate.before_change([mutation.path], workspace)
    file.write_text(apply(original, mutation), encoding="utf-8")
    cpu0 = _cpu()  # the work the gate starts while the model talks counts
    told = time.monotonic()
    # Told of the change, the gate reads it, then judges it (ahead: not
    # waited for here), while the model takes its next turn: at least the
    # read-ahead (as before ``--turn-s``), ``turn_s`` in all. The verdict
    # comes after that.
    gate.on_change(Change(1, (mutation.path,)))
    await gate.prepared()
    rest = turn_s - (time.monotonic() - told)
    if rest > 0:
        await anyio.sleep(rest)  # the model's turn, modelled (see main_tests)
    try:
        started = time.monotonic()
        outcome = await gate.check(
            GateContext(generation=1, touched=frozenset({mutation.path}), workspace=workspace)
        )
        case.wait_s = time.monotonic() - started
        judged = gate.timings.get("judgement")
        case.verdict_s = case.wait_s if judged is None else judged
        cpu1 = _cpu()
        case.phases = dict(gate.timings)
        case.warm_runs = len(gate.warm_runs)
    finally:
        file.write_text(original, encoding="utf-8")
    case.self_cpu_s, case.child_cpu_s = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    if repair:
        started = time.monotonic()
        repaired = await gate.check(
            GateContext(generation=2, touched=frozenset({mutation.path}), workspace=workspace)
        )
        case.repair_s = time.monotonic() - started
        case.repair_blockers = len(repaired.blockers)
        case.repair_unverified = repaired.unverified
    gate.on_validated(2)
    case.unverified = None if outcome.blockers else outcome.unverified
    case.detail = outcome.detail
    case.by_coverage = "selected by coverage: " in outcome.detail
    case.narrowed = case.by_coverage or "per test: " in outcome.detail
    for blocker in outcome.blockers:
        node = node_of(blocker.message, truth)
        case.blockers.append(node or blocker.message)
        if node is None:
            case.false_blockers.append(blocker.message)
    return case, outcome


def pytest_runs(case: Case) -> str:
    """Each pytest run's time in a verdict, for the progress lines."""
    runs = [(n.removesuffix("_pytest"), t) for n, t in case.phases.items() if n.endswith("_pytest")]
    shown = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in runs) or "no pytest run"
    if "after_first" in case.phases:  # the waves' wait after the first run
        shown += f"; after the first {case.phases['after_first']:.2f} s"
    return shown


def not_by_coverage(detail: str) -> str:
    """Why the gate's ``detail`` says coverage did not choose the tests."""
    _, found, why = detail.partition("not by coverage: ")
    return f"not by coverage: {why[:300]}" if found else "not by coverage"
