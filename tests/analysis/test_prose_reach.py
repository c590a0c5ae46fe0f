"""A prose file (notes, a changelog) the run changed or created is no
module: it does not make what the change can reach unknown, nor every
importer's baseline unaskable (``run_texts.users_of_created``)."""

from __future__ import annotations

from rein.analysis.baselines import FileBaseline
from rein.analysis.run_texts import users_of_created
from rein.harness.gating.analyzer_inputs import is_prose
from tests.fakes.workspace import FakeWorkspace


def test_prose_is_notes_not_requirements_nor_settings() -> None:
    assert is_prose("CHANGES.md") and is_prose("docs/notes.txt") and is_prose("README.rst")
    assert not is_prose("requirements.txt") and not is_prose("deps/requirements-dev.txt")
    assert not is_prose("setup.cfg") and not is_prose("lib.py")


def created(path: str) -> FileBaseline:
    return FileBaseline(path, "", (), existed=False)


async def test_a_created_prose_file_leaves_the_importers_askable() -> None:
    ws = FakeWorkspace({"notes.txt": "hi\n", "a.py": "from lib import greet\n", "x.ts": ""})
    files = {"notes.txt": created("notes.txt")}
    assert await users_of_created(["notes.txt"], files, ws, ["a.py"]) == set()
    # Another language's created file is still not scanned: every file.
    files["x.ts"] = created("x.ts")
    assert await users_of_created(["notes.txt", "x.ts"], files, ws, ["a.py"]) == {"a.py"}


async def test_a_created_backup_leaves_the_importers_askable() -> None:
    """``sed -i.bak`` creates lib.py.bak: no analyzer reads it, so the
    importers' baselines can still be asked as before the run."""
    ws = FakeWorkspace({"lib.py.bak": "x\n", "a.py": "from lib import greet\n", "cfg.json": ""})
    files = {"lib.py.bak": created("lib.py.bak")}
    assert await users_of_created(["lib.py.bak"], files, ws, ["a.py"]) == set()
    # A created setting is read: every file.
    files["cfg.json"] = created("cfg.json")
    assert await users_of_created(["lib.py.bak", "cfg.json"], files, ws, ["a.py"]) == {"a.py"}
