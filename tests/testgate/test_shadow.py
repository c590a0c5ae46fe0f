"""The shadow tree: the workspace mirrored, the overlay written, the
person's files never touched."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from rein.testgate import shadow as shadow_module
from rein.testgate.shadow import Shadow, ShadowTree, build_shadow, open_shadow


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


def test_a_kept_tree_places_again_only_what_changed_and_undoes_what_runs_left(
    tmp_path: Path,
) -> None:
    src = tmp_path / "proj"
    files = {"kept.py": "k\n", "same.py": "same\n", "edited.py": "v1\n", "gone.py": "g\n"}
    files["pkg/damaged.py"] = "d\n"
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    tree = ShadowTree(src)
    try:
        first = tree.sync({"mod.py": "one\n"})
        root = first.root
        assert (first.copied, first.written) == (5, 1)
        # What a run leaves behind: compiled modules, new files and
        # folders, a changed and a deleted file.
        (root / "__pycache__").mkdir()
        for stem in ("kept", "mod"):
            (root / "__pycache__" / f"{stem}.cpython-311.pyc").write_bytes(b"compiled")
        (root / "scratch").mkdir()
        (root / "scratch" / "out.txt").write_text("left\n")
        (root / "marker").write_text("ran\n")
        (root / "pkg" / "damaged.py").write_text("changed by a test\n")
        (root / "same.py").unlink()
        # The workspace changes too; the overlay gets a same-size text.
        (src / "edited.py").write_text("v2\n")
        (src / "gone.py").unlink()
        (src / "new.py").write_text("n\n")

        second = tree.sync({"mod.py": "two\n"})

        assert second.root == root
        assert {
            p.relative_to(root).as_posix(): p.read_text()
            for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        } == {
            "kept.py": "k\n",
            "same.py": "same\n",
            "edited.py": "v2\n",
            "new.py": "n\n",
            "pkg/damaged.py": "d\n",
            "mod.py": "two\n",
        }
        # same (deleted), edited, new, damaged: kept.py stays as it was.
        assert (second.copied, second.written) == (4, 1)
        # The compiled module whose text was placed again is gone; the other stays.
        assert sorted(p.name for p in (root / "__pycache__").iterdir()) == ["kept.cpython-311.pyc"]
        third = tree.sync({"mod.py": "two\n"})
        assert (third.copied, third.written) == (0, 0)
    finally:
        tree.remove()
    assert not root.exists()
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == {
        **{p: b for p, b in before.items() if p.name not in ("edited.py", "gone.py")},
        src / "edited.py": b"v2\n",
        src / "new.py": b"n\n",
    }
