"""The disk watcher skips what the workspace filter skips: an install into
a virtual environment or a build is not a change of the project."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from rein.disk.watcher import DiskWatcher

pytestmark = pytest.mark.e2e


async def test_the_watcher_ignores_environments_build_output_and_ignored_paths(
    tmp_path: Path,
) -> None:
    # Defect: venv/, a pyvenv.cfg folder under another name and gitignored
    # folders were reported as external changes of the project.
    (tmp_path / ".gitignore").write_text("generated/\n")
    for folder in ("venv", "myenv", "build", "generated", "dist"):
        (tmp_path / folder).mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    seen: list[str] = []
    watcher = DiskWatcher(tmp_path, lambda paths: seen.extend(paths), debounce_ms=20)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watcher.run)
        with anyio.fail_after(15):
            await watcher.ready.wait()
            for rel in (
                "venv/lib.py",
                "myenv/site.py",
                "build/out.py",
                "generated/g.py",
                "dist/d.py",
                "app.py",
            ):
                (tmp_path / rel).write_text("x = 1\n")
            # settle returns once everything written before it was reported.
            await watcher.settle()
        watcher.stop()
        tg.cancel_scope.cancel()
    assert seen == ["app.py"]
