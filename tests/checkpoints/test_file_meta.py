"""DiskFileMeta sets a mode and makes a link without following a link: a
process the run left running that swaps a path (or its folder) for a link
out of the workspace, after the path was looked at, gets a refusal, never
the outside file changed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rein.checkpoints.file_meta import DiskFileMeta, led_to


class SwappedAfterTheLook(DiskFileMeta):
    """As if another process replaced ``d`` by a link to ``outside`` just
    after the path was checked."""

    def __init__(self, root: Path, outside: Path) -> None:
        super().__init__(root)
        self.root, self.outside = root, outside

    def _path(self, rel: str) -> Path:
        found = super()._path(rel)
        os.rename(self.root / "d", self.root / "d.moved")
        os.symlink(self.outside, self.root / "d")
        return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "f").write_text("secret\n")
    os.chmod(folder / "f", 0o600)
    return folder


async def test_a_folder_swapped_for_a_link_out_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_text("x\n")
    with pytest.raises(OSError):
        await SwappedAfterTheLook(root, outside).set_mode("d/f", 0o755)
    assert stat.S_IMODE((outside / "f").stat().st_mode) == 0o600
    os.unlink(root / "d")
    os.rename(root / "d.moved", root / "d")
    with pytest.raises(OSError):
        await SwappedAfterTheLook(root, outside).make_link("d/l", "anything")
    assert sorted(os.listdir(outside)) == ["f"]


async def test_a_link_is_never_chmodded_through(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(outside / "f", root / "f")
    with pytest.raises(OSError):
        await DiskFileMeta(root).set_mode("f", 0o755)
    assert stat.S_IMODE((outside / "f").stat().st_mode) == 0o600
    (root / "g").write_text("g\n")
    os.chmod(root / "g", 0o200)  # not readable by its owner: still set
    await DiskFileMeta(root).set_mode("g", 0o750)
    assert stat.S_IMODE((root / "g").stat().st_mode) == 0o750
    await DiskFileMeta(root).make_link("new/deeper/l", "../../g")
    assert os.readlink(root / "new" / "deeper" / "l") == "../../g"


def test_led_to_names_a_links_target_in_the_workspace_or_none() -> None:
    assert led_to("docs/L", "../Y.txt") == "Y.txt"
    assert led_to("L", "sub/./Y.txt") == "sub/Y.txt"
    assert led_to("L", "../outside.txt") is None
    assert led_to("docs/L", "../../outside.txt") is None
    assert led_to("L", "/etc/passwd") is None
    assert led_to("L", ".") is None
