"""The changed paths that never were files (rein.disk.file_presence): a
command's temporary file is none; a file the run deleted, one created in an
earlier validated change, or one in a folder the scan did not walk is."""

from __future__ import annotations

from pathlib import Path

from rein.disk.file_presence import FilePresence
from rein.tools.ignore import WorkspaceFilter


def scanned(root: Path) -> FilePresence:
    presence = FilePresence(root)
    WorkspaceFilter(root).walk_files({".py"}, presence.saw_folder)
    return presence


def test_a_temporary_file_never_was_and_a_deleted_one_was(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "util.py").write_text("x = 1\n")
    (tmp_path / "setup.cfg").write_text("[metadata]\n")
    presence = scanned(tmp_path)
    # sed -i: its temporary file came and went (told once, or as it came).
    presence.changed("pkg/util.py")
    presence.changed("pkg/sedAbC123")
    (tmp_path / "pkg" / "later.tmp").write_text("t")
    presence.changed("pkg/later.tmp")
    (tmp_path / "pkg" / "later.tmp").unlink()
    presence.changed("pkg/later.tmp")
    assert presence.never_there("pkg/sedAbC123")
    assert presence.never_there("pkg/later.tmp")
    assert not presence.never_there("pkg/util.py")
    # A setting the scan saw (any suffix), deleted: a change.
    (tmp_path / "setup.cfg").unlink()
    presence.changed("setup.cfg")
    assert not presence.never_there("setup.cfg")
    # A folder the scan did not walk (made since): not known to be absent.
    presence.changed("new/tmpfile")
    assert not presence.never_there("new/tmpfile")


def test_a_file_made_before_the_changes_were_released_was_there(tmp_path: Path) -> None:
    presence = scanned(tmp_path)
    (tmp_path / "notes.txt").write_text("n")
    presence.changed("notes.txt")
    presence.forget_changes()  # validated: notes.txt is a file of the tree now
    (tmp_path / "notes.txt").unlink()
    presence.changed("notes.txt")
    assert not presence.never_there("notes.txt")
    # A path that is a file again is no longer "never there".
    presence.changed("gone.tmp")
    assert presence.never_there("gone.tmp")
    (tmp_path / "gone.tmp").write_text("back")
    assert not presence.never_there("gone.tmp")
