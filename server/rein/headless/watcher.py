"""Notice changes on disk that Rein did not make (watchfiles) and record
them as mutations with origin "external".

:meth:`DiskWatcher.settle` returns once the watcher has seen (and reported)
everything written before it was called: it writes a probe file into a
private folder the watcher also watches, and waits for its event. The OS
delivers a watcher's events in order, so every earlier write was in the same
batch as the probe or an earlier one. ``run_command`` awaits it after its
process exits, so the command's changes count for the run that started it.

What the workspace filter skips (:mod:`rein.tools.ignore`: virtual
environments, build output, caches, what ``.gitignore`` ignores) is not
reported: an install into ``venv/`` or a build is not a change of the project.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import anyio
from watchfiles import DefaultFilter, awatch

from rein.harness.ports import Mutation
from rein.tools.ignore import SKIPPED_DIR_NAMES, WorkspaceFilter

__all__ = ["DiskWatcher"]

log = logging.getLogger(__name__)

#: How long ``settle`` waits for its probe at most (then it gives up, logged).
SETTLE_LIMIT_S = 10.0
#: How long start-up waits for the OS watch to deliver its first probe.
READY_LIMIT_S = 10.0


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class DiskWatcher:
    """Watches ``root``; a change whose file does not look like Rein's own
    last write is reported through ``on_external(paths)``.

    Call :meth:`on_own_mutation` for every change Rein applies, so its echo
    from the file system is recognised and ignored. ``ready`` is set once the
    OS watch delivers events (its first probe was seen).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        on_external: Callable[[tuple[str, ...]], object],
        *,
        debounce_ms: int = 50,
    ) -> None:
        self.root = Path(root).resolve()
        self.on_external = on_external
        self.debounce_ms = debounce_ms
        self._own: dict[str, tuple[int, int] | None] = {}
        self.ready = anyio.Event()
        self._stop = anyio.Event()
        #: The private folder probe files go to (while running).
        self._probe_dir: Path | None = None
        self._probes: dict[str, anyio.Event] = {}
        self._probe_names = (f"probe-{n}" for n in itertools.count(1))

    def on_own_mutation(self, mutation: Mutation) -> None:
        if mutation.origin != "agent":
            return
        for rel in mutation.paths:
            self._own[rel] = _stamp(self.root / rel)

    def _relative(self, raw: str) -> str | None:
        try:
            return Path(os.path.realpath(raw)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def stop(self) -> None:
        self._stop.set()

    async def settle(self) -> None:
        """Return once every change written before this call has been seen and
        reported (bounded by SETTLE_LIMIT_S; nothing to wait for when the
        watcher is not running)."""
        if self._probe_dir is None:
            return
        if not self.ready.is_set():
            # Started moments ago: its first probe decides when it sees.
            with anyio.move_on_after(READY_LIMIT_S):
                await self.ready.wait()
        if not await self._probe(SETTLE_LIMIT_S):
            log.warning("the disk watcher did not see its probe within %g s", SETTLE_LIMIT_S)

    async def _probe(self, limit_s: float) -> bool:
        probe_dir = self._probe_dir
        if probe_dir is None:
            return False
        name = next(self._probe_names)
        seen = anyio.Event()
        self._probes[name] = seen
        path = probe_dir / name
        try:
            path.write_bytes(b"")
            with anyio.move_on_after(limit_s):
                await seen.wait()
            return seen.is_set()
        finally:
            self._probes.pop(name, None)
            path.unlink(missing_ok=True)

    async def _announce_ready(self) -> None:
        """Probe until the OS watch delivers (it starts shortly after the
        watcher), then set ``ready``; after READY_LIMIT_S set it anyway."""
        wait_s = 0.05
        with anyio.move_on_after(READY_LIMIT_S):
            while not await self._probe(wait_s):
                wait_s = min(wait_s * 2, 1.0)
        if not self.ready.is_set():
            log.warning("the disk watcher saw no probe within %g s", READY_LIMIT_S)
        self.ready.set()

    async def run(self) -> None:
        self._probe_dir = Path(tempfile.mkdtemp(prefix="rein-watch-"))
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._announce_ready)
                await self._watch(self._probe_dir)
                tg.cancel_scope.cancel()
        finally:
            shutil.rmtree(self._probe_dir, ignore_errors=True)
            self._probe_dir = None

    async def _watch(self, probe_dir: Path) -> None:
        watch_filter = DefaultFilter(
            ignore_dirs=(*DefaultFilter.ignore_dirs, *sorted(SKIPPED_DIR_NAMES), ".rein")
        )
        async for changes in awatch(
            probe_dir,
            self.root,
            watch_filter=watch_filter,
            debounce=self.debounce_ms,
            step=20,
            stop_event=self._stop,
            recursive=True,
        ):
            external: list[str] = []
            probes: list[str] = []
            skip = WorkspaceFilter(self.root)
            for _change, raw in changes:
                if Path(raw).parent == probe_dir:
                    probes.append(Path(raw).name)
                    continue
                rel = self._relative(raw)
                if rel is None:
                    continue
                if ".rein-tmp" in rel or skip.skipped(rel):
                    continue
                if rel in self._own and self._own[rel] == _stamp(self.root / rel):
                    continue  # the echo of our own write
                self._own.pop(rel, None)
                external.append(rel)
            if external:
                log.info("external change: %s", ", ".join(sorted(external)))
                self.on_external(tuple(sorted(set(external))))
            # After the report: whoever waits for a probe sees what came before it.
            for name in probes:
                seen = self._probes.get(name)
                if seen is not None:
                    self.ready.set()
                    seen.set()
