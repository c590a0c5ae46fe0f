"""get_diagnostics and ask_user: through their ports, with readable results."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rein.config import ReinConfig
from rein.harness.errors import SandboxError, ToolError
from rein.harness.ports import Diagnostic
from rein.harness.tools import ToolEnvironment
from rein.tools import AskUserTool, GetDiagnosticsTool
from rein.tools.settings import ToolSettings
from tests.fakes.approvals import FakeUserChannel
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.tools import ToolCallRecorder
from tests.fakes.workspace import FakeWorkspace

DIAGNOSTICS = [
    Diagnostic(
        path="b.py",
        line=9,
        character=0,
        severity=2,
        code="F401",
        source="ruff",
        message="`os` imported but unused",
    ),
    Diagnostic(
        path="a.py",
        line=0,
        character=4,
        severity=1,
        code=None,
        source="pyright",
        message='"foo" is not\n  defined',
    ),
    Diagnostic(path="a.py", line=2, character=0, severity=3, message="note"),
]


def _calls(diagnostics: FakeDiagnostics | None) -> ToolCallRecorder:
    return ToolCallRecorder(ToolEnvironment(workspace=FakeWorkspace(), diagnostics=diagnostics))


async def test_diagnostics_are_compact_one_based_lines() -> None:
    source = FakeDiagnostics(DIAGNOSTICS)
    result = await _calls(source).run(GetDiagnosticsTool())
    assert result.content.splitlines() == [
        "1 error, 1 warning, 1 info in 2 files:",
        'a.py:1:5 error "foo" is not defined (pyright)',
        "a.py:3:1 info note",
        "b.py:10:1 warning F401 `os` imported but unused (ruff)",
    ]
    assert result.details == {"count": 3, "generation": 0, "stale": False}
    assert source.calls == [(None, 0)]


async def test_paths_are_sandboxed_and_passed_on() -> None:
    source = FakeDiagnostics(DIAGNOSTICS)
    calls = _calls(source)
    result = await calls.run(GetDiagnosticsTool(), paths=["./b.py"])
    assert result.content.splitlines()[1].startswith("b.py:10:1 warning F401")
    assert source.calls[-1] == (["b.py"], 0)
    with pytest.raises(SandboxError):
        await calls.run(GetDiagnosticsTool(), paths=["../x.py"])


async def test_none_and_stale_and_missing_source() -> None:
    source = FakeDiagnostics()
    source.stale = True
    result = await _calls(source).run(GetDiagnosticsTool(), paths=["a.py"])
    lines = result.content.splitlines()
    assert lines[0] == "No diagnostics for a.py."
    assert "may be stale" in lines[1]
    plain = await _calls(FakeDiagnostics()).run(GetDiagnosticsTool())
    assert plain.content == "No diagnostics."
    with pytest.raises(ToolError, match="No analyzer is connected"):
        await _calls(None).run(GetDiagnosticsTool())


async def test_many_diagnostics_are_bounded() -> None:
    many = [Diagnostic(path="a.py", line=i, message=f"e{i}") for i in range(10)]
    result = await _calls(FakeDiagnostics(many)).run(GetDiagnosticsTool(max_diagnostics=3))
    lines = result.content.splitlines()
    assert len(lines) == 5
    assert lines[-1] == "[7 more not shown; ask for fewer paths.]"


async def test_ask_user_answer_and_no_answer() -> None:
    channel = FakeUserChannel(["use pathlib", None])
    calls = ToolCallRecorder(ToolEnvironment(user=channel))
    answered = await calls.run(AskUserTool(), question="os.path or pathlib?")
    assert answered.content == "The person answered: use pathlib"
    assert not answered.is_error
    silent = await calls.run(AskUserTool(), question="And the tests?")
    assert silent.details["no_answer"] is True
    assert silent.content.startswith("The person did not answer.")
    assert channel.questions == ["os.path or pathlib?", "And the tests?"]


async def test_ask_user_without_a_channel() -> None:
    result = await ToolCallRecorder(ToolEnvironment()).run(AskUserTool(), question="Which?")
    assert result.details["no_channel"] is True and "no_answer" not in result.details
    assert "No one can answer questions in this session" in result.content


class DeferringDiagnostics(FakeDiagnostics):
    """A source whose whole-workspace analysis waits to be asked for:
    until then it knows the changed files' diagnostics only. Once asked, its
    diagnostics are published only when the analysis ends, which an idle
    wait sees (``finishes``: it ends within the wait's bound)."""

    def __init__(self, *, finishes: bool = True) -> None:
        super().__init__([])
        self.deferred = True
        self.finishes = finishes
        self.waits: list[float] = []

    def workspace_deferred(self) -> bool:
        return self.deferred

    async def analyse_workspace(self) -> None:
        self.deferred = False

    async def wait_idle(self, timeout_s: float) -> bool:
        self.waits.append(timeout_s)
        if self.deferred or not self.finishes:
            return False  # not started, or not ended within the bound
        self.diagnostics = list(DIAGNOSTICS)
        return True

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        return ()

    async def environment_changed(self, paths: Sequence[str]) -> None:
        return None


async def test_a_deferred_workspace_analysis_is_started_and_waited_for() -> None:
    source = DeferringDiagnostics()
    settings = ToolSettings(diagnostics_wait_ms=7_000)
    env = ToolEnvironment(workspace=FakeWorkspace(), diagnostics=source, settings=settings)
    result = await ToolCallRecorder(env).run(GetDiagnosticsTool())
    assert not source.deferred
    assert source.waits == [7.0]  # the gate's bound, from the settings
    assert result.content.splitlines()[0] == "1 error, 1 warning, 1 info in 2 files:"
    assert result.details["stale"] is False


async def test_a_deferred_analysis_past_its_bound_is_reported_incomplete() -> None:
    source = DeferringDiagnostics(finishes=False)
    result = await _calls(source).run(GetDiagnosticsTool())
    assert source.waits == [120.0]  # gates.analyzer.settleTimeoutMs's default
    lines = result.content.splitlines()
    assert lines[0] == "No diagnostics."
    assert "still checking the workspace" in lines[1] and "incomplete" in lines[1]
    assert result.details["stale"] is True


def test_the_wait_is_the_analyzer_gates_bound() -> None:
    config = ReinConfig.model_validate({"gates": {"analyzer": {"settleTimeoutMs": 4_500}}})
    assert config.tool_settings().diagnostics_wait_ms == 4_500
