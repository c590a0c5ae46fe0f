"""The tests gate's judgement made ahead: while the model takes its turn.

First each changed module is read as the verdict will read it
(:class:`ReadAhead`: its model and units, its import-graph scan). Then,
after a tool turn changed files (:meth:`TestGate.on_change`, once per
change), :class:`Ahead` starts one judgement for the workspace as it is
then, in the background: the turn's changes coalesced into one start (on
the next pass of the event loop, once the gate's read-ahead of them is
done), with no event. The judgement is what ``check`` would do (the
selection, the first run, the re-run, the baseline run) and is keyed by
its exact inputs (:class:`JudgementKey`): the changed paths, the text of
each as the judgement read it and as it was before the run (content
hashes), the files whose earlier text is unknown, the workspace
generation of the last change it saw, the gate's configuration, whether
its runs are sandboxed, how many dependency installs had finished (no
judgement starts ahead while one runs or is owed: the environment it
changes, linked into the shadow, shows in no text) and how many commands
the run had started (a command can write where no walk looks: a ``pip
install`` into the linked ``.venv``, a folder outside the workspace).

At ``check``, the gate computes the key of the verdict it would make
(cheap: the texts it reads anyway) and :meth:`Ahead.take` gives it the
judgement made ahead only when the keys are equal, awaiting it if it is
still running; any other judgement is cancelled (its pytest processes
killed, as an abort kills a verdict's) and waited for before the verdict
judges afresh. So an outcome computed for other texts is never returned:
a text changed since (a later change, the editor's unsaved buffer the
verdict reads and the judgement ahead did not, another change anywhere in
the workspace, which moves its generation) is a key that differs, and so
is an install finished since. What the key does not hold, the files
outside the run's changes (a gitignored file a command or a person wrote,
which no change reports), the judgement's shadow syncs saw: each sync's
walk of the workspace (paths, sizes, mtimes, minus its overlay) is kept
(a judgement that runs no test walks once before it reads anything),
and the verdict walks the workspace again and takes the judgement only
when every walk is the same (:func:`~rein.testgate.shadow.seen_now`). What
the shadow links rather than copies (a ``.venv``, ``node_modules``, a
linked folder, a file over 8 MiB) a walk sees by its name only: a
person's change inside one during the model's turn is not seen (a
command's is, by the count above).

A new change cancels a judgement running and schedules another; the run's
end (an abort included), a validation and the gate's close stop it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rein.harness.errors import ReinError
from rein.harness.gating.gate_types import GateOutcome
from rein.harness.parse_thread import in_parse_thread
from rein.testgate.import_graph import scan_ahead
from rein.testgate.overlays import current_texts
from rein.testgate.picking import Picker
from rein.testgate.shadow import Seen, seen_now

__all__ = ["Ahead", "Judged", "Judgement", "JudgementKey", "ReadAhead", "judgement_key"]

log = logging.getLogger(__name__)


class ReadAhead:
    """Each changed module read as the verdict will (its model, its units:
    :meth:`Picker.prepare`; its import-graph scan), first. From the disk,
    not the workspace port (a client's read has effects of its own): a text
    an editor or a client holds unsaved is read by the verdict, as before.
    ``baseline``: the changed files' texts before the run, and those not
    known (the gate's)."""

    def __init__(
        self,
        root: Path,
        picker: Picker,
        baseline: Callable[[Sequence[str]], tuple[dict[str, str | None], list[str]]],
    ) -> None:
        self.root = root
        self._picker = picker
        self._baseline = baseline
        self._reading: set[asyncio.Future[None]] = set()

    def start(self, paths: list[str]) -> None:
        task = asyncio.ensure_future(self._read(paths))
        self._reading.add(task)
        task.add_done_callback(self._reading.discard)

    async def _read(self, paths: list[str]) -> None:
        try:
            overlay = await current_texts(self.root, paths, None)
            before, unknown = self._baseline(paths)
            texts = {p: (None if p in unknown else before.get(p), overlay.get(p)) for p in paths}
            await in_parse_thread(self._picker.prepare, texts)
            await asyncio.to_thread(scan_ahead, self.root, paths)
        except (ReinError, OSError, UnicodeError) as exc:  # the verdict reads it again
            log.debug("tests gate: %s not read ahead: %s", paths, exc)

    async def done(self, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` for what was started; False, with a
        warning, when it gave up."""
        if not self._reading:
            return True
        _, pending = await asyncio.wait([*self._reading], timeout=timeout_s)
        if pending:
            log.warning("tests gate: %d read-ahead(s) not done in %.1f s", len(pending), timeout_s)
        return not pending

    def cancel(self) -> None:
        for task in self._reading:
            task.cancel()


@dataclass(frozen=True, slots=True)
class JudgementKey:
    """A judgement's inputs (see the module docstring)."""

    changed: tuple[str, ...]
    #: (path, sha256 of its text now or None: absent; "?": not read as text).
    now: tuple[tuple[str, str | None], ...]
    #: (path, sha256 of its text before the run or None: absent then).
    before: tuple[tuple[str, str | None], ...]
    unknown: tuple[str, ...]
    generation: int
    config: str
    #: Whether the runs are sandboxed (``sandbox.also``, read at each run).
    sandboxed: bool
    #: The dependency installs finished (-1: one runs or is owed).
    installs: int
    #: The commands the run started (one may write where no walk looks:
    #: a linked ``.venv``, a folder outside the workspace).
    commands: int


def _digest(text: str | None) -> str | None:
    return (
        None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    )


def judgement_key(
    changed: Sequence[str],
    now: Mapping[str, str | None],
    before: Mapping[str, str | None],
    unknown: Sequence[str],
    generation: int,
    config: str,
    *,
    sandboxed: bool,
    installs: int,
    commands: int,
) -> JudgementKey:
    """The key of a judgement of ``changed`` with their texts ``now`` (a
    path missing there is no text: its bytes are copied) and ``before``."""
    return JudgementKey(
        changed=tuple(changed),
        now=tuple((p, _digest(now[p]) if p in now else "?") for p in changed),
        before=tuple((p, _digest(before.get(p))) for p in changed if p not in unknown),
        unknown=tuple(unknown),
        generation=generation,
        config=config,
        sandboxed=sandboxed,
        installs=installs,
        commands=commands,
    )


@dataclass(slots=True)
class Judged:
    """A judgement's outcome, the test files its selection chose (the
    verdict names those importing a file unsaved in the editor), the
    gate's timings of it and what its shadow syncs saw of the workspace."""

    outcome: GateOutcome
    files: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)


#: What the gate gives :class:`Ahead` to start a judgement: the run's
#: changed paths and the generation of the last change -> the judgement's
#: key and what makes it, called when it starts (None: no judgement to
#: make now).
Judgement = Callable[[], Coroutine[Any, Any, Judged]]
Starter = Callable[[Sequence[str], int], Awaitable[tuple[JudgementKey, Judgement] | None]]


class Ahead:
    """The judgement made ahead for one gate (see the module docstring).

    ``start`` computes the judgement's inputs and returns its key and
    what makes it; ``ready`` is awaited before it starts (the gate's
    read-ahead of the changed modules); ``root``: the workspace."""

    def __init__(self, start: Starter, ready: Callable[[], Awaitable[object]], root: Path) -> None:
        self._start = start
        self._ready = ready
        self._root = root
        #: Why the last :meth:`take` judged afresh after all (for the detail).
        self.voided = ""
        #: The paths the run changed since its start or last validation.
        self._touched: set[str] = set()
        self._generation = 0
        #: The scheduled start (coalescing a turn's changes), if any.
        self._starting: asyncio.Task[None] | None = None
        #: The judgement ahead and its key.
        self._task: asyncio.Task[Judged] | None = None
        self._key: JudgementKey | None = None
        #: Judgements cancelled and not yet ended: the next one waits for
        #: them (they share the gate's shadow trees and warm pytest).
        self._stopping: set[asyncio.Task[object]] = set()
        #: How many judgements were started ahead (for tests and the bench).
        self.started = 0
        #: Held by the judgement judging (ahead, or the verdict's own): one
        #: at a time in the gate's shadow trees.
        self.judging = asyncio.Lock()

    def forget(self) -> None:
        """A new run or a validation: no change is the run's yet; what
        runs is stopped."""
        self._touched.clear()
        self.stop()

    def changed(self, paths: Iterable[str], generation: int) -> None:
        """The run changed ``paths`` (at ``generation``): a judgement
        running is cancelled and one is scheduled for the workspace as the
        turn's changes leave it."""
        self._touched.update(paths)
        self._generation = max(self._generation, generation)
        self._cancel_task()
        self._cancel_starting()  # a start not made yet reads these too
        self._starting = asyncio.ensure_future(self._start_soon())

    async def _start_soon(self) -> None:
        try:
            # The turn's other changes are told in the same pass of the loop.
            await asyncio.sleep(0)
            await self._ready()
            await self._settled()
            started = await self._start(sorted(self._touched), self._generation)
        except asyncio.CancelledError:
            raise
        except Exception:  # the verdict judges at check, as without it
            log.exception("tests gate: no judgement ahead")
            return
        finally:
            if self._starting is asyncio.current_task():
                self._starting = None
        if started is None:
            return
        key, judgement = started
        self._key, self._task = key, asyncio.ensure_future(self._judge(judgement))
        self.started += 1

    async def _judge(self, judgement: Judgement) -> Judged:
        # Made here: a task cancelled before its first step leaves no
        # coroutine unawaited.
        async with self.judging:
            return await judgement()

    async def finished(self) -> None:
        """Wait until the judgement scheduled or running ahead, if any, has
        ended (it stays to be taken)."""
        if self._starting is not None:
            await asyncio.wait([self._starting])
        if self._task is not None:
            await asyncio.wait([self._task])

    async def take(self, key: JudgementKey) -> Judged | None:
        """The judgement made ahead when its key is ``key`` (awaited if it
        still runs); else None, once any other has been stopped and has
        ended. A judgement scheduled and not started yet (it waits for
        the read-ahead the verdict would wait for too) starts first. A
        judgement whose syncs saw the workspace other than it is now (a file
        outside the key changed) is not taken either (:attr:`voided`)."""
        self.voided = ""
        if self._starting is not None:
            await asyncio.wait([self._starting])
        task, mine = self._task, self._key
        self._task = self._key = None
        if task is not None and mine == key and not task.cancelled():
            judged = await task  # cancelled with the verdict (an abort): so is it
            if await asyncio.to_thread(seen_now, self._root, judged.seen):
                return judged
            self.voided = "the workspace changed since the judgement ahead: judged again"
            return None
        if task is not None:
            self._stopping_add(task)
        await self._settled()
        return None

    def stop(self) -> None:
        """Cancel what is scheduled or running (its processes are killed
        as its runs end)."""
        self._cancel_starting()
        self._cancel_task()

    async def close(self) -> None:
        """Stop, and wait for what was running to end."""
        self.stop()
        await self._settled()

    def running(self) -> bool:
        """A judgement ahead is scheduled, running, or being stopped."""
        return bool(self._starting or self._task or self._stopping)

    def _cancel_starting(self) -> None:
        if self._starting is not None:
            self._starting.cancel()
            self._starting = None

    def _cancel_task(self) -> None:
        task, self._task, self._key = self._task, None, None
        if task is not None:
            self._stopping_add(task)

    def _stopping_add(self, task: asyncio.Task[Judged]) -> None:
        task.cancel()
        self._stopping.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[Judged]) -> None:
        self._stopping.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("tests gate: a judgement ahead failed: %r", task.exception())

    async def _settled(self) -> None:
        """Wait for the judgements being stopped to end."""
        while self._stopping:
            await asyncio.wait(list(self._stopping))
