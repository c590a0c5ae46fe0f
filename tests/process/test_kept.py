"""The kept process launcher: a kept process working for an isolated copy
gets the environment the copy's other children get."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rein.process.environment import forget_git_location, remember_git_location
from rein.process.kept import KeptProcessLauncher

SAYS = (
    "import os\nprint(os.environ.get('GIT_DIR'), os.environ.get('REIN_KEPT_API_KEY'), flush=True)\n"
)


async def test_a_kept_process_for_an_isolated_copy_has_no_git_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", "/the/persons/repo/.git")
    monkeypatch.setenv("REIN_KEPT_API_KEY", "sk-never")
    copy = tmp_path / "copy"
    copy.mkdir()
    forget_git_location(copy)
    try:
        said = []
        for workspace in (str(copy), None):
            process = await KeptProcessLauncher(workspace).launch(
                [sys.executable, "-c", SAYS], str(tmp_path)
            )
            assert process.stdout is not None
            said.append((await process.stdout.readline()).decode().split())
            process.kill()
            await process.wait()
    finally:
        remember_git_location(copy)
    assert said == [["None", "None"], ["/the/persons/repo/.git", "None"]]
