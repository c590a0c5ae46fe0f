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

Symlinks are never followed (:mod:`rein.disk._watch_plan`): the tree is
watched as several OS watches, recursive ones over subtrees without a
symlinked or skipped folder and flat ones over the folders that hold one.
A folder created inside a flat-watched folder gets a watch of its own; once
that watch sees a probe, the folder is walked and what is already in it is
reported, so nothing written before the watch started is missed. ``settle``
waits until every running watch has seen its probe (and that walk is done).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream
from watchfiles import Change, DefaultFilter, awatch

from rein.disk._watch_plan import UNWATCHED_NAMES, WatchPlan, plan_watch
from rein.harness.errors import ToolError
from rein.harness.ports import Mutation
from rein.tools.disk_read import read_text_async
from rein.tools.ignore import WorkspaceFilter

__all__ = ["DiskWatcher"]

log = logging.getLogger(__name__)

#: How long ``settle`` waits for its probe at most (then it gives up, logged).
SETTLE_LIMIT_S = 10.0
#: How long start-up waits for the OS watch to deliver its first probe.
READY_LIMIT_S = 10.0
#: The longest pause between two touches of a probe nobody has seen yet.
_PROBE_RETOUCH_S = 1.0
#: At most this many OS watches (each holds a worker thread): past it, a
#: new plan of the whole tree takes over from all of them.
MAX_WATCHES = 8

_Batch = tuple[int, set[tuple[Change, str]]]


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells Rein's own write from a later change: its time, size and
    mode (a ``chmod`` changes only the mode)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_mode)


@dataclass(eq=False)
class _Watch:
    """One OS watch: ``paths`` (and the probe folder), recursive or flat."""

    paths: tuple[Path, ...]
    recursive: bool
    stop: anyio.Event = field(default_factory=anyio.Event)
    #: A folder created after start-up: walked once the watches started
    #: with this one (``group``) have all seen a probe.
    new_folder: Path | None = None
    #: The ids of the watches started together (this one's included).
    group: list[int] = field(default_factory=list)
    #: Watches this group takes over from: stopped once the group is live.
    replaces: frozenset[int] = frozenset()
    #: It has seen a probe: everything after that reaches it.
    live: bool = False


@dataclass(eq=False)
class _Probe:
    #: The watches that have not seen it yet.
    pending: set[int]
    seen: anyio.Event = field(default_factory=anyio.Event)


#: How long a change of a file whose edit was sent to the editor waits for
#: the editor's answer (:meth:`DiskWatcher.sending`): beyond the editor
#: requests' own bound (``harness.clientRequestTimeoutMs``, 10 s).
SENT_HOLD_S = 30.0


