"""The Workspace port on the file system, for headless runs.

Writes are atomic (a temporary file in the same directory, then
``os.replace``), keep the file's mode and its byte order mark, and create
missing parent directories. A write that carries the text it was computed
from (``expected_text``) is a compare-and-swap: under an advisory lock
(``flock``) on the file's directory, which every Rein process and thread
takes around its check and replace, the file is read again and replaced
only when it still holds that text; otherwise
:class:`~rein.harness.errors.FileChangedError` and nothing is written.
Reads go through the one workspace reader (:mod:`rein.tools.disk_read`):
regular files only, never blocking on a FIFO, capped in size, in a worker
thread.
Every applied change is a new mutation generation; changes seen on disk by
someone else come in through :meth:`DiskWorkspace.note_external_change`.
A multi-file change (:meth:`DiskWorkspace.apply_changes`) is one
generation: its files are checked, then written one by one (each a
compare-and-swap), and put back when a later one fails
(:func:`~rein.harness.file_updates.apply_in_turn`); another process can
see the files half-written for that moment.

Paths are workspace-relative POSIX strings (the tools' sandbox resolves
them); as a second line of defence a path that leaves the root is refused.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import anyio

from rein.harness.errors import FileChangedError, SandboxError, ToolError
from rein.harness.file_updates import apply_in_turn, check_unique
from rein.harness.ports import FileContent, FileUpdate, Mutation, MutationOrigin
from rein.tools.disk_read import BOM, encode_text, read_regular, read_text, read_text_async

__all__ = ["DiskWorkspace", "delete_checked", "directory_lock"]

log = logging.getLogger(__name__)

#: How long a write waits for another process's check-and-replace in the
#: same directory (each takes milliseconds; a holder past this is stuck).
LOCK_BOUND_S = 10.0

MutationListener = Callable[[Mutation], None]


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once: os.umask() sets the process-wide mask, racing other threads.
_UMASK = _read_umask()


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".rein-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def directory_lock(directory: Path, bound_s: float = LOCK_BOUND_S) -> Iterator[None]:
    """Hold the advisory lock of ``directory`` (``flock`` on it: every
    open file description is its own holder, so threads of one process
    exclude each other as processes do). Waits at most ``bound_s``; a file
    system without ``flock`` is written without it (logged)."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + bound_s
        pause = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ToolError(
                        f"Another process has held the write lock of {directory} for "
                        f"{bound_s:.0f} s; the file was not written. Try again."
                    ) from None
                time.sleep(pause)  # a poll with a bound, in a worker thread
                pause = min(pause * 2, 0.05)
            except OSError as exc:
                if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                    raise
                log.warning("no advisory lock on %s (%s): written without it", directory, exc)
                break
        yield
    finally:
        os.close(fd)  # releases the lock


def _head(path: Path, count: int) -> bytes:
    """The first ``count`` bytes of the regular file ``path`` (b"" when it
    is missing or not a regular file)."""
    try:
        return read_regular(path, path.name, limit=count - 1, sniff=count).data[:count]
    except (OSError, ToolError):
        return b""


