"""The shadow tree: the workspace mirrored, the overlay written, the
person's files never touched."""

from __future__ import annotations

from pathlib import Path

from rein.testgate.shadow import build_shadow


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
        assert (root / "pkg/util.py").is_symlink() and (root / "pkg").is_dir()
        assert (root / "node_modules").is_symlink()
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
