"""The disk watcher never follows a symlink out of the workspace, and still
sees every change inside it, also in folders made after it started. Real
files, real symlinks, the real OS watch (its inotify watches are read back
from /proc to show what is watched)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from rein.disk._watch_plan import plan_watch
from rein.disk.watcher import MAX_WATCHES, DiskWatcher
from rein.harness.ports import Mutation

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads inotify watches from /proc"
)


def _inotify_inodes() -> set[int]:
    """The inodes this process watches with inotify (Linux /proc fdinfo)."""
    inodes: set[int] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                lines = info.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("inotify "):
                fields = dict(part.split(":", 1) for part in line.split()[1:])
                inodes.add(int(fields["ino"], 16))
    return inodes


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    (path / "deep").mkdir(parents=True)
    return path


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    path = tmp_path / "ws"
    (path / "src").mkdir(parents=True)
    (path / "src" / "a.py").write_text("a = 1\n")
    (path / ".git").mkdir()
    (path / "vendor" / "lib").mkdir(parents=True)
    (path / "vendor" / "out").symlink_to(outside, target_is_directory=True)
    (path / "alias").symlink_to(path / "src", target_is_directory=True)
    return path


class Running:
    def __init__(self, watcher: DiskWatcher, seen: list[str]) -> None:
        self.watcher = watcher
        self.seen = seen

    async def changes(self) -> set[str]:
        await self.watcher.settle()
        out = set(self.seen)
        self.seen.clear()
        return out


@asynccontextmanager
async def watching(root: Path) -> AsyncIterator[Running]:
    seen: list[str] = []
    watcher = DiskWatcher(root, seen.extend, debounce_ms=20)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watcher.run)
        with anyio.fail_after(15):
            await watcher.ready.wait()
        yield Running(watcher, seen)
        watcher.stop()
        tg.cancel_scope.cancel()


def test_the_plan_watches_around_links_and_skipped_folders(root: Path) -> None:
    plan = plan_watch(root)
    assert set(plan.flat) == {root, root / "vendor"}
    assert set(plan.recursive) == {root / "src", root / "vendor" / "lib"}


@linux_only
async def test_the_watcher_does_not_follow_a_symlink_out(root: Path, outside: Path) -> None:
    inodes = {
        "src": (root / "src").stat().st_ino,
        "outside": os.stat(outside).st_ino,
        "deep": (outside / "deep").stat().st_ino,
    }
    async with watching(root) as running:
        watched = _inotify_inodes()
        assert inodes["src"] in watched  # the check sees the watches
        assert inodes["outside"] not in watched
        assert inodes["deep"] not in watched
        (outside / "deep" / "x.txt").write_text("outside\n")
        (root / "src" / "b.py").write_text("b = 2\n")
        with anyio.fail_after(15):
            assert await running.changes() == {"src/b.py"}


@linux_only
async def test_folders_made_after_start_are_watched_and_links_in_them_are_not_followed(
    root: Path, outside: Path
) -> None:
    outside_inode = os.stat(outside).st_ino
    async with watching(root) as running:
        with anyio.fail_after(30):
            (root / "new" / "sub").mkdir(parents=True)
            (root / "new" / "sub" / "a.py").write_text("a\n")
            assert "new/sub/a.py" in await running.changes()

            (root / "new" / "sub" / "b.py").write_text("b\n")
            assert await running.changes() == {"new/sub/b.py"}

            # Removed and made again: the new folder is watched, the old watch ends.
            shutil.rmtree(root / "new")
            await running.changes()
            (root / "new").mkdir()
            (root / "new" / "c.py").write_text("c\n")
            assert "new/c.py" in await running.changes()
            (root / "new" / "d.py").write_text("d\n")
            assert await running.changes() == {"new/d.py"}

            # A folder with a link out in it: watched, the link's target is not.
            (root / "pkg").mkdir()
            (root / "pkg" / "out").symlink_to(outside, target_is_directory=True)
            (root / "pkg" / "m.py").write_text("m\n")
            assert "pkg/m.py" in await running.changes()
            (root / "pkg" / "inner").mkdir()
            (root / "pkg" / "inner" / "n.py").write_text("n\n")
            assert "pkg/inner/n.py" in await running.changes()
            assert outside_inode not in _inotify_inodes()


@linux_only
async def test_many_folders_made_later_are_merged_into_one_plan(root: Path) -> None:
    async with watching(root) as running:
        with anyio.fail_after(60):
            for n in range(MAX_WATCHES + 3):
                (root / f"f{n}").mkdir()
                (root / f"f{n}" / "a.py").write_text("a\n")
                assert f"f{n}/a.py" in await running.changes()
                assert running.watcher.watch_count <= MAX_WATCHES + 2
            # Every folder is still watched after the merge.
            for n in range(MAX_WATCHES + 3):
                (root / f"f{n}" / "b.py").write_text("b\n")
            expected = {f"f{n}/b.py" for n in range(MAX_WATCHES + 3)}
            assert await running.changes() == expected
            assert running.watcher.watch_count <= MAX_WATCHES


async def test_a_watcher_stopped_before_it_runs_returns(root: Path) -> None:
    watcher = DiskWatcher(root, lambda paths: None)
    watcher.stop()
    with anyio.fail_after(10):
        await watcher.run()


async def test_an_edit_written_before_the_editors_answer_is_reins_own(root: Path) -> None:
    """An editor may write an edit to disk before it answers
    ``workspace/applyEdit``: the change seen meanwhile waits for the answer
    and is Rein's own once the edit is applied; one whose edit is never
    recorded is external once the wait is over. Before, the echo seen
    first was external: a second generation for one rename (CI-g)."""
    async with watching(root) as running:
        watcher = running.watcher
        watcher.sending(("src/a.py", "src/new.py"))
        (root / "src" / "a.py").write_text("a = 2\n")
        (root / "src" / "new.py").write_text("n = 1\n")
        with anyio.fail_after(15):
            assert await running.changes() == set()  # held for the answer
        watcher.on_own_mutation(Mutation(1, ("src/a.py", "src/new.py")))
        with anyio.fail_after(15):
            assert await running.changes() == set()
        # Another change of it now is somebody else's.
        (root / "src" / "a.py").write_text("a = 3\n")
        with anyio.fail_after(15):
            assert await running.changes() == {"src/a.py"}

        # An edit never applied: its file's change is external after the wait.
        reported = anyio.Event()
        seen_before = watcher.on_external

        def external(paths: tuple[str, ...]) -> None:
            seen_before(paths)
            reported.set()

        watcher.on_external = external
        watcher.sent_hold_s = 0.5
        watcher.sending(("src/b.py",))
        (root / "src" / "b.py").write_text("b = 1\n")
        with anyio.fail_after(15):
            assert await running.changes() == set()
            await reported.wait()
        assert running.seen == ["src/b.py"]
