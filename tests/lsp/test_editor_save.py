"""EditorWorkspace's save after an edit: a document the editor left dirty
because it held the person's unsaved typing is not counted as Rein's own
save, so the person's later save is theirs (issue 21)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from rein.harness.generations import MutationLog
from rein.lsp.client_timeout import ClientTimeout
from rein.lsp.editor import EditorWorkspace
from tests.fakes.channel import FakeClientChannel


def test_a_document_left_unsaved_for_the_person_is_not_reins_save(tmp_path: Path) -> None:
    ours, theirs = (tmp_path / "a.py").as_uri(), (tmp_path / "b.py").as_uri()
    channel = FakeClientChannel({"rein/saveDocuments": [{"saved": [ours], "unsaved": [theirs]}]})
    workspace = EditorWorkspace(channel, tmp_path, MutationLog())  # type: ignore[arg-type]
    asyncio.run(workspace._save([ours, theirs]))
    assert channel.requests == [("rein/saveDocuments", {"uris": [ours, theirs]})]
    assert workspace.own_save(ours) is True  # the didSave of Rein's save
    assert workspace.own_save(theirs) is False  # the person's save, when it comes


def test_an_editor_that_does_not_answer_leaves_nothing_counted(tmp_path: Path) -> None:
    uri = (tmp_path / "a.py").as_uri()
    channel = FakeClientChannel({"rein/saveDocuments": [ClientTimeout("rein/saveDocuments", 5)]})
    workspace = EditorWorkspace(channel, tmp_path, MutationLog())  # type: ignore[arg-type]
    asyncio.run(workspace._save([uri]))
    assert workspace.own_save(uri) is False


def test_the_unsaved_documents_are_the_open_buffers_the_disk_does_not_hold(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "saved.py").write_text("x = 1\n")
    (root / "bom.py").write_bytes(b"\xef\xbb\xbfy = 2\n")  # the editor keeps the mark out
    (root / "typed.py").write_text("z = 3\n")
    (root / "longer.py").write_text("w = 4\n")
    channel = FakeClientChannel()
    workspace = EditorWorkspace(channel, root, MutationLog())  # type: ignore[arg-type]
    buffers = {
        "saved.py": "x = 1\n",
        "bom.py": "y = 2\n",
        "typed.py": "z = 9\n",  # same size, other text
        "longer.py": "w = 4\nv = 5\n",
        "new.py": "n = 1\n",  # not on disk yet
    }
    for rel, text in buffers.items():
        channel.documents[workspace.uri(rel)] = SimpleNamespace(source=text, version=2)
    channel.documents[(tmp_path / "outside.py").as_uri()] = SimpleNamespace(source="", version=1)

    assert workspace.unsaved_paths() == ["longer.py", "new.py", "typed.py"]
