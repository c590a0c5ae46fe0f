"""Checkpoint stores that fail or hang, and a journal that plays runs into one."""

from __future__ import annotations

import itertools

import anyio
import anyio.lowlevel

from rein.checkpoints.model import (
    CheckpointChange,
    CheckpointRun,
    FileChange,
    FileVersion,
    MemoryCheckpointStore,
)
from rein.checkpoints.restore import Restorer
from rein.harness.errors import StoreError
from tests.fakes.workspace import FakeWorkspace


class CheckpointJournal:
    """Plays runs on a FakeWorkspace and records them in a
    MemoryCheckpointStore as the capture does (one change per turn)."""

    SID = "ses_1"

    def __init__(self, files: dict[str, str]) -> None:
        self.ws = FakeWorkspace(files)
        self.store = MemoryCheckpointStore()
        self.clock = itertools.count(1000)
        self.ids = (f"restore-{i}" for i in itertools.count(1))

    def restorer(self, workspace: object | None = None) -> Restorer:
        return Restorer(
            self.store,
            workspace or self.ws,  # type: ignore[arg-type]
            clock=lambda: float(next(self.clock)),
            new_id=lambda: next(self.ids),
        )

    async def version(self, text: str | None) -> FileVersion:
        if text is None:
            return FileVersion.absent()
        await self.store.put_text(text)
        return FileVersion.of_text(text)

    async def run(self, run_id: str, turns: dict[int, dict[str, str | None]]) -> None:
        """``turns``: turn -> {path: new text or None (deleted)}."""
        await self.store.begin_run(
            CheckpointRun(self.SID, run_id, self.ws.root, "run", run_id, float(next(self.clock)))
        )
        for turn, edits in sorted(turns.items()):
            files = []
            for path, text in edits.items():
                before = self.ws.files.get(path)
                if text is None:
                    await self.ws.delete(path)
                else:
                    await self.ws.write_text(path, text)
                files.append(FileChange(path, await self.version(before), await self.version(text)))
            await self.store.record(
                CheckpointChange(
                    self.SID,
                    run_id,
                    turn,
                    self.ws.generation,
                    "tool",
                    tuple(files),
                    float(next(self.clock)),
                )
            )

    async def run_ids(self) -> list[str]:
        return [r.run_id for r in await self.store.runs(self.SID)]


class FailingCheckpointStore(MemoryCheckpointStore):
    """A CheckpointStore whose writes fail like a full or broken disk."""

    def __init__(self, message: str = "disk I/O error") -> None:
        super().__init__()
        self.message = message
        self.attempts = 0

    async def put_text(self, text: str) -> str:
        self.attempts += 1
        raise StoreError(self.message)

    async def begin_run(self, run: CheckpointRun) -> None:
        self.attempts += 1
        raise StoreError(self.message)


class HangingCheckpointStore(MemoryCheckpointStore):
    """A CheckpointStore whose writes never return (a disk that hangs):
    they wait on ``release``, which nobody sets unless a test does."""

    def __init__(self) -> None:
        super().__init__()
        self.release = anyio.Event()
        self.waiting = 0

    async def put_text(self, text: str) -> str:
        self.waiting += 1
        await self.release.wait()
        return await super().put_text(text)
