"""The isolation package over a real git repository (no rein process):
what the copy holds, the person's index untouched, the three-way merge by
hunk, the branch, the crash sweep."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ConfigError
from rein.isolation.bring_back import apply_changes, keep_as_branch, review_changes, run_changes
from rein.isolation.cleanup import remove_isolated, sweep
from rein.isolation.registry import Registry
from rein.isolation.three_way import merge_text
from rein.isolation.worktree import create_isolated

TEXT = "".join(f"l{i}\n" for i in range(1, 7))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "sub" / "a.txt").write_text(TEXT)
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return repo


def test_the_copy_holds_the_uncommitted_work_and_the_index_is_not_touched(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "sub" / "a.txt").write_text(TEXT.replace("l1", "staged"))
    git(repo, "add", "sub/a.txt")
    (repo / "sub" / "a.txt").write_text(TEXT.replace("l1", "staged").replace("l6", "unstaged"))
    (repo / "sub" / "new.txt").write_text("untracked\n")
    (repo / "sub" / "x.log").write_text("ignored\n")
    index = (repo / ".git" / "index").read_bytes()
    registry = Registry(tmp_path / "store")

    record = create_isolated(repo / "sub", registry, "ses_one")
    assert record.kind == "git" and record.prefix == "sub"
    assert record.root == tmp_path / "store" / "isolated" / "ses_one" / "tree" / "sub"
    assert (record.root / "a.txt").read_text() == (repo / "sub" / "a.txt").read_text()
    assert (record.root / "new.txt").read_text() == "untracked\n"
    assert not (record.root / "x.log").exists()
    assert (repo / ".git" / "index").read_bytes() == index
    assert run_changes(record) == []

    (record.root / "a.txt").write_text((record.root / "a.txt").read_text().replace("l3", "run"))
    (record.root / "new.txt").unlink()
    changes = {c.path: c.kind for c in run_changes(record)}
    assert changes == {"a.txt": "modified", "new.txt": "deleted"}

    commit = keep_as_branch(record, "rein-try")
    assert git(repo, "show", f"{commit}:sub/a.txt").count("run") == 1
    assert git(repo, "rev-parse", "HEAD") != commit + "\n"  # the person's HEAD stays
    with pytest.raises(ConfigError, match="exists already"):
        keep_as_branch(record, "rein-try")
    with pytest.raises(ConfigError, match="not a valid branch name"):
        keep_as_branch(record, "bad..name")
    remove_isolated(registry, record)
    assert git(repo, "worktree", "list").count("\n") == 1
    assert (repo / ".git" / "index").read_bytes() == index


def test_clean_hunks_apply_conflicting_ones_are_reported_with_three_sides() -> None:
    run = TEXT.replace("l2\n", "run2\n").replace("l5\n", "run5\n") + "added\n"
    current = TEXT.replace("l2\n", "mine2\n")
    merged, applied, conflicts = merge_text("f", TEXT, run, current)
    assert merged == current.replace("l5\n", "run5\n") + "added\n"
    assert applied == 2
    assert [(c.base, c.ours, c.theirs) for c in conflicts] == [("l2\n", "mine2\n", "run2\n")]
    # Applied already: the run's lines are there, nothing to do, no conflict.
    again, applied, conflicts = merge_text("f", TEXT, run, merged)
    assert again == merged and applied == 0
    assert [c.ours for c in conflicts] == ["mine2\n"]
    # Lines the folder removed that the run changed: a conflict, ours empty.
    _, _, conflicts = merge_text("f", TEXT, run, TEXT.replace("l5\n", ""))
    assert [(c.base, c.ours) for c in conflicts] == [("l5\n", "")]


def test_a_copy_brought_back_through_the_workspace(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT)
    (folder / "gone.txt").write_text("x\n")
    (folder / "old.bin").write_bytes(b"\x89PNG\x00\x01")
    registry = Registry(tmp_path / "store")
    record = create_isolated(folder, registry, "ses_copy")
    (record.root / "old.bin").write_bytes(b"\x89PNG\x00\x02")
    assert record.kind == "copy"
    (record.root / "a.txt").write_text(TEXT.replace("l1", "run"))
    (record.root / "gone.txt").unlink()
    (record.root / "made.txt").write_text("m\n")
    (folder / "made.txt").write_text("the person's\n")  # made on both sides: a conflict
    (record.root / "blob.bin").write_bytes(b"\xff\xfe\x00")
    result = anyio.run(apply_changes, run_changes(record), DiskWorkspace(folder))
    binary = [c.reason for c in result.conflicts if c.path == "blob.bin"]
    assert binary and "binary" in binary[0] and "branch" not in binary[0]
    # A binary file of the folder the run changed: the same reason (it
    # said "the folder's file cannot be read: ... not valid UTF-8 text").
    old_bin = [c.reason for c in result.conflicts if c.path == "old.bin"]
    assert old_bin == ["a binary file: not merged (copy it by hand from old.bin)"]
    assert (folder / "old.bin").read_bytes() == b"\x89PNG\x00\x01"
    result.conflicts = [c for c in result.conflicts if c.path not in ("blob.bin", "old.bin")]
    assert sorted(result.applied) == ["a.txt", "gone.txt"]
    assert [(c.path, c.ours, c.theirs) for c in result.conflicts] == [
        ("made.txt", "the person's\n", "m\n")
    ]
    assert (folder / "a.txt").read_text().startswith("run\n")
    assert not (folder / "gone.txt").exists()
    assert (folder / "made.txt").read_text() == "the person's\n"
    with pytest.raises(ConfigError, match="not a git repository"):
        keep_as_branch(record, "b")


def test_the_sweep_removes_a_crashed_run_and_keeps_a_live_or_finished_one(
    repo: Path, tmp_path: Path
) -> None:
    registry = Registry(tmp_path / "store")
    dead = subprocess.Popen(["true"])
    dead.wait()
    crashed = replace(create_isolated(repo, registry, "ses_crashed"), pid=dead.pid)
    registry.save(crashed)
    live = create_isolated(repo, registry, "ses_live")
    assert live.pid_start and not Registry.crashed(live)
    # A pid the system gave to another process since: the run is gone.
    reused = replace(create_isolated(repo, registry, "ses_reused"), pid_start="1")
    registry.save(reused)
    create_isolated(repo, registry, "ses_done")
    registry.finish("ses_done", "completed", stored=True)
    create_isolated(repo, registry, "ses_editor")  # kept by an editor: never stored
    registry.finish("ses_editor", "stopped with the server")

    assert sweep(registry) == ["ses_crashed", "ses_reused"]
    assert not Path(crashed.tree).exists() and crashed.tree not in git(repo, "worktree", "list")
    assert sorted(r.session_id for r in registry.all()) == ["ses_done", "ses_editor", "ses_live"]
    # A finished one whose stored session is no longer stored goes too; the
    # editor's kept copy stays for rein apply.
    assert sweep(registry, exists=lambda session_id: True) == []
    assert sweep(registry, exists=lambda session_id: False) == ["ses_done"]
    assert [r.session_id for r in registry.all()] == [live.session_id, "ses_editor"]
    assert registry.get("ses_editor").to_json()["status"] == "finished"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="not a session id"):
        registry.get("../x")
    with pytest.raises(ConfigError, match="already exists"):
        create_isolated(repo, registry, "ses_live")


def test_git_runs_without_the_persons_git_variables_or_secrets(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rein.isolation._git import _env

    stray = tmp_path / "stray-index"
    monkeypatch.setenv("GIT_INDEX_FILE", str(stray))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    env = _env()
    assert "GIT_INDEX_FILE" not in env and "OPENAI_API_KEY" not in env
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    record = create_isolated(repo, Registry(tmp_path / "store"), "ses_env")
    (record.root / "sub" / "a.txt").write_text("changed\n")
    assert [c.path for c in run_changes(record)] == ["sub/a.txt"]
    assert not stray.exists()
    # The session's children (an approved `git add`) act on the copy, not the person's repo.
    from rein.process.environment import child_environment

    in_copy = child_environment(cwd=record.root)
    assert not {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} & set(in_copy)
    subprocess.run(["git", "add", "-A"], cwd=record.root, env=in_copy, check=True, timeout=30)
    # Only the copy's children lose them: the process and a child elsewhere keep them.
    assert os.environ["GIT_DIR"] == str(repo / ".git")
    assert child_environment(cwd=repo)["GIT_INDEX_FILE"] == str(stray)
    assert child_environment()["GIT_WORK_TREE"] == str(repo)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name)  # for this test's own git
    assert "sub/a.txt" not in git(repo, "diff", "--cached", "--name-only")
    assert not stray.exists()
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    remove_isolated(Registry(tmp_path / "store"), record)
    assert child_environment(cwd=record.root)["GIT_DIR"] == str(repo / ".git")


def test_a_crafted_record_never_makes_cleanup_remove_anything_outside_its_place(
    repo: Path, tmp_path: Path
) -> None:
    import json

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("x")
    persons = tmp_path / "persons-wt"
    git(repo, "worktree", "add", "-q", str(persons), "-b", "feature")
    (persons / "work.txt").write_text("the person's")
    registry = Registry(tmp_path / "store")
    registry.dir.mkdir(parents=True)
    good = create_isolated(repo, registry, "ses_good")
    dead = subprocess.Popen(["true"])
    dead.wait()
    registry.save(replace(good, pid=dead.pid))
    fields = dict(folder="/nonexistent", kind="copy", top="/nonexistent", prefix="", base="", pid=0)
    crafted = {
        "abc": dict(fields, session_id=str(victim), tree="/nonexistent/tree"),
        "def": dict(fields, session_id="def", kind="git", top=str(repo), tree=str(persons)),
        "dots": dict(fields, session_id="..", tree=str(tmp_path / "store" / "tree")),
        "empty": dict(fields, session_id="", tree="x"),
        "esc": dict(
            fields, session_id="esc", tree=str(registry.dir / "esc" / "tree"), base=str(victim)
        ),
    }
    for stem, data in crafted.items():
        (registry.dir / f"{stem}.json").write_text(json.dumps(data))
    # A record whose values are not the ones Rein writes for its name is refused...
    for stem in crafted:
        with pytest.raises(ConfigError, match="unreadable"):
            registry.get(stem)
    for bad in ("..", "", ".", "/tmp/x", "a/b"):
        with pytest.raises(ConfigError, match="not a session id"):
            registry.place(bad)
    # ...so the sweep removes only the crashed run's own copy, and never the others.
    assert sweep(registry) == ["ses_good"]
    assert (victim / "precious.txt").read_text() == "x"
    assert (persons / "work.txt").read_text() == "the person's"
    assert str(persons) in git(repo, "worktree", "list")
    assert registry.dir.is_dir() and not Path(good.tree).exists()
    # A record of the right name pointing at someone else's registered
    # worktree as its top: the worktree it names is not its own, nothing goes.
    other = replace(good, session_id="ses_other", tree=str(registry.place("ses_other") / "tree"))
    registry.save(other)
    remove_isolated(registry, replace(other, tree=str(persons)))
    assert (persons / "work.txt").exists() and registry.get("ses_other") is None


class _Typist(DiskWorkspace):
    """The disk, with the person typing in ``gone.txt`` right as the run's changes are applied."""

    async def apply_changes(self, changes, *, label=""):  # type: ignore[no-untyped-def]
        gone = Path(self.root) / "gone.txt"
        if gone.exists() and gone.read_text() != "typed meanwhile\n":
            gone.write_text("typed meanwhile\n")
        return await super().apply_changes(changes, label=label)


