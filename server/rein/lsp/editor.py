"""The editor as Rein's workspace.

* :class:`EditorWorkspace` reads open documents from the text document sync
  (the editor's buffers are the truth) and the disk for the rest (through
  the one workspace reader, :mod:`rein.tools.disk_read`: in a worker
  thread, regular files only, line ends as they are, the byte order mark
  off as an editor shows it); writes go through ``workspace/applyEdit``:
  the smallest run of whole lines that changed, in a TextDocumentEdit with
  the version it was computed against (``null`` for a document the editor
  has not open: its disk text, checked again right before the edit is
  sent), CreateFile/DeleteFile/RenameFile for file operations. Changes to
  one file are sent one at a time; a write whose ``expected_text`` the
  file no longer holds raises FileChangedError and sends nothing. A
  multi-file change is one ``applyEdit`` with every file's edit (the
  editor applies it as one edit, one undo step) and one generation.

The edits a write sends are :mod:`rein.lsp.editor_edits`; the editor's
diagnostics are :mod:`rein.lsp.editor_diagnostics`; its
approvals and questions :mod:`rein.lsp.editor_dialogs`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import weakref
from codecs import BOM_UTF8
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import anyio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from rein.harness.errors import FileChangedError, SandboxError, ToolError
from rein.harness.file_updates import check_unique
from rein.harness.generations import MutationLog, RecordingWorkspace
from rein.harness.ports import (
    AppliedChange,
    FileContent,
    FileUpdate,
    Mutation,
    MutationOrigin,
    SendingListener,
)
from rein.lsp.channel import method_not_found
from rein.lsp.client_timeout import ClientTimeout
from rein.lsp.editor_edits import edits_to_hold
from rein.tools.disk_read import read_text_async

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = [
    "EditorWorkspace",
    "path_to_uri",
    "uri_to_path",
    "workspace_root",
]

log = logging.getLogger(__name__)


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def path_to_uri(path: Path) -> str:
    return path.as_uri()


class EditorWorkspace(RecordingWorkspace):
    """Workspace port over the editor. One instance per server. Its change
    hooks (:class:`~rein.harness.generations.RecordingWorkspace`) are
    awaited before a write, delete or rename is sent and once the editor
    applied it."""

    def __init__(self, client: ClientChannel, root: Path, mutations: MutationLog) -> None:
        super().__init__(mutations)
        self.client = client
        self._root = root.resolve()
        self._generation = 0
        #: uri -> the text we just applied; the editor's didChange echo of it
        #: is ours, anything else is the person typing.
        self._echo: dict[str, str] = {}
        #: uris Rein asked the editor to save; their didSave is not the person's.
        self._own_saves: set[str] = set()
        self._locks: weakref.WeakValueDictionary[str, anyio.Lock] = weakref.WeakValueDictionary()
        #: Called with the paths right before an edit is sent to the editor
        #: (the diagnostics coordinator: the editor may publish for them
        #: before it answers); :meth:`on_sending`.
        self._sending: list[SendingListener] = []
        #: uri -> the document version Rein's last edit of it was computed
        #: against (sent or applied): diagnostics the editor made for that
        #: version or an older one are not fresh for the edit, whenever
        #: their notice arrives (before the editor's answer and didChange).
        self._edited_from: dict[str, int] = {}

    def on_sending(self, listener: SendingListener) -> Callable[[], None]:
        """Register ``listener``, called with the paths right before an edit
        of them is sent to the editor (:class:`~rein.harness.ports.
        AnnouncesSending`); returns the function that removes it."""
        self._sending.append(listener)

        def remove() -> None:
            if listener in self._sending:
                self._sending.remove(listener)

        return remove

    # ------------------------------------------------- around a change

    async def _about_to_change(self, *paths: str) -> None:
        await self._hooks.about_to_change(*paths)

    # ------------------------------------------------------------------ paths

    @property
    def root(self) -> str:
        return str(self._root)

    @property
    def generation(self) -> int:
        return max(self._generation, self.mutations.latest)

    def uri(self, rel: str) -> str:
        return path_to_uri(self._path(rel))

    def _path(self, rel: str) -> Path:
        path = (self._root / rel).resolve()
        if path != self._root and self._root not in path.parents:
            raise SandboxError(f"{rel} is outside the workspace")
        return path

    def relative(self, uri: str) -> str | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        try:
            return path.resolve().relative_to(self._root).as_posix()
        except ValueError:
            return None

    def _open_document(self, uri: str) -> Any | None:
        return self.client.document(uri)

    def _mutate(self, paths: tuple[str, ...], origin: MutationOrigin = "agent") -> Mutation:
        self._generation = self.generation + 1
        mutation = Mutation(self._generation, paths, origin)
        self.mutations.record(mutation)
        return mutation

    # ------------------------------------------------------- person's edits

    def on_did_change(self, uri: str) -> Mutation | None:
        """A didChange/didOpen/didSave arrived: a person's edit unless it is
        the echo of our own applied edit."""
        rel = self.relative(uri)
        if rel is None:
            return None
        doc = self._open_document(uri)
        expected = self._echo.get(uri)
        if expected is not None and doc is not None and doc.source == expected:
            del self._echo[uri]
            return None
        return self._mutate((rel,), "person")

    def note_external(self, paths: tuple[str, ...]) -> Mutation | None:
        """Files changed on disk by something other than the editor (a
        command, a formatter, git). The watcher has left out the echoes of
        saves already (a file whose disk text equals its open buffer:
        :meth:`buffer_text` is its ``known_text``)."""
        return self._mutate(paths, "external") if paths else None

    def buffer_text(self, rel: str) -> str | None:
        """The open buffer's text of ``rel``; None when it is not open."""
        try:
            doc = self._open_document(self.uri(rel))
        except SandboxError:
            return None
        return None if doc is None else doc.source

    def unsaved_paths(self) -> list[str]:
        """The open documents whose buffer is not the disk's text: the
        person's unsaved typing, or Rein's edit the editor left unsaved
        (:class:`~rein.harness.gating.gate_types.UnsavedDocuments`)."""
        unsaved: list[str] = []
        for uri in self.client.open_documents():
            rel = self.relative(uri)
            doc = self._open_document(uri)
            if rel is None or doc is None:
                continue
            if not _saved(self._root / rel, doc.source):
                unsaved.append(rel)
        return sorted(unsaved)

    def own_save(self, uri: str) -> bool:
        """True (once) when a didSave is the echo of Rein's own save request."""
        if uri in self._own_saves:
            self._own_saves.discard(uri)
            return True
        return False

    async def _save(self, uris: list[str]) -> None:
        """Ask the editor to save what Rein changed, so commands, tests and
        the preview (which read the disk) see it. Best effort: a client
        without ``rein/saveDocuments`` leaves the buffers unsaved."""
        if not self.client.supports("rein/saveDocuments"):
            return
        self._own_saves.update(uris)
        try:
            answer = await self.client.request("rein/saveDocuments", {"uris": uris})
        except ClientTimeout as exc:
            self._own_saves.difference_update(uris)
            log.warning("%s: the buffers stay unsaved", exc)
            return
        except JsonRpcException as exc:
            self._own_saves.difference_update(uris)
            if not method_not_found(exc):
                log.warning("rein/saveDocuments failed: %s", exc)
            return
        # Left dirty by the editor: they held the person's unsaved changes
        # before Rein's edit. Their next save is the person's own, and the
        # buffer (which reads prefer) is ahead of the disk until then.
        unsaved = answer.get("unsaved") if isinstance(answer, dict) else None
        if isinstance(unsaved, list):
            left = [uri for uri in unsaved if isinstance(uri, str)]
            self._own_saves.difference_update(left)
            if left:
                log.info(
                    "left unsaved (the person's unsaved changes are in them): %s", ", ".join(left)
                )

    # ------------------------------------------------------------------ reads

    async def read_text(self, path: str) -> FileContent:
        uri = self.uri(path)
        doc = self._open_document(uri)
        if doc is not None:
            return FileContent(path, doc.source, doc.version, self.generation)
        disk = await read_text_async(self._path(path), path)
        return FileContent(path, disk.text, None, self.generation)

    async def exists(self, path: str) -> bool:
        return self._open_document(self.uri(path)) is not None or self._path(path).exists()

    # ----------------------------------------------------------------- writes

    async def _apply(self, edit: lsp.WorkspaceEdit, label: str, paths: tuple[str, ...]) -> None:
        for listener in list(self._sending):
            listener(paths)
        try:
            result = await self.client.apply_edit(
                lsp.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
        except ClientTimeout as exc:
            raise ToolError(
                f"{exc}, so it is not known whether the change was applied: read the "
                "file again before you redo it."
            ) from None
        except JsonRpcException as exc:
            raise ToolError(f"The editor could not apply the edit: {exc}") from exc
        if not result.applied:
            reason = result.failure_reason or "no reason given"
            raise ToolError(
                f"The editor refused the edit ({reason}). The document probably changed "
                "since you read it (the person may be typing): read the file again and "
                "redo the change on its current text. Nothing the person typed was lost."
            )

    def _lock(self, uri: str) -> anyio.Lock:
        lock = self._locks.get(uri)
        if lock is None:
            lock = self._locks[uri] = anyio.Lock()
        return lock

    def older_than_last_edit(self, uri: str, version: int) -> bool:
        """Whether ``version`` of the document at ``uri`` is older than
        the text of Rein's last edit of it (that edit's base or before)."""
        base = self._edited_from.get(uri)
        return base is not None and version <= base

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        uri = self.uri(path)
        async with self._lock(uri):
            await self._about_to_change(path)
            changes = await edits_to_hold(
                path,
                uri,
                self._open_document(uri),
                self._path(path),
                text,
                expected_version,
                expected_text,
            )
            self._echo[uri] = text
            edited_from = self._edited_from.get(uri)
            base = changes[-1].text_document.version
            if base is not None:
                self._edited_from[uri] = base
            try:
                await self._apply(
                    lsp.WorkspaceEdit(document_changes=changes), f"Rein: edit {path}", (path,)
                )
            except BaseException:
                self._forget_edit(uri, edited_from)
                raise
            mutation = self._mutate((path,))
        await self._hooks.changed(AppliedChange(mutation, "write", text))
        await self._save([uri])
        return mutation

    def _forget_edit(self, uri: str, edited_from: int | None) -> None:
        """An edit of ``uri`` was not applied: no echo to expect, and the
        last edit's base is the one before it again."""
        self._echo.pop(uri, None)
        if edited_from is None:
            self._edited_from.pop(uri, None)
        else:
            self._edited_from[uri] = edited_from

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        """Every file in ONE ``workspace/applyEdit`` (a TextDocumentEdit
        per file with the version it was computed against, CreateFile and
        DeleteFile as needed): the editor applies it as one edit, and one
        generation records it. Each file is checked as :meth:`write_text`
        checks it before anything is sent."""
        paths = check_unique(changes)
        uris = {change.path: self.uri(change.path) for change in changes}
        async with contextlib.AsyncExitStack() as locks:
            for uri in sorted(set(uris.values())):
                await locks.enter_async_context(self._lock(uri))
            await self._about_to_change(*paths)
            document_changes: list[Any] = []
            for change in changes:
                uri = uris[change.path]
                if change.text is not None:
                    document_changes += await edits_to_hold(
                        change.path,
                        uri,
                        self._open_document(uri),
                        self._path(change.path),
                        change.text,
                        change.expected_version,
                        change.expected_text,
                    )
                    continue
                if change.expected_text is not None:
                    now = await self.read_text(change.path)
                    if now.text != change.expected_text:
                        raise FileChangedError(f"{change.path} changed since it was read.")
                options = lsp.DeleteFileOptions(ignore_if_not_exists=False)
                document_changes.append(lsp.DeleteFile(uri=uri, options=options))
            before = {uri: self._edited_from.get(uri) for uri in uris.values()}
            new_texts = {uris[c.path]: c.text for c in changes if c.text is not None}
            for edit in document_changes:
                if isinstance(edit, lsp.TextDocumentEdit):
                    uri = edit.text_document.uri
                    self._echo[uri] = new_texts[uri]
                    if edit.text_document.version is not None:
                        self._edited_from[uri] = edit.text_document.version
            title = label or f"Rein: edit {', '.join(paths)}"
            try:
                await self._apply(
                    lsp.WorkspaceEdit(document_changes=document_changes), title, paths
                )
            except BaseException:
                for uri, edited_from in before.items():
                    self._forget_edit(uri, edited_from)
                raise
            mutation = self._mutate(paths)
        texts = tuple(change.text for change in changes)
        await self._hooks.changed(AppliedChange(mutation, "files", texts=texts))
        await self._save([uris[c.path] for c in changes if c.text is not None])
        return mutation

    async def delete(self, path: str) -> Mutation:
        uri = self.uri(path)
        await self._about_to_change(path)
        await self._apply(
            lsp.WorkspaceEdit(
                document_changes=[
                    lsp.DeleteFile(
                        uri=uri, options=lsp.DeleteFileOptions(ignore_if_not_exists=False)
                    )
                ]
            ),
            f"Rein: delete {path}",
            (path,),
        )
        mutation = self._mutate((path,))
        await self._hooks.changed(AppliedChange(mutation, "delete"))
        return mutation

    async def rename(self, old: str, new: str) -> Mutation:
        await self._about_to_change(old, new)
        await self._apply(
            lsp.WorkspaceEdit(
                document_changes=[
                    lsp.RenameFile(
                        old_uri=self.uri(old),
                        new_uri=self.uri(new),
                        options=lsp.RenameFileOptions(overwrite=False),
                    )
                ]
            ),
            f"Rein: rename {old} to {new}",
            (old, new),
        )
        mutation = self._mutate((old, new))
        await self._hooks.changed(AppliedChange(mutation, "rename"))
        return mutation


def _saved(path: Path, text: str) -> bool:
    """The disk's ``path`` holds ``text`` (a byte order mark aside, which
    an editor keeps out of the buffer)."""
    encoded = text.encode("utf-8")
    try:
        if path.stat().st_size not in (len(encoded), len(encoded) + len(BOM_UTF8)):
            return False
        return path.read_bytes().removeprefix(BOM_UTF8) == encoded
    except OSError:
        return False


def workspace_root(server: Any) -> Path:
    root = server.workspace.root_path
    return Path(root) if root else Path(os.getcwd())
