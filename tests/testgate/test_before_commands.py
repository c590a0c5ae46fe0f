"""The workspace's texts before a command changed them (the tests gate's
baseline for a command's changes)."""

from __future__ import annotations

import os
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
    walks = TextsBeforeCommands(tmp_path)
    assert not walks.never_there("sedAb12Cd")  # no walk yet: not known
    walks.walk()
    assert walks.never_there("sedAb12Cd")  # sed -i's own temporary file
    assert walks.never_there("pkg/sedAb12Cd")
    assert not walks.never_there("mod.py")
    assert not walks.never_there(".git/index.lock")  # where no walk looks
