"""The harness's Persistence port over the SQLite store: one agent memory
(``agent_id:name``) of one session.

With a ``report`` callback a checkpoint that cannot be stored does not
fail the run: the messages stay queued in the store (committed by the next
checkpoint that can), ``report`` is told the StoreError, and told None at
the first checkpoint that works again."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rein.harness.errors import StoreError
from rein.harness.messages import Message
from rein.store.memory_keys import MAIN_MEMORY
from rein.store.sqlite import SqliteStore

__all__ = ["MAIN_MEMORY", "StorePersistence"]


class StorePersistence:
    def __init__(
        self,
        store: SqliteStore,
        session_id: str,
        memory_key: str = MAIN_MEMORY,
        *,
        title: str = "",
        mode: str = "agent",
        origin: str = "chat",
        created: bool = False,
        workspace: str = "",
        report: Callable[[StoreError | None], None] | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.memory_key = memory_key
        self._title = title
        self._mode = mode
        self._origin = origin
        self._created = created
        self._workspace = workspace
        self._replacements: list[tuple[int, Message]] = []
        self._report = report
        self._failing = False

    async def ensure_session(self) -> None:
        if not self._created:
            await self.store.create_session(
                self.session_id, self._title, self._mode, self._origin, self._workspace
            )
            self._created = True

    def append(self, message: Message) -> None:
        self.store.append_now(self.session_id, self.memory_key, message)

    def replace(self, index: int, message: Message) -> None:
        self._replacements.append((index, message))

    async def checkpoint(self) -> None:
        """Commit what is queued. A StoreError is raised, or with ``report``
        reported (the messages stay queued for the next checkpoint)."""
        try:
            await self.ensure_session()
            await self.store.flush()
            while self._replacements:
                index, message = self._replacements[0]
                await self.store.replace_message(self.session_id, self.memory_key, index, message)
                self._replacements.pop(0)
        except StoreError as exc:
            if self._report is None:
                raise
            self._failing = True
            self._report(exc)
            return
        if self._failing and self._report is not None:
            self._failing = False
            self._report(None)

    async def rewrite(self, messages: Sequence[Message]) -> None:
        await self.ensure_session()
        self._replacements.clear()
        await self.store.replace_all(self.session_id, self.memory_key, messages)
