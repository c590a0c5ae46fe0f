"""DiskWorkspace: the Workspace port on the file system."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import anyio
import pytest

from rein.disk.disk_workspace import DiskWorkspace, directory_lock
from rein.harness.errors import FileChangedError, SandboxError, ToolError
from rein.harness.ports import Mutation
from rein.tools.disk_read import MAX_TEXT_BYTES


async def test_write_is_atomic_keeps_mode_and_creates_parents(root: Path) -> None:
    workspace = DiskWorkspace(root)
    script = root / "bin" / "run.sh"
    script.parent.mkdir()
    script.write_text("old\n")
    script.chmod(0o751)
    first = await workspace.write_text("bin/run.sh", "#!/bin/sh\necho hi\n")
    second = await workspace.write_text("deep/er/new.txt", "x")
    assert script.read_text() == "#!/bin/sh\necho hi\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert (root / "deep/er/new.txt").read_text() == "x"
    assert [p.name for p in (root / "bin").iterdir()] == ["run.sh"], "no temp file left"
    assert (first.generation, second.generation) == (1, 2)
    assert workspace.generation == 2
    assert first == Mutation(1, ("bin/run.sh",), "agent")


async def test_new_files_get_the_default_mode(root: Path) -> None:
    workspace = DiskWorkspace(root)
    await workspace.write_text("n.txt", "x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((root / "n.txt").stat().st_mode) == 0o666 & ~mask


async def test_read_text_and_its_errors(root: Path) -> None:
    workspace = DiskWorkspace(root)
    (root / "a.txt").write_text("héllo\n", encoding="utf-8")
    (root / "img.bin").write_bytes(b"\x00\x01")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    (root / "dir").mkdir()
    content = await workspace.read_text("a.txt")
    assert (content.path, content.text, content.version, content.generation) == (
        "a.txt",
        "héllo\n",
        None,
        0,
    )
    with pytest.raises(ToolError, match=r"img\.bin is a binary file"):
        await workspace.read_text("img.bin")
    with pytest.raises(ToolError, match=r"latin1\.txt is not valid UTF-8 text"):
        await workspace.read_text("latin1.txt")
    with pytest.raises(ToolError, match=r"File not found: nope\.txt"):
        await workspace.read_text("nope.txt")
    with pytest.raises(ToolError, match="dir is a directory"):
        await workspace.read_text("dir")


async def test_delete_rename_and_external_changes(root: Path) -> None:
    workspace = DiskWorkspace(root)
    seen: list[Mutation] = []
    unsubscribe = workspace.subscribe(seen.append)
    await workspace.write_text("a.txt", "a")
    renamed = await workspace.rename("a.txt", "moved/b.txt")
    assert renamed.paths == ("a.txt", "moved/b.txt")
    assert not await workspace.exists("a.txt")
    assert await workspace.exists("moved/b.txt")
    await workspace.write_text("c.txt", "c")
    with pytest.raises(ToolError, match="already exists"):
        await workspace.rename("c.txt", "moved/b.txt")
    deleted = await workspace.delete("moved/b.txt")
    assert deleted.generation == 4
    with pytest.raises(ToolError, match="File not found"):
        await workspace.delete("moved/b.txt")
    external = workspace.note_external_change(["c.txt"])
    assert external == Mutation(5, ("c.txt",), "external")
    assert workspace.note_external_change(["c.txt"], origin="person").origin == "person"
    unsubscribe()
    await workspace.write_text("d.txt", "d")
    assert [m.generation for m in seen] == [1, 2, 3, 4, 5, 6]
    assert [m.generation for m in workspace.mutations] == [1, 2, 3, 4, 5, 6, 7]


async def test_paths_leaving_the_root_are_refused(root: Path, tmp_path: Path) -> None:
    workspace = DiskWorkspace(root)
    (root / "out").symlink_to(tmp_path, target_is_directory=True)
    for bad in ("../x.txt", "/etc/passwd", "out/x.txt"):
        with pytest.raises(SandboxError):
            await workspace.write_text(bad, "x")
    assert not (tmp_path / "x.txt").exists()
    assert not await workspace.exists("../x.txt")


async def test_a_write_computed_from_an_old_text_is_refused_and_nothing_written(
    root: Path,
) -> None:
    workspace = DiskWorkspace(root)
    (root / "f.py").write_text("a = 1\n")
    read = await workspace.read_text("f.py")
    (root / "f.py").write_text("a = 1\nb = 2\n")  # another process changed it
    with pytest.raises(FileChangedError, match=r"f\.py changed since it was read"):
        await workspace.write_text("f.py", "a = 10\n", expected_text=read.text)
    assert (root / "f.py").read_text() == "a = 1\nb = 2\n"
    assert workspace.generation == 0
    current = await workspace.read_text("f.py")
    await workspace.write_text("f.py", "a = 10\nb = 2\n", expected_text=current.text)
    assert (root / "f.py").read_text() == "a = 10\nb = 2\n"


async def test_reads_keep_line_ends_and_writes_keep_the_byte_order_mark(root: Path) -> None:
    workspace = DiskWorkspace(root)
    (root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfa\n")
    assert (await workspace.read_text("crlf.txt")).text == "a\r\nb\r\n"
    assert (await workspace.read_text("bom.txt")).text == "a\n"
    await workspace.write_text("bom.txt", "b\n")  # a whole new text (write_file)
    assert (root / "bom.txt").read_bytes() == b"\xef\xbb\xbfb\n"


@pytest.mark.parametrize("kind", ["fifo", "device", "large"])
async def test_a_special_or_large_file_is_refused_without_blocking(root: Path, kind: str) -> None:
    workspace = DiskWorkspace(root)
    if kind == "fifo":
        os.mkfifo(root / "f")
        says = "f is a named pipe (FIFO), not a regular file"
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(root / "f", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
        says = "f is a device, not a regular file"
    else:
        with (root / "f").open("wb") as handle:
            handle.truncate(MAX_TEXT_BYTES + 1)
        says = "f is 2.0 MB, too large to read or edit"
    with anyio.fail_after(5):  # a FIFO read used to wait for a writer forever
        with pytest.raises(ToolError, match=re.escape(says)):
            await workspace.read_text("f")


def test_the_directory_lock_excludes_other_holders_and_is_bounded(root: Path) -> None:
    with (
        directory_lock(root),
        pytest.raises(ToolError, match="Another process has held the write lock"),
        directory_lock(root, bound_s=0.05),
    ):
        pass
    with directory_lock(root, bound_s=0.05):
        pass  # released
