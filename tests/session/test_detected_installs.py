"""With no ``gates.dependencies.commands``, a manifest change installs with
the project's own tooling (issue 33, item 4): the command for each layout,
and the session's gates running it as a configured one."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rein.config import load_config
from rein.harness.gating.gates import GateContext
from rein.harness.ports import Mutation
from rein.process.installers import detect_install_command, python_environment
from rein.session.builder import build_gates
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import FakeDiagnostics

PYPROJECT = '[project]\nname = "app"\nversion = "0"\n'


def venv(root: Path, name: str = ".venv", *, pip: bool = True) -> None:
    bin_dir = root / name / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("")
    if pip:
        (bin_dir / "pip").write_text("")


def on_path(*tools: str):
    return lambda tool: f"/usr/bin/{tool}" if tool in tools else None


def detect(root: Path, path: str, *tools: str) -> str | None:
    return detect_install_command(root, path, which=on_path(*tools))


def test_a_venv_with_pip_installs_with_its_own_pip(tmp_path: Path) -> None:
    venv(tmp_path)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    assert detect(tmp_path, "pyproject.toml") == ".venv/bin/python -m pip install -e ."
    assert (
        detect(tmp_path, "requirements-dev.txt")
        == ".venv/bin/python -m pip install -r requirements-dev.txt"
    )


def test_uv_on_path_installs_into_the_venv_with_uv(tmp_path: Path) -> None:
    venv(tmp_path, pip=False)
    assert (
        detect(tmp_path, "requirements.txt", "uv")
        == "uv pip install --python .venv/bin/python -r requirements.txt"
    )


def test_a_venv_named_venv_counts_too(tmp_path: Path) -> None:
    venv(tmp_path, "venv")
    assert (
        detect(tmp_path, "requirements.txt") == "venv/bin/python -m pip install -r requirements.txt"
    )


def test_the_activated_environment_is_used_without_one_in_the_project(tmp_path: Path) -> None:
    elsewhere = tmp_path / "env"
    venv(tmp_path, "env")
    root = tmp_path / "proj"
    root.mkdir()
    assert python_environment(root, {"VIRTUAL_ENV": str(elsewhere)}) == elsewhere / "bin" / "python"
    assert python_environment(root, {}) is None


def test_no_environment_or_no_installer_installs_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    # Never the system's interpreter.
    assert detect(tmp_path, "pyproject.toml", "uv", "pip") is None
    venv(tmp_path, pip=False)
    assert detect(tmp_path, "requirements.txt") is None


def test_a_pyproject_without_a_project_table_installs_nothing(tmp_path: Path) -> None:
    venv(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert detect(tmp_path, "pyproject.toml") is None
    (tmp_path / "pyproject.toml").write_text("[project\n")
    assert detect(tmp_path, "pyproject.toml") is None


def test_a_nested_pyproject_installs_its_folder(tmp_path: Path) -> None:
    venv(tmp_path)
    (tmp_path / "libs" / "core").mkdir(parents=True)
    (tmp_path / "libs" / "core" / "pyproject.toml").write_text(PYPROJECT)
    assert (
        detect(tmp_path, "libs/core/pyproject.toml")
        == ".venv/bin/python -m pip install -e ./libs/core"
    )


@pytest.mark.parametrize(
    ("lock", "tool"),
    [
        (None, "npm"),
        ("package-lock.json", "npm"),
        ("pnpm-lock.yaml", "pnpm"),
        ("yarn.lock", "yarn"),
    ],
)
def test_package_json_installs_with_the_tool_of_its_lock_file(
    tmp_path: Path, lock: str | None, tool: str
) -> None:
    (tmp_path / "package.json").write_text("{}")
    if lock:
        (tmp_path / lock).write_text("")
    assert detect(tmp_path, "package.json", "npm", "pnpm", "yarn") == f"{tool} install"
    # The tool is not installed: nothing.
    assert detect(tmp_path, "package.json") is None


def test_a_nested_package_json_installs_in_its_folder(tmp_path: Path) -> None:
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "yarn.lock").write_text("")
    assert detect(tmp_path, "web/package.json", "npm", "yarn") == "cd web && yarn install"


def test_manifests_of_environments_and_dependencies_install_nothing(tmp_path: Path) -> None:
    venv(tmp_path)
    assert detect(tmp_path, "node_modules/left-pad/package.json", "npm") is None
    assert detect(tmp_path, ".venv/lib/python3.12/site-packages/x/requirements.txt") is None
    assert detect(tmp_path, "app.py", "npm") is None


def test_a_path_with_a_space_is_quoted(tmp_path: Path) -> None:
    venv(tmp_path)
    assert detect(tmp_path, "my reqs/requirements.txt") == (
        f".venv/bin/python -m pip install -r {shlex.quote('my reqs/requirements.txt')}"
    )


async def run_pipeline(config: dict, root: Path, runner: FakeCommandRunner, changed: str):
    # The analyzer is another test's subject.
    gates_config = load_config(config).gates.model_copy(
        update={"analyzer": load_config({}).gates.analyzer.model_copy(update={"enabled": False})}
    )
    gates = build_gates(gates_config, FakeDiagnostics(), runner, [], root)
    spawned = []
    gates.on_mutation(Mutation(generation=1, paths=(changed,)), spawned.append)
    for job in spawned:
        await job()
    events: list = []
    await gates.check(GateContext(generation=1, touched=frozenset({changed})), events.append)
    return [e for e in events if e.type == "gate_result"]


async def test_the_session_s_gates_install_a_detected_command_by_default(tmp_path: Path) -> None:
    venv(tmp_path)
    runner = FakeCommandRunner()
    results = await run_pipeline({}, tmp_path, runner, "requirements.txt")
    assert runner.calls == [".venv/bin/python -m pip install -r requirements.txt"]
    assert [(r.gate, r.passed) for r in results] == [("dependencies", True)]


async def test_configured_commands_replace_the_detected_ones(tmp_path: Path) -> None:
    venv(tmp_path)
    runner = FakeCommandRunner()
    config = {"gates": {"dependencies": {"commands": {"pyproject.toml": "make deps"}}}}
    results = await run_pipeline(config, tmp_path, runner, "requirements.txt")
    assert runner.calls == []
    # As configured, the gate runs (and finds no manifest of its own changed).
    assert [(r.gate, r.passed) for r in results] == [("dependencies", True)]


async def test_disabled_dependencies_install_nothing(tmp_path: Path) -> None:
    venv(tmp_path)
    runner = FakeCommandRunner()
    config = {"gates": {"dependencies": {"enabled": False}}}
    results = await run_pipeline(config, tmp_path, runner, "requirements.txt")
    assert runner.calls == []
    assert "dependencies" not in [r.gate for r in results]


async def test_no_detected_install_shows_no_dependencies_gate(tmp_path: Path) -> None:
    runner = FakeCommandRunner()
    results = await run_pipeline({}, tmp_path, runner, "requirements.txt")
    assert runner.calls == []
    assert results == []
