"""What a file held just before a tool changed it, as the client showed it.

An edit's diff (``tool_call_update`` content ``{type: diff, oldText,
newText}``) must start from the text the person saw: with ``fs/*`` that is
the editor's buffer, which Rein knows only once a tool read it, and the
edit tool reads it after its ``tool_call_start``. :class:`WitnessedWorkspace`
sits in front of the client's view and, before every write, delete or
rename (each file of a multi-file change), passes on the text the view kept for that file (its ``text_of``),
so the diff's old text is the one the change was made to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rein.harness.ports import FileContent, FileUpdate, MultiFileWorkspace, Mutation

__all__ = ["TextKeepingWorkspace", "WitnessedWorkspace"]


class TextKeepingWorkspace(MultiFileWorkspace, Protocol):
    def text_of(self, path: str) -> str | None: ...


class WitnessedWorkspace:
    """``inner``, telling ``before_change(path, text)`` the text it kept for
    a file before each change (nothing when it kept none)."""

    def __init__(
        self, inner: TextKeepingWorkspace, before_change: Callable[[str, str], None]
    ) -> None:
        self.inner = inner
        self._before_change = before_change

    @property
    def root(self) -> str:
        return self.inner.root

    @property
    def generation(self) -> int:
        return self.inner.generation

    def text_of(self, path: str) -> str | None:
        return self.inner.text_of(path)

    def _witness(self, path: str) -> None:
        text = self.inner.text_of(path)
        if text is not None:
            self._before_change(path, text)

    async def read_text(self, path: str) -> FileContent:
        return await self.inner.read_text(path)

    async def exists(self, path: str) -> bool:
        return await self.inner.exists(path)

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        self._witness(path)
        return await self.inner.write_text(
            path, text, expected_version=expected_version, expected_text=expected_text
        )

    async def delete(self, path: str) -> Mutation:
        self._witness(path)
        return await self.inner.delete(path)

    async def rename(self, old: str, new: str) -> Mutation:
        self._witness(old)
        return await self.inner.rename(old, new)

    async def apply_changes(self, changes: Sequence[FileUpdate], *, label: str = "") -> Mutation:
        for change in changes:
            self._witness(change.path)
        return await self.inner.apply_changes(changes, label=label)
