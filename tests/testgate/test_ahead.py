"""The tests gate's judgement made while the model takes its turn
(:mod:`rein.testgate.ahead`): a fake runner behind a configured command,
and one real pytest run."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable
from pathlib import Path

import anyio

from rein.harness.config import TestsGateConfig
from rein.harness.gating.dependencies import DependencyCoordinator
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.harness.gating.gates import GatePipeline
from rein.harness.ports import Mutation
from rein.testgate.gate import TestGate
from tests.fakes.commands import FakeCommandRunner, FakeTestsRunner
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import BAD, GOOD, gate_for, project

OK = "def f():\n    return 1\n"
BROKEN = "def f():\n    return 2  # BROKEN\n"
FIXED = "def f():\n    return 1  # fixed\n"
AHEAD = "judged ahead"


def _setup(
    tmp_path: Path,
    installs: DependencyCoordinator | None = None,
    sandboxed: Callable[[], bool] = lambda: False,
    **config: object,
) -> tuple[TestGate, FakeTestsRunner, FakeWorkspace]:
    root = project(tmp_path / "proj", {"mod.py": OK, "tests/test_mod.py": "def test_mod(): ...\n"})
    runner = FakeTestsRunner()
    config = TestsGateConfig.model_validate({"command": "fake-tests {junit}", **config})
    gate = TestGate(root, runner, config, python="python", installs=installs, sandboxed=sandboxed)
    return gate, runner, FakeWorkspace({"mod.py": OK}, root=str(root))


async def _change(
    gate: TestGate, workspace: FakeWorkspace, text: str, generation: int, *, saved: bool = True
) -> None:
    """The run's change of mod.py to ``text`` (on disk too when ``saved``),
    then the gate told of it after the tool turn."""
    await gate.before_change(["mod.py"], workspace)
    workspace.buffers["mod.py"] = (text, generation)
    if saved:
        (gate.root / "mod.py").write_text(text, encoding="utf-8")
    gate.on_change(Mutation(generation, ("mod.py",)))


async def _verdict(gate: TestGate, workspace: FakeWorkspace, generation: int) -> GateOutcome:
    return await gate.check(
        GateContext(generation=generation, touched=frozenset({"mod.py"}), workspace=workspace)
    )


async def test_a_verdict_whose_inputs_are_the_judgements_takes_it_and_runs_nothing_more(
    tmp_path: Path,
) -> None:
    gate, runner, workspace = _setup(tmp_path)
    runner.hold = anyio.Event()
    await _change(gate, workspace, BROKEN, 2)
    await runner.started(1)  # the first run, while the model talks
    verdict = asyncio.ensure_future(_verdict(gate, workspace, 2))
    runner.hold.set()
    outcome = await verdict
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_mod failed: assert broken"
    ]
    assert AHEAD in outcome.detail
    # One judgement: its first run, re-run and baseline run; none at check.
    assert sorted(runner.texts) == sorted([BROKEN, BROKEN, OK])
    assert gate.ahead.started == 1 and runner.cancelled == 0
    await gate.close()


async def test_a_text_changed_after_the_judgement_started_is_judged_afresh(
    tmp_path: Path,
) -> None:
    gate, runner, workspace = _setup(tmp_path)
    runner.hold = anyio.Event()
    await _change(gate, workspace, BROKEN, 2)
    await runner.started(1)
    # A new change cancels the judgement running and starts another.
    await _change(gate, workspace, FIXED, 3)
    await runner.started(2)
    assert runner.cancelled == 1 and runner.texts == [BROKEN, FIXED]
    runner.hold.set()
    outcome = await _verdict(gate, workspace, 3)
    assert (outcome.blockers, outcome.unverified) == ([], None)
    assert AHEAD in outcome.detail and runner.texts == [BROKEN, FIXED]

    # The editor holds a text the judgement ahead did not read (unsaved):
    # its outcome is for other texts, never the verdict's.
    await _change(gate, workspace, BROKEN, 4)
    with anyio.fail_after(30):
        await runner.started(5)  # its first run, re-run and baseline run
        await runner.idle()
    workspace.buffers["mod.py"] = (FIXED, 5)
    outcome = await _verdict(gate, workspace, 4)
    assert (outcome.blockers, outcome.unverified) == ([], None)
    assert AHEAD not in outcome.detail
    assert runner.texts[-1] == FIXED and len(runner.texts) == 6
    await gate.close()


async def test_ahead_false_starts_nothing(tmp_path: Path) -> None:
    gate, runner, workspace = _setup(tmp_path, ahead=False)
    await _change(gate, workspace, BROKEN, 2)
    assert not gate.ahead.running() and runner.texts == []
    outcome = await _verdict(gate, workspace, 2)
    assert outcome.blockers and AHEAD not in outcome.detail
    assert gate.ahead.started == 0 and sorted(runner.texts) == sorted([BROKEN, BROKEN, OK])
    await gate.close()


async def test_the_runs_end_stops_a_judgement_running_ahead(tmp_path: Path) -> None:
    gate, runner, workspace = _setup(tmp_path)
    runner.hold = anyio.Event()
    await _change(gate, workspace, BROKEN, 2)
    await runner.started(1)
    GatePipeline([gate]).on_run_end()  # an abort ends the run too
    with anyio.fail_after(30):
        await runner.idle()
    assert runner.cancelled == 1 and len(runner.texts) == 1
    # The next verdict judges afresh.
    runner.hold.set()
    outcome = await _verdict(gate, workspace, 2)
    assert outcome.blockers and AHEAD not in outcome.detail
    await gate.close()


async def test_a_file_outside_the_changes_changed_after_the_judgement_is_judged_afresh(
    tmp_path: Path,
) -> None:
    """A file no change reports (gitignored data a command or the person
    wrote) is what the judgement's syncs saw: changed since, it is judged
    again (review26b HIGH 1)."""
    gate, runner, workspace = _setup(tmp_path)
    (gate.root / ".gitignore").write_text("want.txt\n")
    (gate.root / "want.txt").write_text("2\n")
    await _change(gate, workspace, BROKEN, 2)
    with anyio.fail_after(30):
        await runner.started(3)  # the judgement's three runs
        await runner.idle()
    (gate.root / "want.txt").write_text("10\n")  # no mutation, no generation
    outcome = await _verdict(gate, workspace, 2)
    assert outcome.blockers and AHEAD not in outcome.detail
    assert "the workspace changed since the judgement ahead" in outcome.detail
    assert len(runner.texts) == 6  # judged again at check
    await gate.close()


async def test_a_command_started_after_the_judgement_voids_it(tmp_path: Path) -> None:
    """A command can write where no walk of the workspace looks (a ``pip
    install`` into the linked ``.venv``, a folder outside the workspace):
    one started after the judgement ahead makes the verdict judge afresh
    (review26d HIGH)."""
    gate, runner, workspace = _setup(tmp_path)
    await _change(gate, workspace, BROKEN, 2)
    with anyio.fail_after(30):
        await runner.started(3)
        await runner.idle()
    await gate.before_change([], workspace)  # a command about to run; it changes no file here
    outcome = await _verdict(gate, workspace, 2)
    assert outcome.blockers and AHEAD not in outcome.detail
    assert len(runner.texts) == 6  # judged again at check
    await gate.close()


async def test_a_judgement_made_unsandboxed_is_not_taken_by_a_sandboxed_verdict(
    tmp_path: Path,
) -> None:
    """``sandbox.also`` is read at every run: changed since the judgement
    ahead, the verdict judges afresh (review26b LOW 2)."""
    sandboxed = [False]
    gate, runner, workspace = _setup(tmp_path, sandboxed=lambda: sandboxed[0])
    await _change(gate, workspace, BROKEN, 2)
    with anyio.fail_after(30):
        await runner.started(3)
        await runner.idle()
    sandboxed[0] = True
    outcome = await _verdict(gate, workspace, 2)
    assert outcome.blockers and AHEAD not in outcome.detail and len(runner.texts) == 6
    await gate.close()


def _installs() -> tuple[DependencyCoordinator, FakeCommandRunner, set[asyncio.Future[None]]]:
    runner = FakeCommandRunner()
    runner.gate = anyio.Event()
    workers: set[asyncio.Future[None]] = set()
    coordinator = DependencyCoordinator(runner, {"requirements.txt": "pip install"})
    return coordinator, runner, workers


async def test_no_judgement_is_made_ahead_while_an_install_is_owed(tmp_path: Path) -> None:
    """The turn changed a manifest: its install would end after the
    judgement started, so none starts; the verdict judges afresh
    (review26b HIGH 2)."""
    installs, pip, workers = _installs()
    gate, runner, workspace = _setup(tmp_path, installs)
    await gate.before_change(["mod.py"], workspace)
    workspace.buffers["mod.py"] = (BROKEN, 2)
    (gate.root / "mod.py").write_text(BROKEN)
    GatePipeline([gate], dependencies=installs).on_mutation(
        Mutation(2, ("mod.py", "requirements.txt")),
        lambda worker: workers.add(asyncio.ensure_future(worker())),
    )
    outcome = await _verdict(gate, workspace, 2)  # the install still runs
    assert outcome.blockers and AHEAD not in outcome.detail
    assert gate.ahead.started == 0 and len(runner.texts) == 3
    assert pip.gate is not None
    pip.gate.set()
    await installs.wait()
    await gate.close()


async def test_an_install_finished_after_the_judgement_started_voids_it(tmp_path: Path) -> None:
    installs, pip, workers = _installs()
    gate, runner, workspace = _setup(tmp_path, installs)
    runner.hold = anyio.Event()
    await _change(gate, workspace, BROKEN, 2)
    await runner.started(1)
    # An install the gate was told nothing of (one an abort interrupted,
    # redone by the dependencies gate's settle) ends meanwhile.
    installs.on_mutation(
        Mutation(3, ("requirements.txt",)),
        lambda worker: workers.add(asyncio.ensure_future(worker())),
    )
    assert pip.gate is not None
    pip.gate.set()
    await installs.wait()
    runner.hold.set()
    with anyio.fail_after(30):
        await runner.started(3)  # the judgement ahead ends
        await runner.idle()
    outcome = await _verdict(gate, workspace, 2)
    assert outcome.blockers and AHEAD not in outcome.detail
    assert gate.ahead.started == 1 and len(runner.texts) == 6
    await gate.close()


async def test_a_judgement_cancelled_before_its_first_step_leaves_no_coroutine_unawaited(
    tmp_path: Path,
) -> None:
    gate, _, workspace = _setup(tmp_path)
    await _change(gate, workspace, BROKEN, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # One pass of the loop at a time: stop at the first where the
        # judgement's task is made and has not taken its first step.
        while gate.ahead.started == 0:  # noqa: ASYNC110
            await asyncio.sleep(0)
        gate.on_change(Mutation(3, ("mod.py",)))
        await gate.close()
        gc.collect()
    assert [w for w in caught if "never awaited" in str(w.message)] == []


TESTS = """from mod import first_n