def test_bring_back_never_follows_a_link_never_stops_half_way_and_keeps_modes_honest(
    repo: Path, tmp_path: Path
) -> None:
    import os

    from rein.isolation.bring_back import MAX_FILE_BYTES

    for name in ("a.txt", "b.txt", "gone.txt", "run.sh"):
        (repo / name).write_text(TEXT)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more")
    secret = tmp_path / "outside-secret"
    secret.write_text("the secret\n")
    record = create_isolated(repo, Registry(tmp_path / "store"), "ses_safe")
    root = record.root
    os.symlink(secret, root / "leak.txt")
    (root / "a.txt").write_text(TEXT.replace("l2", "run2"))
    (root / "b.txt").write_text(TEXT.replace("l3", "run3"))
    (root / "gone.txt").unlink()
    os.chmod(root / "run.sh", 0o755)
    (root / "new.sh").write_text("echo new\n")
    os.chmod(root / "new.sh", 0o755)
    (root / "big.txt").write_text("x" * (MAX_FILE_BYTES + 1))
    (repo / "a.txt").write_text(TEXT + "\0")  # the folder's a.txt cannot be read as text

    typist = _Typist(repo)
    result = anyio.run(apply_changes, run_changes(record), typist)
    reasons = {c.path: c.reason for c in result.conflicts}
    assert sorted(result.applied) == ["b.txt", "new.sh"]
    # One change of both files (one generation): the refused try wrote nothing.
    assert [m.paths for m in typist.mutations] == [("b.txt", "new.sh")]
    assert "run3" in (repo / "b.txt").read_text()
    assert not (repo / "leak.txt").exists() and "symbolic link" in reasons["leak.txt"]
    assert "larger than" in reasons["big.txt"] and not (repo / "big.txt").exists()
    assert "cannot be read" in reasons["a.txt"]
    assert "executable" in reasons["run.sh"] and "executable" in reasons["new.sh"]
    assert "changed while" in reasons["gone.txt"]
    assert (repo / "gone.txt").read_text() == "typed meanwhile\n"
    assert (repo / "a.txt").read_text() == TEXT + "\0"
    # The person sets the modes by hand: the folder matches the run, no note is left.
    os.chmod(repo / "run.sh", 0o755)
    os.chmod(repo / "new.sh", 0o755)
    again = anyio.run(review_changes, run_changes(record), DiskWorkspace(repo))
    assert not {"run.sh", "new.sh"} & {c.path for c in again.conflicts}


