"""Tiny projects for the tests gate's tests, the gate over them, and the
run's change of one file as the editor holds it."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

from rein.harness.config import TestsGateConfig
from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.process.runner import SubprocessRunner
from rein.testgate import parses as parses_module
from rein.testgate.gate import TestGate
from rein.testgate.warm import ProcessLauncher
from tests.fakes.workspace import FakeWorkspace

__all__ = [
    "BAD",
    "GOOD",
    "changed",
    "counted_parses",
    "gate_for",
    "process_ended",
    "project",
    "snapshot",
    "verdict",
    "verdict_on",
]

GOOD = "def first_n(xs, n):\n    return xs[:n]\n"
#: An off-by-one no analyzer sees.
BAD = "def first_n(xs, n):\n    return xs[: n + 1]\n"


def project(root: Path, files: dict[str, str]) -> Path:
    """``root`` with ``files`` (path: text) written under it."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


#: The gates the running test made: closed at its end (tests/testgate/conftest.py).
MADE: list[TestGate] = []


def gate_for(root: Path, *, launcher: ProcessLauncher | None = None, **config: object) -> TestGate:
    """The gate over ``root`` (``launcher``: with a warm pytest)."""
    python = str(config.pop("python", sys.executable))
    gate = TestGate(
        root,
        SubprocessRunner(str(root)),
        TestsGateConfig.model_validate(config),
        python=python,
        launcher=launcher,
    )
    MADE.append(gate)
    return gate


async def changed(gate: TestGate, workspace: FakeWorkspace, path: str, text: str) -> None:
    """The run's change of ``path`` as the editor holds it (unsaved)."""
    await gate.before_change([path], workspace)
    workspace.buffers[path] = (text, 2)


async def verdict(gate: TestGate, workspace: FakeWorkspace, *paths: str) -> GateOutcome:
    return await gate.check(
        GateContext(generation=2, touched=frozenset(paths), workspace=workspace)
    )


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def verdict_on(root: Path, path: str, text: str, **config: object) -> GateOutcome:
    """The verdict of a gate (``config``) on the run's change of ``path``,
    open in the editor as saved, to ``text``."""
    workspace = FakeWorkspace({path: (root / path).read_text()}, root=str(root))
    gate = gate_for(root, **config)
    await changed(gate, workspace, path, text)
    return await verdict(gate, workspace, path)


def process_ended(pid: int) -> bool:
    """Whether process ``pid`` has ended by now (not waited for)."""
    try:
        os.close(os.pidfd_open(pid))
    except ProcessLookupError:
        return True
    return False


def counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[str | bytes]:
    """The texts the gate's parses (``rein.testgate.parses``) hand to
    ``ast.parse`` from now on, in order."""
    parsed: list[str | bytes] = []
    parse = ast.parse

    def counted(text: str | bytes, *args: object, **kwargs: object) -> ast.Module:
        parsed.append(text)
        return parse(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parses_module.ast, "parse", counted)
    return parsed
