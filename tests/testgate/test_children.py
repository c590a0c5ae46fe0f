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
    pytest.param(["sed", "-n", "-e", "1,3p", "-e", "s/a/b/g", "/var/tmp/x"], False, True, id="sed"),
    pytest.param(["sh", "-c", "cat"], False, True, id="sh-cat"),
    pytest.param(
        ["bash", "-ec", "echo hi | sort -r | head -n 1 >/dev/null"], False, False, id="pipe"
    ),
    pytest.param(["cat"], False, False, id="cat-elsewhere"),
]
OPAQUE = [
    pytest.param([sys.executable, "-c", "pass"], False, False, id="sys-executable"),
    pytest.param("python3 -c 'import app' || true", True, False, id="shell-names-python"),
    pytest.param(["env", "PYTHONPATH=.", "tool"], False, False, id="env"),
    pytest.param(["bash", "-c", "echo $HOME"], False, False, id="shell-expands"),
    pytest.param("cat *.txt", True, False, id="glob"),
    pytest.param("cat {a,b}.txt", True, False, id="brace"),
    pytest.param("LESS=+!x less", True, False, id="assigns"),
    pytest.param("cd sub && ./run", True, False, id="changes-folder"),
    pytest.param(["./run.sh"], False, True, id="workspace-script"),
    pytest.param(["cat", "run.sh"], False, True, id="reads-a-workspace-file"),
    pytest.param(["sh", "script.sh"], False, False, id="shell-reads-a-script"),
    pytest.param(["app-cli"], False, False, id="entry-point-script"),
    pytest.param(["git", "status"], False, True, id="git-in-the-workspace"),
    # review23 F1: a shell reading its script from standard input
    pytest.param(["sh"], False, True, id="sh-stdin"),
    pytest.param(["bash", "-s"], False, False, id="bash-s"),
    pytest.param("sh", True, True, id="shell-line-sh"),
    pytest.param(["bash", "-xc", "cat"], False, False, id="bash-x-runs-ps4"),
    pytest.param(["xargs", "-I{}", "sh", "-c", "{}"], False, False, id="xargs-sh"),
    pytest.param(["sed", "-n", "1e ./run.sh", "/dev/null"], False, True, id="sed-e-command"),
    pytest.param(["sed", "s/x/y/e", "/dev/null"], False, False, id="sed-e-flag"),
    pytest.param(["sed", "-f", "/var/tmp/s.sed", "/dev/null"], False, False, id="sed-script-file"),
    pytest.param(["vim", "-es", "-c", "!make"], False, True, id="vim"),
    pytest.param(["ed", "/var/tmp/x"], False, False, id="ed-reads-stdin"),
    pytest.param(["less", "+!make", "/var/tmp/x"], False, False, id="less-command"),
    pytest.param(["sort", "--compress-program=make", "/var/tmp/x"], False, False, id="sort"),
    pytest.param(["wc", "--files0=-"], False, False, id="wc-files0"),
    # review23 F2: programs that run what their configuration says
    pytest.param(["make", "-s", "check"], False, False, id="make-elsewhere"),
    pytest.param(["git", "commit", "-m", "x"], False, False, id="git-elsewhere-hooks"),
    pytest.param(["nice", "cat"], False, False, id="nice"),
    pytest.param(["timeout", "5", "cat"], False, False, id="timeout"),
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


def test_a_shell_reading_commands_from_its_environment_is_opaque(
    places: tuple[Path, Path],
) -> None:
    """bash runs ``BASH_ENV``'s file and an exported function of a
    command's name (``BASH_FUNC_cat%%``) before ``-c``'s command."""
    root, outside = places
    base = {"PATH": "/usr/bin:/bin"}
    assert not may_run_workspace_code(
        ["bash", "-c", "cat"], None, False, str(outside), base, str(root)
    )
    for extra in ({"BASH_ENV": "/var/tmp/x.sh"}, {"BASH_FUNC_cat%%": "() { make; }"}):
        env = {**base, **extra}
        assert may_run_workspace_code(
            ["bash", "-c", "cat"], None, False, str(outside), env, str(root)
        )


def test_a_pager_told_to_run_a_command_is_opaque(places: tuple[Path, Path]) -> None:
    root, outside = places
    base = {"PATH": "/usr/bin:/bin"}
    assert not may_run_workspace_code("less", None, True, str(outside), base, str(root))
    for extra in ({"LESSOPEN": "|make %s"}, {"LESS": "-R +!make"}):
        env = {**base, **extra}
        assert may_run_workspace_code("less", None, True, str(outside), env, str(root))