def test_the_base_is_compared_as_the_working_tree_has_it(repo: Path, tmp_path: Path) -> None:
    crlf = b"one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n"
    (repo / ".gitattributes").write_text("*.crlf text eol=crlf\n")
    (repo / "a.crlf").write_bytes(crlf)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "crlf")
    record = create_isolated(repo, Registry(tmp_path / "store"), "ses_crlf")
    (record.root / "a.crlf").write_bytes(crlf.replace(b"two", b"TWO"))
    (repo / "a.crlf").write_bytes(crlf.replace(b"five", b"FIVE"))
    result = anyio.run(apply_changes, run_changes(record), DiskWorkspace(repo))
    assert result.conflicts == [] and result.applied == ["a.crlf"]
    assert (repo / "a.crlf").read_bytes() == crlf.replace(b"two", b"TWO").replace(b"five", b"FIVE")


def test_the_persons_git_settings_ignored_folders_and_fifos_do_not_change_the_copy(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[diff]\n\tnoprefix = true\n\texternal = false\n[color]\n\tui = always\n"
        "[commit]\n\tgpgSign = true\n[user]\n\tsigningKey = DEADBEEF\n"
    )
    monkeypatch.setenv("HOME", str(home))
    (repo / "sub" / "a.txt").write_text(TEXT.replace("l4", "mine4"))
    (repo / ".gitignore").write_text("*.log\nscratch/\n")
    (repo / "scratch").mkdir()
    (repo / "scratch" / "work.py").write_text("x = 1\n")
    registry = Registry(tmp_path / "store")

    record = create_isolated(repo, registry, "ses_cfg")  # signing on: still made, unsigned
    assert (record.root / "sub" / "a.txt").read_text() == TEXT.replace("l4", "mine4")
    assert not (record.root / "a.txt").exists()  # noprefix would have put it here
    (record.root / "sub" / "a.txt").write_text(TEXT.replace("l4", "mine4").replace("l1", "r"))
    commit = keep_as_branch(record, "rein-cfg")
    assert "gpgsig" not in git(repo, "cat-file", "commit", commit)

    scratch = create_isolated(repo / "scratch", registry, "ses_ignored")
    assert scratch.kind == "copy" and (scratch.root / "work.py").read_text() == "x = 1\n"
    (scratch.root / "work.py").write_text("x = 2\n")
    assert [c.path for c in run_changes(scratch)] == ["work.py"]

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n")
    os.mkfifo(plain / "pipe")
    copied = create_isolated(plain, registry, "ses_fifo")
    assert (copied.root / "a.txt").exists() and not (copied.root / "pipe").exists()


