"""An error in a file the run did not change that is not there with the
changed files shown as before is asked about once more, with the texts as
they are (rein.analysis.counterfactual, AnsweringDiagnostics): one the
analyzers do not report again is not the run's. basedpyright's inference
over circular imports depends on the order it checks files in: at sympy's
``is_random`` command edit, ``stats/tests/test_finite_rv.py:109`` gained
eight ``reportIndexIssue`` errors in 3 of 5 first verdicts, blocking, that
neither its baseline nor the command line (before or after) had, and that
were gone when it was checked again."""

from __future__ import annotations

import pytest

from rein.analysis.baselines import FileBaseline
from rein.analysis.counterfactual import not_the_runs
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.ports import Diagnostic
from tests.fakes.diagnostics import AnsweringFakeDiagnostics, SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace

BROKEN = Diagnostic(
    path="pkg/crv.py",
    line=31,
    code="reportAttributeAccessIssue",
    message='"is_random" is unknown import symbol',
)
ORDER = Diagnostic(
    path="pkg/test_finite.py",
    line=109,
    code="reportIndexIssue",
    message='"__getitem__" method not defined on type "Density"',
)
CHANGED = {"pkg/rv.py": ("def is_random(x): ...\n", "def is_random_x(x): ...\n")}


async def _ask(source: object) -> tuple[list[Diagnostic], int]:
    workspace = FakeWorkspace({"pkg/crv.py": "", "pkg/test_finite.py": ""})
    workspace.files.update({p: now for p, (_, now) in CHANGED.items()})
    files = {p: FileBaseline(p, was, ()) for p, (was, _) in CHANGED.items()}
    return await not_the_runs(source, [BROKEN, ORDER], set(CHANGED), files, workspace, 5.0, False)


async def test_an_error_not_reported_again_is_not_the_runs() -> None:
    source = AnsweringFakeDiagnostics()
    source.counterfactual = []  # neither is there with rv.py shown as before
    source.answered = [BROKEN]  # asked afresh, only the broken import again
    assert await _ask(source) == ([BROKEN], 1)
    assert source.asked_again == [["pkg/crv.py", "pkg/test_finite.py"]]


async def test_errors_reported_again_stay_the_runs() -> None:
    source = AnsweringFakeDiagnostics()
    source.counterfactual = []
    source.answered = [BROKEN, ORDER.model_copy(update={"character": 4})]
    assert await _ask(source) == ([BROKEN, ORDER], 0)


@pytest.mark.parametrize("stale", [True, False], ids=["stale", "blind"])
async def test_an_answer_afresh_that_is_stale_or_blind_drops_nothing(stale: bool) -> None:
    source = AnsweringFakeDiagnostics()
    source.counterfactual = []
    # What it holds is from before the question, or nobody looked.
    source.answered_stale = stale
    source.answered_blind = None if stale else "no analyzer runs"
    assert await _ask(source) == ([BROKEN, ORDER], 0)
    assert source.asked_again == [["pkg/crv.py", "pkg/test_finite.py"]]


async def test_a_source_behind_the_coordinator_that_cannot_ask_again_drops_nothing() -> None:
    # review29: the coordinator answers for any source; one that can show
    # other texts but not ask afresh answered with what it held (the
    # counterfactual's answers, maybe): now stale.
    inner = SettlingFakeDiagnostics([BROKEN])  # holds BROKEN only: ORDER looks gone
    inner.counterfactual = []
    assert await _ask(DiagnosticsCoordinator(inner)) == ([BROKEN, ORDER], 0)


async def test_errors_there_without_the_run_are_not_asked_again() -> None:
    source = AnsweringFakeDiagnostics()
    source.counterfactual = [ORDER]  # there before the run's changes too
    source.answered = [BROKEN]
    assert await _ask(source) == ([BROKEN], 1)
    assert source.asked_again == [["pkg/crv.py"]]
