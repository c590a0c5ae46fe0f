from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rein.headless.analyzers import find_executable

WORKSPACES = Path(__file__).resolve().parents[1] / "workspaces"


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