def test_an_error_after_the_run_finished_keeps_the_copy_for_rein_apply(
    repo: Path, tmp_path: Path
) -> None:
    from rein.headless.isolated import abandon_isolated

    storage = str(tmp_path / "store")
    registry = Registry(storage)
    running = create_isolated(repo, registry, "ses_running")
    kept = create_isolated(repo, registry, "ses_kept")
    registry.finish(kept.session_id, "completed")
    assert abandon_isolated(running, storage) and registry.get("ses_running") is None
    assert not Path(running.tree).exists()
    assert not abandon_isolated(kept, storage)  # e.g. a BrokenPipe after the apply hint
    assert registry.get("ses_kept") is not None and Path(kept.tree).is_dir()


def test_reins_git_commands_never_run_the_repositorys_fsmonitor(repo: Path, tmp_path: Path) -> None:
    """``core.fsmonitor`` is a command git runs on status, add and checkout:
    a repository that came with its ``.git`` (an archive, a download) runs
    it for whoever calls git there. Making, reading and removing the copy
    does not."""
    marker = tmp_path / "fsmonitor-ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    (repo / "sub" / "a.txt").write_text(TEXT.replace("l2", "mine"))
    registry = Registry(tmp_path / "store")

    record = create_isolated(repo, registry, "ses_fsm")
    (record.root / "sub" / "a.txt").write_text(TEXT.replace("l2", "run"))
    assert [c.path for c in run_changes(record)] == ["sub/a.txt"]
    keep_as_branch(record, "rein-fsm")
    assert not marker.exists()


