"""Notice changes on disk that Rein did not make (watchfiles) and record
them as mutations with origin "external"."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import anyio
from watchfiles import DefaultFilter, awatch

from rein.harness.ports import Mutation

__all__ = ["DiskWatcher"]

log = logging.getLogger(__name__)


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
    from the file system is recognised and ignored.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        on_external: Callable[[tuple[str, ...]], None],
        *,
        debounce_ms: int = 50,
    ) -> None:
        self.root = Path(root).resolve()
        self.on_external = on_external
        self.debounce_ms = debounce_ms
        self._own: dict[str, tuple[int, int] | None] = {}
        self.ready = anyio.Event()
        self._stop = anyio.Event()

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

    async def run(self) -> None:
        watch_filter = DefaultFilter(ignore_dirs=(*DefaultFilter.ignore_dirs, ".rein"))
        self.ready.set()
        async for changes in awatch(
            self.root,
            watch_filter=watch_filter,
            debounce=self.debounce_ms,
            step=20,
            stop_event=self._stop,
            recursive=True,
        ):
            external: list[str] = []
            for _change, raw in changes:
                rel = self._relative(raw)
                if rel is None:
                    continue
                if ".rein-tmp" in rel:
                    continue
                if rel in self._own and self._own[rel] == _stamp(self.root / rel):
                    continue  # the echo of our own write
                self._own.pop(rel, None)
                external.append(rel)
            if external:
                log.info("external change: %s", ", ".join(sorted(external)))
                self.on_external(tuple(sorted(set(external))))
