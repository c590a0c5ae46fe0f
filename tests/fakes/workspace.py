"""The Workspace port: an in-memory workspace."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from rein.harness.errors import FileChangedError, ToolError
from rein.harness.ports import (
    FileContent,
    FileUpdate,
    Mutation,
    MutationOrigin,
)


class FakeWorkspace:
    """An in-memory Workspace: files in a dict, one generation per change.
    ``buffers`` holds "open editor documents" that win over ``files``."""

    def __init__(self, files: dict[str, str] | None = None, root: str = "/fake") -> None:
        self.files: dict[str, str] = dict(files or {})
        self.buffers: dict[str, tuple[str, int]] = {}
        self._root = root
        self._generation = 0
        self.mutations: list[Mutation] = []
        #: Set to a message to make the next write fail like a refused edit.
        self.refuse_next: str | None = None

    @property
    def root(self) -> str:
        return self._root

    @property
    def generation(self) -> int:
        return self._generation

    def _mutate(self, paths: tuple[str, ...], origin: MutationOrigin = "agent") -> Mutation:
        self._generation += 1
        mutation = Mutation(self._generation, paths, origin)
        self.mutations.append(mutation)
        return mutation

    def person_edits(self, path: str, text: str) -> Mutation:
        """Simulate the person typing in an open buffer."""
        version = self.buffers.get(path, ("", 0))[1] + 1
        self.buffers[path] = (text, version)
        return self._mutate((path,), "person")

    async def read_text(self, path: str) -> FileContent:
        if path in self.buffers:
            text, version = self.buffers[path]
            return FileContent(path, text, version, self._generation)
        if path not in self.files:
            raise ToolError(f"File not found: {path}")
        return FileContent(path, self.files[path], None, self._generation)

    async def exists(self, path: str) -> bool:
        return path in self.files or path in self.buffers

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        if self.refuse_next is not None:
            message, self.refuse_next = self.refuse_next, None
            raise ToolError(message)
        if expected_text is not None and expected_text != (
            self.buffers[path][0] if path in self.buffers else self.files.get(path)
        ):
            raise FileChangedError(f"{path} changed since it was read; it was not written")
        if path in self.buffers:
            current = self.buffers[path][1]
            if expected_version is not None and expected_version != current:
                raise ToolError(f"{path} changed in the editor since it was read; read it again")
            self.buffers[path] = (text, current + 1)
        self.files[path] = text
        return self._mutate((path,))

    async def delete(self, path: str) -> Mutation:
        if path not in self.files:
            raise ToolError(f"File not found: {path}")
        del self.files[path]
        self.buffers.pop(path, None)
        return self._mutate((path,))

    async def rename(self, old: str, new: str) -> Mutation:
        if old not in self.files:
            raise ToolError(f"File not found: {old}")
        self.files[new] = self.files.pop(old)
        return self._mutate((old, new))

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        """All or nothing, one generation (as the editor's one applyEdit)."""
        if self.refuse_next is not None:
            message, self.refuse_next = self.refuse_next, None
            raise ToolError(message)
        for change in changes:
            now = self.buffers[change.path][0] if change.path in self.buffers else None
            now = now if now is not None else self.files.get(change.path)
            if change.expected_text is not None and change.expected_text != now:
                raise FileChangedError(f"{change.path} changed since it was read")
            if change.text is None and now is None:
                raise ToolError(f"File not found: {change.path}")
        for change in changes:
            if change.text is None:
                self.files.pop(change.path, None)
                self.buffers.pop(change.path, None)
                continue
            if change.path in self.buffers:
                self.buffers[change.path] = (change.text, self.buffers[change.path][1] + 1)
            self.files[change.path] = change.text
        return self._mutate(tuple(c.path for c in changes))

    def glob(self, pattern: str) -> list[str]:
        return sorted(p for p in self.files if fnmatch.fnmatch(p, pattern))