def test_a_relative_storage_folder_never_puts_the_copy_in_the_persons_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `rein run --isolated --storage store` from the folder above the repository.
    monkeypatch.chdir(tmp_path)
    registry = Registry("store")
    record = create_isolated(repo, registry, "ses_rel")
    assert Path(record.tree) == tmp_path / "store" / "isolated" / "ses_rel" / "tree"
    assert (record.root / "sub" / "a.txt").read_text() == TEXT
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert registry.get("ses_rel") == record  # the record is read back, not refused
    remove_isolated(registry, record)
    assert git(repo, "worktree", "list").count("\n") == 1
    assert not (tmp_path / "store" / "isolated" / "ses_rel").exists()


def test_a_conflict_without_sides_prints_its_reason_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rein.headless.isolated import _show
    from rein.isolation.three_way import BringBack, Conflict

    result = BringBack(
        conflicts=[
            Conflict("run.sh", "", "", "", "the run made it not executable"),
            Conflict("new.txt", "", "the person's\n", "the run's\n", "created on both sides"),
        ]
    )
    _show(result)
    assert capsys.readouterr().out == (
        "conflict  run.sh: the run made it not executable\n"
        "conflict  new.txt: created on both sides\n"
        "  base:\n    | (nothing)\n"
        "  ours (the folder):\n    | the person's\n"
        "  theirs (the run):\n    | the run's\n"
    )


def test_apply_into_a_folder_that_is_gone_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rein.headless.isolated import ApplyArgs, apply_isolated

    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT)
    registry = Registry(tmp_path / "store")
    record = create_isolated(folder, registry, "ses_gone")
    (record.root / "a.txt").write_text(TEXT.replace("l1", "run"))
    registry.finish("ses_gone", "completed")
    folder.rename(tmp_path / "moved")
    # It said "git add -A failed ... not a git repository" (a worktree) or
    # failed on the missing folder's files.
    assert apply_isolated(ApplyArgs("ses_gone", str(tmp_path / "store"))) == 2
    err = capsys.readouterr().err
    assert f"rein apply: the folder {folder} is gone (moved or deleted): nothing to apply" in err
    assert not folder.exists() and registry.get("ses_gone") is not None
    assert apply_isolated(ApplyArgs("ses_gone", str(tmp_path / "store"), discard=True)) == 0
    assert registry.get("ses_gone") is None


def test_a_file_the_run_made_that_git_ignores_keeps_the_copy_and_is_named(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rein.headless.isolated import finish_isolated

    # The run wrote sub/report.log (its result lists it as created) and a
    # temporary file it removed: the copy was removed as "no changes",
    # report.log with it, unsaid.
    storage = tmp_path / "store"
    record = create_isolated(repo, Registry(storage), "ses_ign")
    (record.root / "sub" / "report.log").write_text("the run's work\n")
    info = finish_isolated(record, str(storage), "completed", False, ["sub/report.log", "tmp.txt"])
    assert info["changed"] == [] and info["ignored"] == ["sub/report.log"]
    kept = Registry(storage).get("ses_ign")
    assert kept is not None and kept.status == "finished"
    assert (record.root / "sub" / "report.log").read_text() == "the run's work\n"
    err = capsys.readouterr().err
    assert "completed; nothing to apply\n" in err
    assert f"copy them by hand before you apply or discard): sub/report.log in {record.root}" in err
    # Nothing the run touched is left: removed as before.
    (record.root / "sub" / "report.log").unlink()
    again = finish_isolated(record, str(storage), "completed", True, ["sub/report.log"])
    assert again["worktree"] is None and Registry(storage).get("ses_ign") is None
    assert git(repo, "worktree", "list").count("\n") == 1
