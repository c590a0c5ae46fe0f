"""Where the tests gate sits in a session's gates, and when it is on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from rein.harness.config import GatesConfig, TestsGateConfig
from rein.session.builder import build_gates
from rein.testgate.gate import TestGate
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.gates import RaisingGate


def names(root: Path, **tests: object) -> list[str]:
    config = GatesConfig.model_validate({"tests": tests})
    preview = RaisingGate()
    pipeline = build_gates(config, FakeDiagnostics(), FakeCommandRunner(), [preview], root)
    return [g.name for g in pipeline.gates]


@pytest.mark.parametrize(
    "layout",
    [
        {"tests/test_app.py": ""},
        {"pkg/test_app.py": ""},
        {"pytest.ini": "[pytest]\n"},
        {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
        {"setup.cfg": "[tool:pytest]\ntestpaths = t\n"},
        {"tox.ini": "[pytest]\n"},
    ],
)
def test_auto_is_on_when_the_project_has_pytest_tests(tmp_path: Path, layout: dict) -> None:
    for rel, text in layout.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    preview = RaisingGate().name
    assert names(tmp_path) == ["dependencies", "analyzer", "tests", preview]


def test_auto_is_off_without_tests_and_false_is_off_with_them(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    assert "tests" not in names(tmp_path)
    (tmp_path / "tests").mkdir()
    assert "tests" not in names(tmp_path, enabled=False)
    assert "tests" in names(tmp_path)


def test_the_gate_runs_the_interpreter_of_the_projects_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    (tmp_path / "tests").mkdir()
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    config = GatesConfig.model_validate({"tests": {}})
    pipeline = build_gates(config, FakeDiagnostics(), FakeCommandRunner(), [], tmp_path)
    [gate] = [g for g in pipeline.gates if isinstance(g, TestGate)]
    assert gate.spec.python == str(python)
    (tmp_path / ".venv" / "bin" / "python").unlink()
    pipeline = build_gates(config, FakeDiagnostics(), FakeCommandRunner(), [], tmp_path)
    [gate] = [g for g in pipeline.gates if isinstance(g, TestGate)]
    assert gate.spec.python == sys.executable


def test_a_custom_command_must_say_where_its_report_goes() -> None:
    with pytest.raises(ValidationError, match="needs \\{junit\\}"):
        TestsGateConfig.model_validate({"command": "npx jest"})
    with pytest.raises(ValidationError, match="inside the workspace"):
        TestsGateConfig.model_validate({"command": "go test", "junitPath": "../out.xml"})
    config = TestsGateConfig.model_validate(
        {"command": "cargo nextest run", "junitPath": "target/junit.xml", "timeoutMs": 5000}
    )
    assert (config.junit_path, config.timeout_ms, config.select) == (
        "target/junit.xml",
        5000,
        "reach",
    )