def _replace_checked(
    path: Path, rel: str, text: str, expected_text: str | None, bound_s: float
) -> None:
    """Replace ``path`` with ``text`` under the directory's lock; when
    ``expected_text`` is given, only if the file still holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with directory_lock(path.parent, bound_s):
        if expected_text is not None:
            try:
                current = read_text(path, rel)
            except ToolError as exc:
                raise FileChangedError(
                    f"{rel} changed since it was read ({exc}); it was not written."
                ) from None
            if current.text != expected_text:
                raise FileChangedError(
                    f"{rel} changed since it was read (by another edit, session or "
                    "process); it was not written."
                )
            bom = current.bom
        else:
            bom = _head(path, 3) == BOM.encode("utf-8")
        _atomic_write(path, encode_text(text, bom=bom))


def delete_checked(path: Path, rel: str, expected_text: str | None, bound_s: float) -> None:
    """Delete ``path`` under the directory's lock; when ``expected_text`` is
    given, only if the file still holds it."""
    with directory_lock(path.parent, bound_s):
        if expected_text is not None:
            try:
                current = read_text(path, rel).text
            except ToolError as exc:
                raise FileChangedError(f"{rel} changed since it was read ({exc}).") from None
            if current != expected_text:
                raise FileChangedError(f"{rel} changed since it was read; it was not deleted.")
        path.unlink()


class DiskWorkspace:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root).resolve()
        if not path.is_dir():
            raise ToolError(f"Workspace root {path} is not a directory")
        self._root = path
        self._generation = 0
        self.mutations: list[Mutation] = []
        self._listeners: list[MutationListener] = []
        self.lock_bound_s = LOCK_BOUND_S

    @property
    def root(self) -> str:
        return str(self._root)

    @property
    def generation(self) -> int:
        return self._generation

    def subscribe(self, listener: MutationListener) -> Callable[[], None]:
        """Call ``listener`` with every new mutation; returns unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def path_of(self, rel: str) -> Path:
        """The file ``rel`` names (through symlinks); raises SandboxError
        for a path that leaves the workspace."""
        return self._path(rel)

    def _path(self, rel: str, *, follow: bool = True) -> Path:
        """The file for ``rel``: its symlink target when ``follow`` (reads and
        writes go through links), else the link itself (delete, rename)."""
        if os.path.isabs(rel) or ".." in Path(rel).parts:
            raise SandboxError(f"{rel!r} is not a path inside the workspace")
        full = self._root / rel
        if follow:
            real = Path(os.path.realpath(full))
        else:
            real = Path(os.path.realpath(full.parent)) / full.name
        if real != self._root and self._root not in real.parents:
            raise SandboxError(f"{rel!r} leads outside the workspace (to {real})")
        return real

    def _mutate(self, paths: tuple[str, ...], origin: MutationOrigin = "agent") -> Mutation:
        self._generation += 1
        mutation = Mutation(self._generation, paths, origin)
        self.mutations.append(mutation)
        for listener in list(self._listeners):
            listener(mutation)
        return mutation

    def note_external_change(
        self, paths: Iterable[str], origin: MutationOrigin = "external"
    ) -> Mutation:
        """Record a change made by someone else (seen by a watcher)."""
        return self._mutate(tuple(paths), origin)

    async def read_text(self, path: str) -> FileContent:
        full = self._path(path)
        generation = self._generation
        disk = await read_text_async(full, path)
        return FileContent(path, disk.text, None, generation)

    async def exists(self, path: str) -> bool:
        try:
            full = self._path(path)
        except SandboxError:
            return False
        return full.exists()

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        """Files on disk have no editor version: ``expected_version`` is not
        checked here; ``expected_text`` is (a compare-and-swap)."""
        full = self._path(path)
        if full.is_dir():
            raise ToolError(f"{path} is a directory; it cannot be written as a file")
        try:
            await anyio.to_thread.run_sync(
                _replace_checked, full, path, text, expected_text, self.lock_bound_s
            )
        except OSError as exc:
            raise ToolError(f"Cannot write {path}: {exc.strerror or exc}") from exc
        return self._mutate((path,))

    async def delete(self, path: str) -> Mutation:
        full = self._path(path, follow=False)
        try:
            await anyio.to_thread.run_sync(full.unlink)
        except FileNotFoundError:
            raise ToolError(f"File not found: {path}") from None
        except (IsADirectoryError, PermissionError) as exc:
            if full.is_dir():
                raise ToolError(f"{path} is a directory; only files are deleted") from None
            raise ToolError(f"Cannot delete {path}: {exc.strerror or exc}") from exc
        except OSError as exc:
            raise ToolError(f"Cannot delete {path}: {exc.strerror or exc}") from exc
        return self._mutate((path,))

    async def rename(self, old: str, new: str) -> Mutation:
        source, target = self._path(old, follow=False), self._path(new, follow=False)
        if not source.exists() and not source.is_symlink():
            raise ToolError(f"File not found: {old}")
        if target.exists():
            raise ToolError(f"Cannot rename {old} to {new}: {new} already exists")

        def move() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, target)

        try:
            await anyio.to_thread.run_sync(move)
        except OSError as exc:
            raise ToolError(f"Cannot rename {old} to {new}: {exc.strerror or exc}") from exc
        return self._mutate((old, new))

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        """One generation for every file of ``changes`` (the module's
        docstring says how they are written and put back)."""
        paths = check_unique(changes)
        for change in changes:
            if self._path(change.path).is_dir():
                raise ToolError(f"{change.path} is a directory; nothing was written.")

        async def read(path: str) -> str | None:
            full = self._path(path)
            if not full.exists():
                return None
            return (await read_text_async(full, path)).text

        async def write(path: str, text: str | None, expected: str | None) -> None:
            bound = self.lock_bound_s
            try:
                if text is None:
                    full = self._path(path, follow=False)
                    await anyio.to_thread.run_sync(delete_checked, full, path, expected, bound)
                else:
                    full = self._path(path)
                    await anyio.to_thread.run_sync(
                        _replace_checked, full, path, text, expected, bound
                    )
            except OSError as exc:
                raise ToolError(f"Cannot write {path}: {exc.strerror or exc}") from exc

        await apply_in_turn(changes, read, write)
        return self._mutate(paths)