class DiskWatcher:
    """Watches ``root``; a change whose file does not look like Rein's own
    last write is reported through ``on_external(paths)``.

    Call :meth:`on_own_mutation` for every change Rein applies, so its echo
    from the file system is recognised and ignored. ``ready`` is set once the
    OS watches deliver events (their first probe was seen).

    ``known_text(rel)``, when given, is the text Rein last knew a file by
    beyond the disk (``rein acp``: what it wrote into the editor's buffer);
    the editor's later save of exactly that text is no external change.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        on_external: Callable[[tuple[str, ...]], object],
        *,
        debounce_ms: int = 50,
        known_text: Callable[[str], str | None] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.on_external = on_external
        self.known_text = known_text
        self.debounce_ms = debounce_ms
        self._own: dict[str, tuple[int, int, int] | None] = {}
        self.ready = anyio.Event()
        self._stop = anyio.Event()
        #: The private folder probe files go to (while running).
        self._probe_dir: Path | None = None
        self._probes: dict[str, _Probe] = {}
        self._probe_names = (f"probe-{n}" for n in itertools.count(1))
        #: The running OS watches by id, and the watches of created folders.
        self._watches: dict[int, _Watch] = {}
        self._ids = itertools.count(1)
        self._by_folder: dict[Path, list[int]] = {}
        self._tg: TaskGroup | None = None
        self._send: MemoryObjectSendStream[_Batch] | None = None
        #: Edits sent to the editor, not answered yet, by path (:meth:`sending`).
        self._sent: dict[str, set[int]] = {}
        self._tokens = itertools.count(1)
        #: Changes seen of such a path, waiting for its answer.
        self._held: set[str] = set()
        #: How long a change waits for a sent edit's answer.
        self.sent_hold_s = SENT_HOLD_S

    @property
    def watch_count(self) -> int:
        """How many OS watches run (at most MAX_WATCHES + 2 while a new plan
        takes over)."""
        return len(self._watches)

    def sending(self, paths: tuple[str, ...]) -> None:
        """An edit of ``paths`` is about to be sent to the editor
        (:class:`~rein.harness.ports.AnnouncesSending`). An editor may
        write them to disk before it answers: a change of one seen before
        the answer waits for it (the applied edit makes it Rein's own), at
        most :attr:`sent_hold_s` (then, the edit never recorded, it is
        external). Before, such an echo seen first was an external change:
        a second generation for one rename (CI-g,
        ``test_the_editor_answers_each_navigation_question``)."""
        token = next(self._tokens)
        for rel in paths:
            self._sent.setdefault(rel, set()).add(token)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_later(self.sent_hold_s, self._sent_ended, paths, token)

    def _sent_ended(self, paths: tuple[str, ...], token: int | None) -> None:
        """The edit ``token`` of ``paths`` was answered (None: every edit of
        them, applied) or its wait is over: a change held for it is Rein's
        own when applied, else external."""
        late: list[str] = []
        for rel in paths:
            tokens = self._sent.get(rel)
            if tokens is None:
                continue
            if token is None:
                tokens.clear()
            else:
                tokens.discard(token)
            if tokens:
                continue
            del self._sent[rel]
            if rel in self._held:
                self._held.discard(rel)
                if token is not None:
                    late.append(rel)
        if late:
            log.info("external change: %s", ", ".join(sorted(late)))
            self.on_external(tuple(sorted(late)))

    def on_own_mutation(self, mutation: Mutation) -> None:
        if mutation.origin != "agent":
            return
        for rel in mutation.paths:
            self._own[rel] = _stamp(self.root / rel)
        self._sent_ended(mutation.paths, None)

    def _relative(self, raw: str) -> str | None:
        try:
            return Path(os.path.realpath(raw)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def stop(self) -> None:
        self._stop.set()
        for watch in self._watches.values():
            watch.stop.set()
        if self._send is not None:
            self._send.close()

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
        """Write a probe and wait until every running watch has seen it,
        touching it again while one has not (a watch starting up)."""
        probe_dir = self._probe_dir
        if probe_dir is None:
            return False
        name = next(self._probe_names)
        probe = _Probe(set(self._watches))
        self._probes[name] = probe
        path = probe_dir / name
        wait_s = 0.05
        try:
            with anyio.move_on_after(limit_s):
                while True:
                    probe.pending &= set(self._watches)  # a watch may have ended
                    if not probe.pending:
                        break
                    path.write_bytes(b"")
                    with anyio.move_on_after(wait_s):
                        await probe.seen.wait()
                    wait_s = min(wait_s * 2, _PROBE_RETOUCH_S)
            return not probe.pending
        finally:
            self._probes.pop(name, None)
            path.unlink(missing_ok=True)

    async def _announce_ready(self) -> None:
        """Probe until every OS watch delivers (they start shortly after the
        watcher), then set ``ready``; after READY_LIMIT_S set it anyway."""
        if not await self._probe(READY_LIMIT_S):
            log.warning("the disk watcher saw no probe within %g s", READY_LIMIT_S)
        self.ready.set()

    async def run(self) -> None:
        self._probe_dir = Path(tempfile.mkdtemp(prefix="rein-watch-"))
        send, receive = anyio.create_memory_object_stream[_Batch](math.inf)
        try:
            async with anyio.create_task_group() as tg:
                self._tg, self._send = tg, send
                plan = await anyio.to_thread.run_sync(plan_watch, self.root)
                self._start(plan, None)
                if self._stop.is_set():
                    send.close()  # stopped before it started
                tg.start_soon(self._announce_ready)
                async with receive:
                    async for wid, changes in receive:
                        await self._handle(wid, changes)
                tg.cancel_scope.cancel()
        finally:
            for watch in self._watches.values():
                watch.stop.set()
            self._watches.clear()
            self._tg = self._send = None
            shutil.rmtree(self._probe_dir, ignore_errors=True)
            self._probe_dir = None

    def _start(
        self, plan: WatchPlan, new_folder: Path | None, replaces: frozenset[int] = frozenset()
    ) -> None:
        """Start the OS watches of ``plan`` (a created folder's, or the root's)."""
        if self._tg is None or self._send is None or self._stop.is_set():
            return
        ids: list[int] = []
        for paths, recursive in ((plan.recursive, True), (plan.flat, False)):
            if not paths:
                continue
            wid = next(self._ids)
            self._watches[wid] = watch = _Watch(
                paths, recursive, new_folder=new_folder, group=ids, replaces=replaces
            )
            if new_folder is None:
                watch.live = True  # start-up: ``ready`` covers it
            self._tg.start_soon(self._watch, wid, watch, self._send.clone())
            ids.append(wid)
            for probe in self._probes.values():
                # A settle in flight also waits for what is already in the folder.
                probe.pending.add(wid)
        if new_folder is not None:
            self._by_folder[new_folder] = ids

    async def _watch(self, wid: int, watch: _Watch, send: MemoryObjectSendStream[_Batch]) -> None:
        assert self._probe_dir is not None
        watch_filter = DefaultFilter(ignore_dirs=(*DefaultFilter.ignore_dirs, *UNWATCHED_NAMES))
        paths = [p for p in watch.paths if p.is_dir()]
        try:
            async with send:
                async for changes in awatch(
                    self._probe_dir,
                    *paths,
                    watch_filter=watch_filter,
                    debounce=self.debounce_ms,
                    step=20,
                    stop_event=watch.stop,
                    recursive=watch.recursive,
                    ignore_permission_denied=True,
                ):
                    await send.send((wid, changes))
        except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            if not watch.stop.is_set():
                log.warning("a disk watch of %s ended: %s", ", ".join(map(str, paths)), exc)
        finally:
            self._retire(wid)

    def _retire(self, wid: int) -> None:
        """Stop watch ``wid`` and wait for it no more."""
        watch = self._watches.pop(wid, None)
        if watch is not None:
            watch.stop.set()
        for probe in self._probes.values():
            probe.pending.discard(wid)
            if not probe.pending:
                probe.seen.set()

    async def _handle(self, wid: int, changes: set[tuple[Change, str]]) -> None:
        watch = self._watches.get(wid)
        probe_dir = self._probe_dir
        external: list[str] = []
        probes: list[str] = []
        skip = WorkspaceFilter(self.root)
        for change, raw in changes:
            if Path(raw).parent == probe_dir:
                probes.append(Path(raw).name)
                continue
            rel = self._relative(raw)
            if rel is None or ".rein-tmp" in rel:
                continue
            if watch is not None and not watch.recursive and change == Change.added:
                # Watched even when ignored now: .gitignore may change.
                await self._watch_new_folder(Path(raw))
            if skip.skipped(rel):
                continue
            if rel in self._sent:
                self._held.add(rel)  # the echo of an edit not answered yet?
                continue
            if await self._is_own_echo(rel):
                continue
            external.append(rel)
        if watch is not None and probes and not watch.live:
            watch.live = True
            group = [self._watches[g] for g in watch.group if g in self._watches]
            folder = watch.new_folder
            if all(w.live for w in group):
                # The group sees everything from now on: report what was
                # already in the created folder, and end what it replaces.
                for sibling in group:
                    sibling.new_folder = None
                if folder is not None:
                    found = await anyio.to_thread.run_sync(_files_below, folder, self.root)
                    external.extend(rel for rel in found if not skip.skipped(rel))
                    external = [rel for rel in external if not await self._is_own_echo(rel)]
                for old in watch.replaces:
                    self._retire(old)
        if external:
            log.info("external change: %s", ", ".join(sorted(set(external))))
            self.on_external(tuple(sorted(set(external))))
        # After the report: whoever waits for a probe sees what came before it.
        for name in probes:
            probe = self._probes.get(name)
            if probe is not None and watch is not None and watch.live:
                probe.pending.discard(wid)
                if not probe.pending:
                    probe.seen.set()

    async def _is_own_echo(self, rel: str) -> bool:
        if rel in self._own and self._own[rel] == _stamp(self.root / rel):
            return True  # the echo of our own write
        if await self._saved_known_text(rel):
            self._own[rel] = _stamp(self.root / rel)
            return True
        self._own.pop(rel, None)
        return False

    async def _saved_known_text(self, rel: str) -> bool:
        """The file now holds the text Rein knew it by (an editor's save)."""
        known = self.known_text(rel) if self.known_text is not None else None
        if known is None:
            return False
        try:
            # The one workspace reader, in a worker thread: a FIFO or device
            # is refused, never waited on.
            return (await read_text_async(self.root / rel, rel)).text == known
        except (OSError, ToolError):
            return False

    async def _watch_new_folder(self, path: Path) -> None:
        """A folder appeared in a flat-watched folder: watch it (never a link)."""
        if not _real_folder(path) or path.name in UNWATCHED_NAMES:
            return
        # Made again after a removal: the old watch ends once the new one is live.
        stale = frozenset(self._by_folder.pop(path, []))
        if len(self._watches) + 2 <= MAX_WATCHES:
            self._start(await anyio.to_thread.run_sync(plan_watch, path), path, stale)
            return
        # Too many: one new plan of the whole tree takes over from all of them
        # once it is live (until then they go on, so nothing is missed).
        self._by_folder.clear()
        replaced = frozenset(self._watches)
        self._start(await anyio.to_thread.run_sync(plan_watch, self.root), path, replaced)


def _real_folder(path: Path) -> bool:
    """A folder, not a link to one."""
    return path.is_dir() and not path.is_symlink()


def _files_below(folder: Path, root: Path) -> list[str]:
    """The files under ``folder`` (links not followed), relative to ``root``."""
    found: list[str] = []
    for parent, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in UNWATCHED_NAMES]
        base = Path(parent).relative_to(root)
        found.extend((base / name).as_posix() for name in files)
    return found
