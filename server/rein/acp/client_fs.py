"""The workspace as the ACP client sees it: reads and writes through
``fs/read_text_file`` and ``fs/write_text_file`` when the client offers
them, the disk otherwise.

The client's buffers are the truth: a file the person changed and did not
save is read as they see it (with a version, as an editor's buffer is read,
so the tools do not take it for a disk read that changed under them), and an edit goes into the editor's buffer
(which the editor tracks, shows and saves). Every change is a mutation
generation exactly as a disk write is (:class:`DiskWorkspace` keeps the
counter). ACP has no delete or rename: those go to the disk. A multi-file
change (:meth:`ClientFsWorkspace.apply_changes`) is one generation, but
ACP has no edit of several files at once: each file is written to the
client in turn (a failure puts back the ones written), so the editor may
show the files half-changed for that moment and has one undo step per file.

The texts read from and written to the client are kept (:meth:`text_of`):
the headless analyzers read them before the disk
(``AnalyzerPool(read=...)``, and ``on_text`` has the pool look again when a
read shows an unsaved change), so the analyzer gate judges the client's
view, and the disk watcher does not take the editor's later save of the
same text for a change by someone else (``DiskWatcher(known_text=...)``).
A kept text is dropped once the disk holds a different one (the person
saved something newer): from then on the disk is newer than what Rein saw.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio

from rein.acp._client_calls import CLIENT_BOUND_S, ask_client
from rein.acp.context import ClientLink
from rein.disk.disk_workspace import DiskWorkspace, delete_checked
from rein.harness.errors import FileChangedError, ToolError
from rein.harness.file_updates import apply_in_turn, check_unique
from rein.harness.ports import FileContent, FileUpdate, Mutation
from rein.tools.disk_read import read_text

__all__ = ["ClientFsWorkspace"]

log = logging.getLogger(__name__)

_Stamp = tuple[int, int] | None


def _stamp(path: Path) -> _Stamp:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _disk_text(path: Path) -> str | None:
    """The file's text as an editor shows it (the one workspace reader:
    regular files only, bounded, line ends kept, no byte order mark)."""
    try:
        return read_text(path, path.name).text
    except (OSError, ToolError):
        return None


@dataclass(slots=True)
class _Seen:
    """A text the client gave or was given, the disk's stamp then, and its
    version (:meth:`ClientFsWorkspace._remember`)."""

    text: str
    stamp: _Stamp
    version: int


class ClientFsWorkspace:
    """The harness ``Workspace`` over the client's ``fs/*`` methods.

    ``session_id_of()`` names the ACP session a request is for (the
    agent's :data:`rein.acp.context.current_session`); outside a session,
    and for what the client does not offer, the disk answers.
    """

    def __init__(
        self,
        disk: DiskWorkspace,
        link: ClientLink,
        session_id_of: Callable[[], str | None],
        *,
        bound_s: float = CLIENT_BOUND_S,
        on_text: Callable[[str], None] | None = None,
    ) -> None:
        self.disk = disk
        self.link = link
        self.session_id_of = session_id_of
        self.bound_s = bound_s
        #: Called with a path when a read shows a text other than the one
        #: Rein knew (the person's unsaved change): the analyzer pool's
        #: ``refresh``, so the analyzers see it before Rein changes the file.
        self.on_text = on_text
        self._overlay: dict[str, _Seen] = {}
        #: The last version given out per path (never reset: a version is
        #: not reused for another text).
        self._versions: dict[str, int] = {}
        self._locks: weakref.WeakValueDictionary[str, anyio.Lock] = weakref.WeakValueDictionary()

    # ------------------------------------------------------------ the port

    @property
    def root(self) -> str:
        return self.disk.root

    @property
    def generation(self) -> int:
        return self.disk.generation

    async def read_text(self, path: str) -> FileContent:
        full = self.disk.path_of(path)
        session_id = self._session_for("read")
        if session_id is None:
            known = self.text_of(path)
            if known is not None:
                return FileContent(path, known, self._overlay[path].version, self.disk.generation)
            return await self.disk.read_text(path)
        if full.is_dir():
            raise ToolError(f"{path} is a directory, not a file")
        if self.text_of(path) is None and not full.exists():
            raise ToolError(f"File not found: {path}")
        generation = self.disk.generation
        answer = await ask_client(
            "fs/read_text_file",
            lambda: self.link.conn.read_text_file(session_id=session_id, path=self._abs(path)),
            bound_s=self.bound_s,
        )
        known = self.text_of(path)
        if known is None:
            known = await anyio.to_thread.run_sync(_disk_text, full)
        version = self._remember(path, answer.content)
        if answer.content != known and self.on_text is not None:
            self.on_text(path)
        return FileContent(path, answer.content, version, generation)

    async def exists(self, path: str) -> bool:
        """On disk, or a file Rein wrote into the editor that it has not saved."""
        return self.text_of(path) is not None or await self.disk.exists(path)

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        """Through ``fs/write_text_file`` (ACP writes whole texts). With
        ``expected_text``, the client's text is read again first and the
        write refused (FileChangedError) when it is another; one write per
        path at a time."""
        full = self.disk.path_of(path)
        session_id = self._session_for("write")
        if session_id is None:
            await self._refuse_under_unsaved_buffer(path, full)
            self._overlay.pop(path, None)
            return await self.disk.write_text(
                path, text, expected_version=expected_version, expected_text=expected_text
            )
        if full.is_dir():
            raise ToolError(f"{path} is a directory; it cannot be written as a file")
        async with self._lock(path):
            if expected_text is not None:
                current = await self._client_text(path, session_id)
                if current != expected_text:
                    raise FileChangedError(f"{path} changed since it was read; it was not written.")
            await self._send(path, text, session_id)
            # Recorded as the disk records its own writes: a new generation.
            return self.disk.note_external_change((path,), origin="agent")

    def _lock(self, path: str) -> anyio.Lock:
        lock = self._locks.get(path)
        if lock is None:
            lock = self._locks[path] = anyio.Lock()
        return lock

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        """Every file written to the client in turn (deletes on the disk),
        after every ``expected_text`` was checked against the client's
        text; one generation (the module's docstring says how this differs
        from the editor's one edit)."""
        paths = check_unique(changes)
        session_id = self._session_for("write")
        if session_id is None:
            for path in paths:
                self._overlay.pop(path, None)
            return await self.disk.apply_changes(changes, label=label)
        for path in paths:
            if self.disk.path_of(path).is_dir():
                raise ToolError(f"{path} is a directory; nothing was written.")

        async def read(path: str) -> str | None:
            return await self._client_text(path, session_id)

        async def write(path: str, text: str | None, expected: str | None) -> None:
            if expected is not None and await self._client_text(path, session_id) != expected:
                raise FileChangedError(f"{path} changed since it was read; it was not written.")
            if text is None:
                full = Path(self.disk.root) / path
                self.disk.path_of(path)  # inside the workspace
                try:
                    await anyio.to_thread.run_sync(
                        delete_checked, full, path, None, self.disk.lock_bound_s
                    )
                except OSError as exc:
                    raise ToolError(f"Cannot delete {path}: {exc.strerror or exc}") from exc
                self._overlay.pop(path, None)
                return
            await self._send(path, text, session_id)

        async with contextlib.AsyncExitStack() as locks:
            for path in sorted(paths):
                await locks.enter_async_context(self._lock(path))
            await apply_in_turn(changes, read, write)
        # Recorded as the disk records its own writes: one new generation.
        return self.disk.note_external_change(paths, origin="agent")

    async def _send(self, path: str, text: str, session_id: str) -> None:
        """``text`` written into the client's buffer of ``path`` (bounded),
        then remembered as what the client holds."""
        await ask_client(
            "fs/write_text_file",
            lambda: self.link.conn.write_text_file(
                session_id=session_id, path=self._abs(path), content=text
            ),
            bound_s=self.bound_s,
        )
        self._remember(path, text)

    async def _client_text(self, path: str, session_id: str) -> str | None:
        """The client's text of ``path`` now (None when it has none)."""
        if self.text_of(path) is None and not self.disk.path_of(path).exists():
            return None
        answer = await ask_client(
            "fs/read_text_file",
            lambda: self.link.conn.read_text_file(session_id=session_id, path=self._abs(path)),
            bound_s=self.bound_s,
        )
        return str(answer.content)

    async def delete(self, path: str) -> Mutation:
        mutation = await self.disk.delete(path)
        self._overlay.pop(path, None)
        return mutation

    async def rename(self, old: str, new: str) -> Mutation:
        mutation = await self.disk.rename(old, new)
        seen = self._overlay.pop(old, None)
        if seen is not None:
            self._versions[new] = version = self._versions.get(new, 0) + 1
            self._overlay[new] = _Seen(seen.text, _stamp(self.disk.path_of(new)), version)
        return mutation

    # ------------------------------------------------------------ the overlay

    def text_of(self, path: str) -> str | None:
        """The text of ``path`` as the client last showed or was given it,
        while the disk holds nothing newer; None when Rein knows no text of
        it beyond the disk's."""
        seen = self._overlay.get(path)
        if seen is None:
            return None
        full = Path(self.disk.root) / path
        stamp = _stamp(full)
        if stamp == seen.stamp:
            return seen.text
        if _disk_text(full) == seen.text:
            seen.stamp = stamp  # the editor saved what Rein knows
            return seen.text
        log.debug("%s changed on disk since the client showed it; the disk is newer", path)
        del self._overlay[path]
        return None

    async def _refuse_under_unsaved_buffer(self, path: str, full: Path) -> None:
        """A client that shows its buffers (``fs.readTextFile``) but takes
        no writes: a disk write under a buffer the person changed and did
        not save would leave the two apart (and an edit made on the
        buffer's text never matched the disk: it was retried until it gave
        up), so it is refused, the reason said."""
        known = self.text_of(path)
        if known is None or self._session_for("read") is None:
            return
        if await anyio.to_thread.run_sync(_disk_text, full) == known:
            return
        raise ToolError(
            f"{path} has unsaved changes in the editor, and the editor does not let Rein "
            "write its buffers (it offers fs.readTextFile but not fs.writeTextFile); nothing "
            "was written. Ask the person to save the file, then redo the change."
        )

    # ------------------------------------------------------------ plumbing

    def _session_for(self, capability: Literal["read", "write"]) -> str | None:
        """The session to ask the client in, or None when the disk answers
        (no session, or the client does not offer ``fs.readTextFile`` /
        ``fs.writeTextFile``)."""
        capabilities = self.link.capabilities
        fs = capabilities.fs if capabilities is not None else None
        if fs is None:
            return None
        offered = fs.read_text_file if capability == "read" else fs.write_text_file
        if not offered:
            return None
        return self.session_id_of()

    def _abs(self, path: str) -> str:
        """The absolute path the client knows the file by (not resolved:
        the person's view of the folder)."""
        return str(Path(self.disk.root) / path)

    def _remember(self, path: str, text: str) -> int:
        """Keep ``text`` as the client's text of ``path``; returns its
        version: the last one's when the text is the same, else one more
        (ACP has no document versions; a version marks the text as the
        editor's)."""
        seen = self._overlay.get(path)
        version = self._versions.get(path, 0)
        if seen is None or seen.text != text:
            version = self._versions[path] = version + 1
        self._overlay[path] = _Seen(text, _stamp(Path(self.disk.root) / path), version)
        return version
