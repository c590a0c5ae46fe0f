"""The workspace's texts before a command changed them (the tests gate's
baseline for a command's changes)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from rein.testgate.before_commands import TextsBeforeCommands


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    # A new stamp even within the file system's time resolution.
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))


def test_a_walk_gives_what_each_changed_file_said_at_the_walk_before(tmp_path: Path) -> None:
    _write(tmp_path, "pkg/mod.py", "A = 1\n")
    _write(tmp_path, "pkg/gone.py", "B = 2\n")
    _write(tmp_path, "data/table.json", '{"x": 1}\n')
    _write(tmp_path, "logo.png", "not kept")
    _write(tmp_path, ".venv/lib/site.py", "skipped\n")
    walks = TextsBeforeCommands(tmp_path)
    assert walks.walk() == {}  # the first walk learns the files

    _write(tmp_path, "pkg/mod.py", "A = 2\n")  # what a command did
    (tmp_path / "pkg" / "gone.py").unlink()
    _write(tmp_path, "pkg/new.py", "C = 3\n")
    _write(tmp_path, "data/table.json", '{"x": 2}\n')
    _write(tmp_path, "logo.png", "changed, never kept")
    _write(tmp_path, ".venv/lib/site.py", "changed where no walk looks\n")

    assert walks.walk() == {
        "pkg/mod.py": "A = 1\n",
        "pkg/gone.py": "B = 2\n",
        "pkg/new.py": None,  # it was not there
        "data/table.json": '{"x": 1}\n',
    }
    assert walks.walk() == {}  # nothing since
    _write(tmp_path, "pkg/mod.py", "A = 3\n")
    assert walks.walk() == {"pkg/mod.py": "A = 2\n"}


def test_a_file_no_walk_saw_where_the_walks_look_was_never_there(tmp_path: Path) -> None:
    _write(tmp_path, "mod.py", "A = 1\n")
    _write(tmp_path, "pkg/util.py", "B = 1\n")
    walks = TextsBeforeCommands(tmp_path)
    assert not walks.never_there("sedAb12Cd")  # no walk yet: not known
    walks.walk()
    assert walks.never_there("sedAb12Cd")  # sed -i's own temporary file
    assert walks.never_there("pkg/sedAb12Cd")
    assert not walks.never_there("mod.py")
    assert not walks.never_there(".git/index.lock")  # where no walk looks
    assert not walks.never_there("nowhere/sedAb12Cd")  # a folder no walk went through
    (tmp_path / "mod.py").unlink()
    walks.walk()
    assert not walks.never_there("mod.py")  # deleted: it was there


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    """A named pipe would block the read for ever; a link may point at
    anything (``/dev/zero``): both are known by their own stamp only."""
    _write(tmp_path, "mod.py", "A = 1\n")
    os.mkfifo(tmp_path / "out.txt")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    walks = TextsBeforeCommands(tmp_path)
    walked = threading.Thread(target=walks.walk, daemon=True)
    walked.start()
    walked.join(30)
    blocked = walked.is_alive()
    if blocked:  # reading the pipe: open it for writing to end the read
        os.close(os.open(tmp_path / "out.txt", os.O_WRONLY))
        walked.join(5)
    assert not blocked
    (tmp_path / "out.txt").unlink()
    (tmp_path / "zero.json").unlink()
    _write(tmp_path, "mod.py", "A = 2\n")
    assert walks.walk() == {"mod.py": "A = 1\n"}  # the others' texts were never kept
    assert not walks.never_there("out.txt") and not walks.never_there("zero.json")
