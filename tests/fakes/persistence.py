"""The Persistence port: what an agent asked to keep, in memory."""

from __future__ import annotations


class MemoryPersistence:
    """A Persistence that records what an agent asked it to keep."""

    def __init__(self) -> None:
        from rein.harness.messages import Message

        self.committed: list[Message] = []
        self.queued: list[Message] = []
        self.replaced: list[tuple[int, Message]] = []
        self.rewrites = 0
        self.checkpoints = 0

    def append(self, message) -> None:  # type: ignore[no-untyped-def]
        self.queued.append(message)

    def replace(self, index: int, message) -> None:  # type: ignore[no-untyped-def]
        self.replaced.append((index, message))
        if index < len(self.committed):
            self.committed[index] = message

    async def checkpoint(self) -> None:
        self.checkpoints += 1
        self.committed.extend(self.queued)
        self.queued = []

    async def rewrite(self, messages) -> None:  # type: ignore[no-untyped-def]
        self.rewrites += 1
        self.committed = list(messages)
        self.queued = []
