"""The build tools' caches in the sandbox (:mod:`rein.sandboxing.caches`):
a sandboxed ``go test`` compiles (the person's ``~/.cache/go-build`` is
read-only inside), into the workspace's own cache, which a later session's
sandbox finds warm, and the person's cache is never written; npm warns of
no setting; an isolated run's caches go with its copy."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rein.isolation.cleanup import remove_isolated
from rein.isolation.registry import Registry
from rein.isolation.worktree import create_isolated
from rein.sandboxing.caches import (
    STALE_EMPTY_S,
    cache_environment,
    remove_caches_of,
    workspace_cache_folder,
)
from rein.sandboxing.local import BwrapSandbox
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.settings import SandboxSettings


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside every sandbox's writable ones (``/tmp`` is private inside)."""
    path = Path(tempfile.mkdtemp(prefix="rein-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path)


def test_the_caches_point_into_the_workspaces_own_folder(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NPM_CONFIG_CACHE": "/home/p/.npm"}
    folder, setting, unsetting = cache_environment("/work/proj", ["/work/proj"], environ)
    assert folder == workspace_cache_folder("/work/proj", environ)
    assert folder is not None and folder.startswith(str(tmp_path / "cache" / "rein" / "sandbox"))
    assert os.path.isdir(folder)
    values = dict(setting)
    assert values["GOCACHE"] == os.path.join(folder, "go-build")
    assert values["npm_config_cache"] == os.path.join(folder, "npm")
    # The upper-case spelling npm also reads cannot point back at the person's cache.
    assert "NPM_CONFIG_CACHE" in unsetting
    # Two workspaces of the same name do not share a cache.
    assert workspace_cache_folder("/other/proj", environ) != folder


def test_a_cache_the_person_put_where_the_sandbox_writes_is_kept(tmp_path: Path) -> None:
    environ = {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "GOCACHE": "/scratch/go",  # under sandbox.writable
        "PIP_CACHE_DIR": "off",  # no path: the tool's own meaning
    }
    _, setting, _ = cache_environment("/work/proj", ["/work/proj", "/scratch"], environ)
    names = {name for name, _ in setting}
    assert "GOCACHE" not in names and "PIP_CACHE_DIR" not in names
    assert "npm_config_cache" in names


def test_a_planted_link_is_not_bound(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    target = tmp_path / "elsewhere"
    target.mkdir()
    folder = Path(workspace_cache_folder("/work/proj", environ))
    folder.parent.mkdir(parents=True)
    folder.symlink_to(target)
    assert cache_environment("/work/proj", ["/work/proj"], environ) == (None, [], [])


def _run(sandbox: BwrapSandbox, root: Path, script: str) -> subprocess.CompletedProcess[str]:
    argv = sandbox.wrap(["bash", "-c", script], cwd=str(root))
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def test_go_test_compiles_in_the_sandbox_and_a_later_session_finds_it_warm(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    if shutil.which("go") is None:
        pytest.fail("go must be installed on the test machines (make language-servers)")
    root = tmp_path / "mod"
    root.mkdir()
    (root / "go.mod").write_text("module example.com/m\n\ngo 1.19\n")
    (root / "m.go").write_text("package m\n\nfunc Add(a, b int) int { return a + b }\n")
    (root / "m_test.go").write_text(
        'package m\n\nimport "testing"\n\n'
        'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n'
    )
    person = outside / "go-build"  # the person's cache: read-only inside
    person.mkdir()
    monkeypatch.setenv("GOCACHE", str(person))
    monkeypatch.setenv("XDG_CACHE_HOME", str(outside / "xdg"))
    first = _run(BwrapSandbox(str(root)), root, "go test ./...")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "(cached)" not in first.stdout
    assert list(person.iterdir()) == []
    ours = Path(workspace_cache_folder(str(root)))
    assert any((ours / "go-build").iterdir())
    gc.collect()  # the first session's sandbox is gone; its cache stays
    second = _run(BwrapSandbox(str(root)), root, "go test ./...")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "(cached)" in second.stdout


def test_an_unused_cache_folder_goes_with_its_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "ws"
    root.mkdir()
    sandbox = BwrapSandbox(str(root))
    sandbox.wrap(["true"], cwd=str(root))
    folder = Path(workspace_cache_folder(str(root)))
    assert folder.is_dir()
    del sandbox
    gc.collect()
    assert not folder.exists()


@pytest.mark.parametrize("kind", ["run_command", "install"])
def test_npm_runs_without_warnings_in_the_sandbox_and_pnpm_gets_its_store(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """npm (11) warned 'Unknown env config "store-dir"' at every command in
    every sandbox (pnpm's store variable, set for all): found by ``npm test``
    as a runtime gate. Now the variable is set only where pnpm is used."""
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    if shutil.which("npm") is None:
        pytest.fail("npm must be installed on the test machines (make language-servers)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(outside / "xdg"))
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "package.json").write_text('{"name": "pkg", "version": "1.0.0"}\n')
    if kind == "install":
        settings = SandboxSettings()
        sandbox = OtherCommandsSandbox(str(root), lambda: settings, "install").sandbox()
        assert sandbox is not None
    else:
        sandbox = BwrapSandbox(str(root))
    script = 'npm config get cache >/dev/null && echo "store=${npm_config_store_dir-}"'
    plain = _run(sandbox, root, script)
    assert plain.returncode == 0, plain.stderr
    assert "Unknown env config" not in plain.stderr, plain.stderr
    assert plain.stdout.strip() == "store="
    (root / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    pnpm = _run(sandbox, root, script)
    assert pnpm.returncode == 0, pnpm.stderr
    assert pnpm.stdout.strip().endswith("pnpm-store"), pnpm.stdout


def test_an_isolated_runs_caches_go_with_its_copy(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by use: every ``rein run --isolated`` left a cache folder (its
    copy's path is new each run), never removed."""
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(outside / "xdg"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
            check=True,
            timeout=30,
        )
    registry = Registry(tmp_path / "store")
    record = create_isolated(repo, registry, "ses_one")
    mine = BwrapSandbox(str(repo))
    for sandbox, root in ((BwrapSandbox(str(record.root)), record.root), (mine, repo)):
        done = _run(sandbox, root, 'mkdir -p "$GOCACHE" && echo built > "$GOCACHE/entry"')
        assert done.returncode == 0, done.stderr
    copy = Path(workspace_cache_folder(str(record.root)))
    assert (copy / "go-build" / "entry").exists()
    remove_isolated(registry, record)
    assert not copy.exists()
    # The person's workspace keeps its own.
    assert (Path(workspace_cache_folder(str(repo))) / "go-build" / "entry").exists()


def test_removing_caches_never_follows_a_link(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    folder = Path(workspace_cache_folder("/work/proj", environ))
    folder.parent.mkdir(parents=True)
    folder.symlink_to(target)
    remove_caches_of("/work/proj", environ)
    assert (target / "keep").exists()


def test_a_killed_sessions_empty_cache_folder_goes_later(tmp_path: Path) -> None:
    """Found by use: every session killed with its sandbox unused (a test
    suite's servers) left an empty folder in the real ``~/.cache/rein/sandbox``."""
    environ = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    parent = Path(workspace_cache_folder("/work/a", environ)).parent
    parent.mkdir(parents=True)
    old = time.time() - STALE_EMPTY_S - 60
    stale, fresh, full = parent / "gone-1", parent / "recent-2", parent / "used-3"
    for folder in (stale, fresh, full):
        folder.mkdir()
    (full / "go-build").mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (parent / "link-4").symlink_to(target)
    for folder in (stale, full, target):
        os.utime(folder, (old, old))
    cache_environment("/work/a", ["/work/a"], environ)
    assert not stale.exists()
    assert fresh.is_dir() and full.is_dir() and target.is_dir()
    assert Path(workspace_cache_folder("/work/a", environ)).is_dir()
