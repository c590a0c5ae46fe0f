"""The pool navigator's own logic, without a server: which analyzers may
answer, hover texts, and a clear refusal when none can."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator, _hover_text, _rename_edits, navigates
from rein.harness.navigation_ports import (
    CodeRange,
    FileEdits,
    NavigationUnavailable,
    Position,
    TextReplacement,
)


def test_only_servers_that_are_not_linters_navigate() -> None:
    assert not navigates(["ruff", "eslint", "biome", "bash"])
    assert navigates(["ruff", "basedpyright"])
    assert navigates(["gopls"])


def test_hover_contents_of_every_shape_become_text() -> None:
    markup = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="**f**")
    assert _hover_text(markup) == "**f**"
    marked = lsp.MarkedStringWithLanguage(language="python", value="def f()")
    assert _hover_text([marked, "doc"]) == "```python\ndef f()\n```\n\ndoc"


async def test_a_file_no_running_server_owns_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    async with AnalyzerPool(tmp_path, []) as pool:
        navigator = PoolNavigator(pool, index_wait_s=0.1)
        assert navigator.source == "no language server"
        with pytest.raises(
            NavigationUnavailable, match=r"No language server here answers for \.py"
        ):
            await navigator.references("a.py", Position(0, 0))
        with pytest.raises(NavigationUnavailable, match="No language server is running"):
            await navigator.workspace_symbols("x")


def test_a_rename_answer_is_documentchanges_when_given_with_the_text_the_server_was_sent() -> None:
    def edit(line: int, new: str) -> lsp.TextEdit:
        place = lsp.Position(line=line, character=0)
        return lsp.TextEdit(range=lsp.Range(start=place, end=place), new_text=new)

    doc = lsp.OptionalVersionedTextDocumentIdentifier(uri="file:///w/a.py", version=None)
    both = lsp.WorkspaceEdit(
        changes={"file:///w/a.py": [edit(0, "x")]},
        document_changes=[lsp.TextDocumentEdit(text_document=doc, edits=[edit(0, "x")])],
    )
    path_of = {"file:///w/a.py": "a.py", "file:///w/b.py": "b.py"}.__getitem__
    edits = _rename_edits(both, path_of, {"a.py": "sent text"}, "srv")
    # One of the two (LSP: documentChanges wins), not the same insert twice.
    assert edits == {"a.py": (TextReplacement(CodeRange(Position(0, 0), Position(0, 0)), "x"),)}
    assert isinstance(edits["a.py"], FileEdits) and edits["a.py"].text == "sent text"
    only_changes = lsp.WorkspaceEdit(changes={"file:///w/b.py": [edit(1, "y")]})
    assert _rename_edits(only_changes, path_of, {}, "srv")["b.py"].text is None
    create = lsp.WorkspaceEdit(document_changes=[lsp.CreateFile(uri="file:///w/c.py")])
    with pytest.raises(NavigationUnavailable, match="srv's rename creates, renames or deletes"):
        _rename_edits(create, path_of, {}, "srv")
