"""The shadow tree: the workspace mirrored, the overlay written, the
person's files never touched."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from rein.testgate import shadow as shadow_module
from rein.testgate.shadow import Shadow, build_shadow, open_shadow


def test_the_overlay_is_written_in_the_shadow_and_nowhere_else(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    for rel, text in {
        "mod.py": "old\n",
        "gone.py": "still here\n",
        "pkg/util.py": "util\n",
        ".git/config": "[core]\n",
        "node_modules/lib/index.js": "real\n",
    }.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}

    shadow = build_shadow(
        src,
        {
            "mod.py": "new\n",
            "gone.py": None,
            "pkg/added.py": "added\n",
            "node_modules/lib/index.js": "would reach the real file\n",
            "../escape.py": "outside\n",
        },
    )
    try:
        root = shadow.root
        assert (root / "mod.py").read_text() == "new\n" and not (root / "mod.py").is_symlink()
        assert not (root / "gone.py").exists()
        assert (root / "pkg/added.py").read_text() == "added\n"
        # A copy, not a link: a test writing it writes the shadow's file.
        assert not (root / "pkg/util.py").is_symlink() and (root / "pkg").is_dir()
        assert (root / "pkg/util.py").read_text() == "util\n"
        assert (root / "node_modules").is_symlink()
        assert shadow.unreachable == ["node_modules/lib/index.js", "../escape.py"]
        assert not (root / ".git").exists()
        assert shadow.relative(str(root / "pkg" / "util.py")) == "pkg/util.py"
        assert shadow.relative(str(src / "mod.py")) == "mod.py"
        assert shadow.relative(str(root / "node_modules" / "lib" / "index.js")) is None
        assert shadow.relative("/usr/lib/python3/os.py") is None
    finally:
        shadow.remove()
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "escape.py").exists()
    assert not shadow.root.exists()


def test_a_big_file_is_linked_and_a_build_folder_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shadow_module, "MAX_COPIED_BYTES", 10)
    src = tmp_path / "proj"
    (src / "target/ci").mkdir(parents=True)
    (src / "target/ci/report.xml").write_text("<old/>")
    (src / "big.bin").write_bytes(b"x" * 11)

    shadow = build_shadow(src, {})
    try:
        assert (shadow.root / "big.bin").is_symlink()
        assert not (shadow.root / "target").is_symlink()
        assert not (shadow.root / "target/ci/report.xml").is_symlink()
        assert (shadow.copied, shadow.linked) == (1, 1)
    finally:
        shadow.remove()


async def test_a_shadow_built_while_its_verdict_is_cancelled_is_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "proj"
    src.mkdir()
    (src / "mod.py").write_text("x = 1\n")
    started, release, removed = threading.Event(), threading.Event(), threading.Event()
    built: list[Shadow] = []

    def slow_build(source: Path, overlay: dict[str, str | None]) -> Shadow:
        started.set()
        release.wait(10)
        built.append(build_shadow(source, overlay))
        return built[-1]

    real_remove = Shadow.remove

    def remove(self: Shadow) -> None:
        real_remove(self)
        removed.set()

    monkeypatch.setattr(shadow_module, "build_shadow", slow_build)
    monkeypatch.setattr(Shadow, "remove", remove)
    task = asyncio.ensure_future(open_shadow(src, {}))
    await asyncio.to_thread(started.wait, 10)
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(removed.wait, 10)
    assert built and not built[0].root.exists()
