from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from rein.disk.analyzer_specs import find_executable
from tests.forkserver import REIN

WORKSPACES = Path(__file__).resolve().parents[1] / "workspaces"


@pytest.fixture
def wheels() -> Iterator[Path]:
    """A folder (not made yet) for local wheels that the installs, sandboxed
    by default, can read: the sandbox's ``/tmp`` is private, so not in
    ``tmp_path``."""
    path = Path(tempfile.mkdtemp(prefix="rein-wheels-", dir="/var/tmp"))
    yield path / "wheels"
    shutil.rmtree(path)


@pytest.fixture
def pyproj(tmp_path: Path) -> Path:
    target = tmp_path / "pyproj"
    shutil.copytree(WORKSPACES / "pyproj", target)
    return target


@pytest.fixture(scope="session", autouse=True)
def _analyzers_installed() -> None:
    missing = [n for n in ("ruff", "basedpyright-langserver") if find_executable(n) is None]
    if missing:
        pytest.fail(
            f"the e2e tests need the real analyzers; missing: {missing} (make test installs them)"
        )


@contextmanager
def mock_server(tmp_path: Path, name: str, turns: list[dict[str, Any]]) -> Iterator[str]:
    """``rein mock-server`` as a subprocess serving ``turns``; yields its URL
    once it accepts connections and stops it on exit."""
    scenario = tmp_path / f"{name}.yaml"
    scenario.write_text(yaml.safe_dump({"name": name, "turns": turns}))
    proc = subprocess.Popen(
        [*REIN, "mock-server", "--port", "0", "--scenario", str(scenario)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once it accepts connections
        assert line.startswith("rein mock server listening on http://127.0.0.1:"), line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
