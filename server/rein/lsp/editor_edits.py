"""The edits that make a file in the editor hold a new text: the smallest
run of whole lines that changed, in a TextDocumentEdit with the version it
was computed against (``null`` for a document the editor has not open: its
disk text, read here), a CreateFile first for a new file, the whole text
for one that is no UTF-8 text; each checked first against the version or
text the change was computed from (FileChangedError, nothing sent).
:class:`~rein.lsp.editor.EditorWorkspace` sends them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from rein.harness.errors import FileChangedError, ToolError
from rein.tools.disk_read import read_text_async

__all__ = ["edits_to_hold", "line_edit"]


def _lines(text: str) -> list[str]:
    """``text`` as lines with their line ends (the last one without)."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    return [*lines, pieces[-1]] if pieces[-1] else lines


def line_edit(old: str, new: str) -> lsp.TextEdit:
    """The edit that turns ``old`` into ``new`` by replacing the smallest run
    of whole lines that differ. Positions are at the start of a line (no
    character offsets, which depend on the position encoding); an end past
    the last line is clamped by editors to the end of the document."""
    a, b = _lines(old), _lines(new)
    if "\r" in old.replace("\r\n", ""):
        # A lone CR ends a line for the editor, not here: replace it all.
        prefix = suffix = 0
    else:
        prefix = 0
        while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < min(len(a), len(b)) - prefix
            and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]
        ):
            suffix += 1
    end_line = len(a) - suffix
    return lsp.TextEdit(
        range=lsp.Range(lsp.Position(prefix, 0), lsp.Position(end_line, 0)),
        new_text="".join(b[prefix : len(b) - suffix]),
    )


def _whole(text: str) -> lsp.TextEdit:
    """Replace the whole document (its end clamped by the editor)."""
    end = lsp.Position(_MAX_LINE, 0)
    return lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), end), new_text=text)


#: LSP's largest line number (a uinteger).
_MAX_LINE = 2**31 - 1


async def edits_to_hold(
    path: str,
    uri: str,
    doc: Any | None,
    full: Path,
    text: str,
    expected_version: int | None,
    expected_text: str | None,
) -> list[Any]:
    """The document changes that make ``path`` hold ``text``: a line
    edit against the open buffer (with its version) or the disk's text
    (version null: the editor has no version of a document it has not
    open), after checking it is the text the change was computed from.
    ``doc`` is the open document at ``uri`` (None when it is not open),
    ``full`` the file's path on disk."""
    changes: list[Any] = []
    old: str | None
    if doc is not None:
        if expected_version is not None and doc.version != expected_version:
            raise FileChangedError(
                f"{path} changed in the editor since you read it (version {expected_version}, "
                f"now {doc.version}): read it again and redo the change. Nothing the person "
                "typed was lost."
            )
        if expected_text is not None and doc.source != expected_text:
            raise FileChangedError(f"{path} changed in the editor since it was read.")
        version, old = doc.version, doc.source
    else:
        version = None
        try:
            old = (await read_text_async(full, path)).text
        except ToolError:
            exists, is_file = _on_disk(full)
            if exists and (expected_text is not None or not is_file):
                raise
            if exists:
                old = None  # binary, not UTF-8 or large: replaced whole (write_file)
            else:
                old = ""
                changes.append(
                    lsp.CreateFile(
                        uri=uri,
                        options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                    )
                )
        if expected_text is not None and old != expected_text:
            raise FileChangedError(f"{path} changed on disk since it was read; it was not written.")
    changes.append(
        lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=[line_edit(old, text) if old is not None else _whole(text)],
        )
    )
    return changes


def _on_disk(full: Path) -> tuple[bool, bool]:
    """Whether ``full`` exists, and whether it is a regular file."""
    return full.exists(), full.is_file()
