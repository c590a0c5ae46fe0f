"""The gates benches' workspaces have an interpreter of their own, with the
standard library only (rein.bench.corpus.isolated_interpreter): the
interpreter on PATH could hold another copy of the project under test,
and a module a case renamed away resolved to it (sympy on this machine's
pyenv Python), so a case's truth depended on the caller's PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rein.bench.corpus import commit_workspace, isolated_interpreter


def test_the_workspace_interpreter_sees_no_installed_package_and_git_ignores_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    commit_workspace(tmp_path)
    venv = isolated_interpreter(tmp_path)
    python = venv / "bin" / "python"
    # The running interpreter has pytest; the workspace's has none of it.
    assert subprocess.run([sys.executable, "-c", "import pytest"], check=False).returncode == 0
    found = subprocess.run([python, "-c", "import pytest"], capture_output=True, check=False)
    assert found.returncode != 0 and b"ModuleNotFoundError" in found.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""
    assert isolated_interpreter(tmp_path) == venv  # made once
