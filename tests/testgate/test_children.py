"""Which child process may run the workspace's code or read its files
(``rein.testgate.children``, judged by the recording plugin): a test
starting one is opaque, one starting only others is judged by its record."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rein.testgate.children import may_run_workspace_code

# (args, shell, started in the workspace's folder)
HARMLESS = [
    pytest.param("cat", True, True, id="pager-cat"),
    pytest.param("less", True, True, id="pager-less"),
    pytest.param("(less) 2>/dev/null", True, True, id="pager-probe"),
    pytest.param("sed -i~ 's/$/Test/' \"/var/tmp/edit-1.txt\"", True, True, id="sed-editor"),
    pytest.param(["sh", "-c", "cat"], False, True, id="sh-cat"),
    pytest.param(["git", "status"], False, False, id="git-elsewhere"),
]
OPAQUE = [
    pytest.param([sys.executable, "-c", "pass"], False, False, id="sys-executable"),
    pytest.param("python3 -c 'import app' || true", True, False, id="shell-names-python"),
    pytest.param(["env", "PYTHONPATH=.", "tool"], False, False, id="names-python"),
    pytest.param(["bash", "-c", "echo $HOME"], False, False, id="shell-expands"),
    pytest.param("cat *.txt", True, False, id="glob"),
    pytest.param("cd sub && ./run", True, False, id="changes-folder"),
    pytest.param(["./run.sh"], False, True, id="workspace-script"),
    pytest.param(["sh", "script.sh"], False, False, id="shell-reads-a-script"),
    pytest.param(["app-cli"], False, False, id="entry-point-script"),
    pytest.param(["git", "status"], False, True, id="git-in-the-workspace"),
]


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A workspace with a script, and a folder outside it with a shell
    script and an entry point (``#!``) on the path."""
    root, outside, bin_dir = tmp_path / "ws", tmp_path / "out", tmp_path / "bin"
    for folder in (root, outside, bin_dir):
        folder.mkdir()
    (root / "run.sh").write_text("echo hi\n")
    (root / "run.sh").chmod(0o755)
    (outside / "script.sh").write_text("echo hi\n")
    (bin_dir / "app-cli").write_text("#!/usr/bin/env python3\nimport app\n")
    (bin_dir / "app-cli").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    for name in ("EDITOR", "VISUAL", "PAGER", "LESSOPEN"):
        monkeypatch.delenv(name, raising=False)
    return root, outside


@pytest.mark.parametrize(("args", "shell", "inside"), HARMLESS)
def test_a_child_that_cannot_run_python_is_harmless(
    places: tuple[Path, Path], args: object, shell: bool, inside: bool
) -> None:
    root, outside = places
    cwd = root if inside else outside
    assert not may_run_workspace_code(args, None, shell, str(cwd), None, str(root))


@pytest.mark.parametrize(("args", "shell", "inside"), OPAQUE)
def test_a_child_that_may_run_python_or_read_the_workspace_is_not(
    places: tuple[Path, Path], args: object, shell: bool, inside: bool
) -> None:
    root, outside = places
    cwd = root if inside else outside
    assert may_run_workspace_code(args, None, shell, str(cwd), None, str(root))


def test_a_command_the_environment_names_counts_when_it_names_python(
    places: tuple[Path, Path],
) -> None:
    root, outside = places
    env = {"PATH": "/usr/bin:/bin", "GIT_EDITOR": "python3 -m app.edit"}
    assert may_run_workspace_code(["git", "commit"], None, False, str(outside), env, str(root))
    env["GIT_EDITOR"] = "vim"
    assert not may_run_workspace_code(["git", "commit"], None, False, str(outside), env, str(root))
