"""A folder's preview: one per workspace folder, shared by its sessions,
whichever host serves the folder.

The coordinator is made on first use with the current ``gates.preview`` and
follows configuration changes (a new command applies from the next start).
It listens to the folder's mutations from its creation on, so a program that
reloads itself is observed from the write that made it reload. Its events
outside a run go to ``emit`` (the language server sends them with
``sessionId: null``; ``rein run`` to its listeners); its background work is
started with ``spawn`` (by default an asyncio task, kept until it ends).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Literal

from rein.harness.config import PreviewGateConfig
from rein.harness.events import Event
from rein.harness.gating.gates import Gate
from rein.harness.generations import MutationLog
from rein.harness.ports import ProcessSandbox
from rein.preview.coordinator import PreviewCoordinator, PreviewOutcome
from rein.preview.gates import preview_gates
from rein.preview.values import Watched
from rein.preview.watch import start_watched
from rein.process.preview import SubprocessPreviewFactory

__all__ = ["FolderPreview", "PreviewAction"]

log = logging.getLogger(__name__)

PreviewAction = Literal["start", "stop", "restart", "status"]

Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]


class FolderPreview:
    """The preview of the folder at ``root``: ``config`` gives the current
    ``gates.preview`` settings, ``mutations`` is the folder's log."""

    def __init__(
        self,
        root: Path,
        config: Callable[[], PreviewGateConfig],
        mutations: MutationLog,
        emit: Callable[[Event], None],
        spawn: Spawn | None = None,
        sandbox: ProcessSandbox | None = None,
    ) -> None:
        self._root = root
        self._sandbox = sandbox
        self._config = config
        self._mutations = mutations
        self._emit = emit
        self._spawn = spawn or self._task
        self._coordinator: PreviewCoordinator | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    @property
    def coordinator(self) -> PreviewCoordinator:
        config = self._config()
        if self._coordinator is None:
            self._coordinator = PreviewCoordinator(
                SubprocessPreviewFactory(str(self._root), sandbox=self._sandbox),
                config,
                emit=self._emit,
                spawn=self._spawn,
            )
            self._mutations.subscribe(self._coordinator.on_mutation)
        elif self._coordinator.config != config:
            self._coordinator.configure(config)
        return self._coordinator

    def gates(self) -> list[Gate]:
        """The preview gates for a new session's pipeline (none when off)."""
        if not self._config().enabled:
            return []
        return preview_gates(self.coordinator)

    def without_outputs(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """``paths`` less the preview's own output (the disk watcher's filter;
        all of them while no preview was made)."""
        if self._coordinator is None:
            return paths
        return self.coordinator.without_outputs(paths)

    def _task(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        task = asyncio.ensure_future(fn())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def handle(self, action: PreviewAction) -> dict[str, Any]:
        """Start, stop or restart the preview (``rein/preview`` and the
        ``rein.preview.*`` commands) and say its status. A start or restart
        is watched as the preview start gate watches it (up, then the
        observation window) and the answer says what was seen."""
        preview = self.coordinator
        generation = self._mutations.latest
        if action in ("start", "restart"):
            watched = await start_watched(preview, generation, restart=action == "restart")
            return self.payload(watched.outcome, watched)
        outcome: PreviewOutcome | None = None
        if action == "stop":
            outcome = await preview.stop()
        return self.payload(outcome)

    def payload(
        self, outcome: PreviewOutcome | None = None, watched: Watched | None = None
    ) -> dict[str, Any]:
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
        if watched is not None and watched.outcome.action in ("started", "failed"):
            result.update(_watched_fields(watched))
        return result

    async def shutdown(self) -> None:
        if self._coordinator is not None:
            await self._coordinator.shutdown()

    def kill_now(self) -> None:
        if self._coordinator is not None:
            self._coordinator.kill_now()


def _watched_fields(watched: Watched) -> dict[str, Any]:
    """What a watched start saw: ``up`` and by which rule (``readyBy``), the
    runtime error lines it printed, its exit code when it exited with an
    error, and (``error``) why it is not up."""
    observation = watched.observation
    fields: dict[str, Any] = {
        "up": watched.up,
        "readyBy": watched.outcome.ready_by,
        "runtimeErrors": list(observation.matches) if observation is not None else [],
    }
    if observation is not None and observation.exit_code is not None:
        fields["exitCode"] = observation.exit_code
    if watched.message:
        fields["error"] = watched.message
    return fields