def test_first_two():
    assert first_n([1, 2, 3], 2) == [1, 2]


def test_empty():
    assert first_n([], 3) == []
"""


async def test_a_blocked_verdict_judged_ahead_names_the_blockers_one_judged_at_check_names(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    workspace = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    await gate.before_change(["mod.py"], workspace)
    workspace.buffers["mod.py"] = (BAD, 2)
    (root / "mod.py").write_text(BAD)  # rein run: the change is on disk
    gate.on_change(Mutation(2, ("mod.py",)))
    context = GateContext(generation=2, touched=frozenset({"mod.py"}), workspace=workspace)
    ahead = await gate.check(context)
    assert AHEAD in ahead.detail and gate.ahead.started == 1
    at_check = await gate.check(context)  # the judgement ahead was taken
    assert AHEAD not in at_check.detail
    assert [(b.message, b.path, b.line) for b in ahead.blockers] == [
        (b.message, b.path, b.line) for b in at_check.blockers
    ]
    assert [b.message for b in ahead.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    await gate.close()


async def test_a_judgement_ahead_that_ran_no_test_is_taken_until_the_workspace_changes(
    tmp_path: Path,
) -> None:
    """Coverage or the import graph can say no test reaches a change: then
    no pytest runs, and no sync of a shadow says what the workspace was. A
    walk taken before the judgement read anything says it: the judgement is
    taken while the workspace is as it was (it was judged again, and said
    "the workspace changed", review26d), and judged again once a test file
    that reaches the change appeared beside it."""
    root = project(
        tmp_path / "proj", {"mod.py": GOOD, "other.py": "X = 1\n", "tests/test_mod.py": TESTS}
    )
    workspace = FakeWorkspace({"other.py": "X = 1\n"}, root=str(root))
    gate = gate_for(root)
    await gate.before_change(["other.py"], workspace)
    workspace.buffers["other.py"] = ("X = 2\n", 2)
    (root / "other.py").write_text("X = 2\n")
    gate.on_change(Mutation(2, ("other.py",)))
    context = GateContext(generation=2, touched=frozenset({"other.py"}), workspace=workspace)
    taken = await gate.check(context)
    assert (taken.blockers, taken.unverified) == ([], None)
    assert "no test reaches the changed files" in taken.detail
    assert AHEAD in taken.detail and "changed since" not in taken.detail

    gate.on_change(Mutation(2, ("other.py",)))  # the same inputs, judged ahead again
    with anyio.fail_after(60):
        await gate.ahead.finished()
    (root / "tests" / "test_other.py").write_text(
        "from other import X\n\n\ndef test_x():\n    assert X == 1\n"
    )  # a file no change reports (the person's)
    again = await gate.check(context)
    assert AHEAD not in again.detail
    assert "the workspace changed since the judgement ahead" in again.detail
    assert [b.message for b in again.blockers] == [
        "tests/test_other.py::test_x failed: assert 2 == 1"
    ]
    await gate.close()
