"""The language server's preview: one per server (one workspace), shared by
its sessions, stopped on shutdown and exit.

The coordinator is made on first use with the current ``gates.preview`` and
follows configuration changes (a new command applies from the next start).
It listens to the server's mutations from its creation on, so a program that
reloads itself is observed from the write that made it reload.
Its events go to the stream of the session whose run caused them (through
the gates); the others are sent with ``sessionId: null``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal, Protocol

from rein.harness.events import Event
from rein.harness.gates import Gate
from rein.preview.coordinator import PreviewCoordinator, PreviewOutcome
from rein.preview.gates import preview_gates
from rein.process.preview import SubprocessPreviewFactory

if TYPE_CHECKING:
    from pathlib import Path

    from rein.config import ReinConfig
    from rein.harness.generations import MutationLog

__all__ = ["PreviewServer", "ServerPreview"]

log = logging.getLogger(__name__)

PreviewAction = Literal["start", "stop", "restart", "status"]


class PreviewServer(Protocol):
    """What :class:`ServerPreview` uses of the server."""

    @property
    def config(self) -> ReinConfig: ...
    @property
    def root(self) -> Path: ...
    @property
    def mutations(self) -> MutationLog: ...
    def send_event(self, payload: dict[str, Any]) -> None: ...


class ServerPreview:
    def __init__(self, server: PreviewServer) -> None:
        self.server = server
        self._coordinator: PreviewCoordinator | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    @property
    def coordinator(self) -> PreviewCoordinator:
        config = self.server.config.gates.preview
        if self._coordinator is None:
            self._coordinator = PreviewCoordinator(
                SubprocessPreviewFactory(str(self.server.root)),
                config,
                emit=self._emit,
                spawn=self._spawn,
            )
            self.server.mutations.subscribe(self._coordinator.on_mutation)
        elif self._coordinator.config != config:
            self._coordinator.configure(config)
        return self._coordinator

    def gates(self) -> list[Gate]:
        """The preview gates for a new session's pipeline (none when off)."""
        if not self.server.config.gates.preview.enabled:
            return []
        return preview_gates(self.coordinator)

    def without_outputs(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """``paths`` less the preview's own output (the disk watcher's filter;
        all of them while no preview was made)."""
        if self._coordinator is None:
            return paths
        return self.coordinator.without_outputs(paths)

    def _spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        task = asyncio.ensure_future(fn())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _emit(self, event: Event) -> None:
        self.server.send_event(
            {"sessionId": None, "runId": None, "seq": 0, "event": event.model_dump(mode="json")}
        )

    async def handle(self, action: PreviewAction) -> dict[str, Any]:
        """``rein/preview`` and the ``rein.preview.*`` commands."""
        preview = self.coordinator
        generation = self.server.mutations.latest
        outcome: PreviewOutcome | None = None
        if action == "start":
            outcome = await preview.start(generation)
        elif action == "restart":
            outcome = await preview.restart(generation)
        elif action == "stop":
            outcome = await preview.stop()
        return self.payload(outcome)

    def payload(self, outcome: PreviewOutcome | None = None) -> dict[str, Any]:
        status = self.coordinator.status()
        result: dict[str, Any] = {
            "state": status.state,
            "generation": status.generation,
            "command": status.command,
            "lines": list(status.lines),
        }
        if status.pid is not None:
            result["pid"] = status.pid
        if outcome is not None and not outcome.ok:
            result["error"] = outcome.message
        return result

    async def shutdown(self) -> None:
        if self._coordinator is not None:
            await self._coordinator.shutdown()

    def kill_now(self) -> None:
        if self._coordinator is not None:
            self._coordinator.kill_now()
