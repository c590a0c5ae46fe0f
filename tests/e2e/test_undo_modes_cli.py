"""``rein run`` then ``rein undo`` over real files: a script the run deleted
or moved comes back executable, a mode a command changed comes back, a
symbolic link the run removed or replaced comes back as the link, and one it
removed, made again (``ln -s``) and wrote through comes back with what it
leads to as it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.checkpoint_scenario import script_call as call
from tests.e2e.test_undo_cli import Project

pytestmark = pytest.mark.e2e

FILES: dict[str, str | bytes] = {
    "run.sh": "#!/bin/sh\necho run\n",
    "tool.sh": "#!/bin/sh\necho tool\n",
    "keep.sh": "#!/bin/sh\necho keep\n",
    "target.txt": "the target\n",
    "through.txt": "led to\n",
}

#: Turn 1: run.sh deleted, tool.sh moved, keep.sh edited, the link to
#: target.txt deleted and other.txt's link replaced by a regular file, the
#: link again.txt deleted; turn 2: a command takes keep.sh's executable bit,
#: another makes again.txt again; turn 3 writes through it.
TURNS = [
    {
        "tool_calls": [
            call("delete_file", path="run.sh"),
            call("move_file", path="tool.sh", new_path="moved.sh"),
            call("edit_file", path="keep.sh", old_string="keep", new_string="kept"),
            call("delete_file", path="link.txt"),
            call("delete_file", path="other.txt"),
            call("delete_file", path="again.txt"),
        ]
    },
    {
        "tool_calls": [
            call("write_file", path="other.txt", content="a regular file now\n"),
            call("run_command", command="chmod a-x keep.sh"),
            call("run_command", command="ln -s through.txt again.txt"),
        ]
    },
    {"tool_calls": [call("write_file", path="again.txt", content="written through\n")]},
    {"text": "done"},
]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_undo_brings_back_modes_and_links(tmp_path: Path) -> None:
    p = Project(tmp_path, FILES)
    for name in ("run.sh", "tool.sh", "keep.sh"):
        os.chmod(p.root / name, 0o755)
    os.symlink("target.txt", p.root / "link.txt")
    os.symlink("target.txt", p.root / "other.txt")
    os.symlink("through.txt", p.root / "again.txt")
    p.run(TURNS)
    assert (p.root / "through.txt").read_text() == "written through\n"
    assert not (p.root / "run.sh").exists() and not (p.root / "tool.sh").exists()
    assert mode(p.root / "keep.sh") & 0o111 == 0  # the command took its x bits
    assert not (p.root / "other.txt").is_symlink()

    out = p.undo()
    assert out.returncode == 0, out.stdout + out.stderr
    for name in ("run.sh", "tool.sh", "keep.sh"):
        assert mode(p.root / name) == 0o755, (name, oct(mode(p.root / name)), out.stdout)
    assert (p.root / "run.sh").read_text() == FILES["run.sh"]
    assert (p.root / "keep.sh").read_text() == FILES["keep.sh"]
    assert not (p.root / "moved.sh").exists()
    for name in ("link.txt", "other.txt"):
        assert (p.root / name).is_symlink(), (name, out.stdout)
        assert os.readlink(p.root / name) == "target.txt"
    assert (p.root / "target.txt").read_text() == "the target\n"
    assert "restored  run.sh (created; mode 755)" in out.stdout
    assert "restored  link.txt (created; a symbolic link to target.txt)" in out.stdout
    assert os.readlink(p.root / "again.txt") == "through.txt"
    assert (p.root / "through.txt").read_text() == "led to\n", out.stdout
    assert "restored  again.txt (modified; a symbolic link to through.txt)" in out.stdout
    assert "skipped" not in out.stdout
