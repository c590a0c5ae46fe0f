"""The Workspace port on the file system, for headless runs.

Writes are atomic (a temporary file in the same directory, then
``os.replace``), keep the file's mode and create missing parent directories.
Every applied change is a new mutation generation; changes seen on disk by
someone else come in through :meth:`DiskWorkspace.note_external_change`.

Paths are workspace-relative POSIX strings (the tools' sandbox resolves
them); as a second line of defence a path that leaves the root is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio

from rein.harness.errors import SandboxError, ToolError
from rein.harness.ports import FileContent, Mutation, MutationOrigin

__all__ = ["DiskWorkspace"]

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


class DiskWorkspace:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root).resolve()
        if not path.is_dir():
            raise ToolError(f"Workspace root {path} is not a directory")
        self._root = path
        self._generation = 0
        self.mutations: list[Mutation] = []
        self._listeners: list[MutationListener] = []

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
        try:
            data = await anyio.to_thread.run_sync(full.read_bytes)
        except FileNotFoundError:
            raise ToolError(f"File not found: {path}") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory, not a file") from None
        except OSError as exc:
            raise ToolError(f"Cannot read {path}: {exc.strerror or exc}") from exc
        if b"\x00" in data:
            raise ToolError(f"{path} is a binary file; it cannot be read as text")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(
                f"{path} is not valid UTF-8 text (byte {exc.start}); it may be binary or use "
                "another encoding"
            ) from None
        return FileContent(path, text, None, generation)

    async def exists(self, path: str) -> bool:
        try:
            full = self._path(path)
        except SandboxError:
            return False
        return full.exists()

    async def write_text(
        self, path: str, text: str, *, expected_version: int | None = None
    ) -> Mutation:
        """Files on disk have no editor version: ``expected_version`` is not
        checked here."""
        full = self._path(path)
        if full.is_dir():
            raise ToolError(f"{path} is a directory; it cannot be written as a file")
        try:
            await anyio.to_thread.run_sync(_atomic_write, full, text.encode("utf-8"))
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
