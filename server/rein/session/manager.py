"""The sessions of one workspace and their store.

:class:`SessionManager` opens the SQLite store once (or keeps sessions in
memory when it cannot, saying so once), makes new sessions, loads stored ones
(their transcripts repaired after a crash, a waiting ``ask_user`` and a
plan-act snapshot included) and records every run: status, turns and usage
(:mod:`rein.session.run_records`).
Both hosts use it, so a ``rein run`` session is listed by ``rein sessions``
and can be resumed from the editor or with ``rein run --resume``.

Memory is bounded (``sessions`` settings): a session that ran and has been
idle for ``idleEvictMs`` is evicted, and past ``maxInMemory`` sessions the
least recently used idle ones are; an evicted session stays in the store and
:meth:`SessionManager.load` brings it back. Without a store nothing is
evicted (it would be lost), and a session in use is never evicted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rein.checkpoints.model import CheckpointStore, MemoryCheckpointStore
from rein.config import ReinConfig
from rein.flows.plan_act import PlanSnapshot
from rein.flows.subagents import SubagentSpawner
from rein.harness import RunResult
from rein.harness.errors import BusyError, StoreError
from rein.harness.reported import reported_logger
from rein.session.builder import PLANNER_MEMORY, bootstrap_messages, build_session
from rein.session.ports import SessionPorts, SessionSpec
from rein.session.results import record_summary, summary
from rein.session.reviews import mark_pending
from rein.session.run_records import bookkeeping, record_cancelled, record_end, record_start
from rein.session.session import Session
from rein.session.store_trouble import StoreTrouble, session_image
from rein.session.stored import read_stored
from rein.store import SqliteStore, StorePersistence
from rein.store.checkpoints import SqliteCheckpointStore

__all__ = ["SessionManager"]

log = logging.getLogger(__name__)
#: What the session's own events also say (``rein run`` prints it once).
reported_log = reported_logger(__name__)


class SessionManager:
    """Sessions by id, the store, and the run bookkeeping around them.

    ``config`` is called for the current configuration (the language server's
    changes with the editor's settings); ``ports`` for the host's ports, made
    on first use; ``storage`` is the store's folder (None: memory only);
    ``on_store_error`` tells the person once that the store is unusable,
    ``on_checkpoint_error`` that checkpoints cannot be stored (the edits go
    on); ``on_store_notice`` tells what went wrong with the open store (a
    write that failed, a database deleted and created again: see
    :mod:`rein.session.store_trouble`);
    ``evict`` turns on the ``sessions`` memory bounds, measured on ``clock``;
    ``recover_interrupted``: on opening the store, sessions left "running"
    are marked "interrupted" (False for a second manager of the same store in
    one process, whose first manager's runs may be running).
    """

    def __init__(
        self,
        config: Callable[[], ReinConfig],
        ports: Callable[[], SessionPorts],
        *,
        storage: Callable[[], str | Path | None],
        on_store_error: Callable[[str], None] | None = None,
        on_checkpoint_error: Callable[[str], None] | None = None,
        on_store_notice: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
        evict: bool = False,
        recover_interrupted: bool = True,
    ) -> None:
        self._config = config
        self._recover_interrupted = recover_interrupted
        self._clock = clock
        #: Whether idle sessions leave memory (the language server's choice:
        #: a host that holds its one session, like ``rein run``, keeps it).
        self._evict = evict
        self._ports = ports
        self._storage = storage
        self._on_store_error = on_store_error
        self._on_checkpoint_error = on_checkpoint_error
        self.sessions: dict[str, Session] = {}
        self.store: SqliteStore | None = None
        self.store_error: str | None = None
        #: Where the sessions' checkpoints live: ``checkpoints.db`` next to
        #: the session database once it is open, else in memory.
        self.checkpoints: CheckpointStore = MemoryCheckpointStore()
        #: Why checkpoints are kept in memory although sessions are stored.
        self.checkpoints_error: str | None = None
        self._checkpoint_error_told = False
        self._store_tried = False
        self.trouble = StoreTrouble(on_store_notice, lambda: self.sessions.values())
        #: Called with every new session (the host subscribes its stream).
        self.on_new_session: list[Callable[[Session], None]] = []
        #: Called with every session evicted from memory (after it is closed).
        self.on_evict: list[Callable[[Session], None]] = []
        #: Sessions a request is using (between its load and its run's end).
        self._in_use: dict[str, int] = {}
        #: The tasks of the prompts in flight (their run and its bookkeeping).
        self._prompts: set[asyncio.Task[Any] | None] = set()
        self._sweep: asyncio.TimerHandle | None = None
        #: When each session in memory was last used (made, loaded, ran).
        self._used: dict[str, float] = {}
        #: Ids of the sessions evicted and not loaded since.
        self._evicted: set[str] = set()

    # ----------------------------------------------------------------- store

    async def open_store(self) -> SqliteStore | None:
        """Open the session database once. On failure say so once and keep
        sessions in memory."""
        if self._store_tried:
            return self.store
        self._store_tried = True
        folder = self._storage()
        if folder is None:
            return None
        try:
            self.store = SqliteStore.open(str(folder))
        except StoreError as exc:
            self.store_error = str(exc)
            reported_log.error("%s", exc)
            if self._on_store_error is not None:
                self._on_store_error(str(exc))
            return None
        self.store.on_replaced = self._store_replaced
        # Before the first await: a concurrent caller gets both stores or neither.
        try:
            self.checkpoints = SqliteCheckpointStore.open(str(folder))
            self.checkpoints.on_replaced = self._checkpoints_replaced
        except StoreError as exc:
            self.checkpoints_error = f"checkpoints are kept in memory only: {exc}"
            self._checkpoint_error(self.checkpoints_error)
        try:
            interrupted = await self.store.mark_interrupted() if self._recover_interrupted else []
        except StoreError as exc:
            self.trouble.failed(exc, kept=False)
            interrupted = []
        if interrupted:
            log.warning("sessions interrupted by the last exit: %s", ", ".join(interrupted))
        return self.store

    def _checkpoint_error(self, message: str) -> None:
        """A checkpoint store that cannot be used: said once (the edits go on)."""
        log.error("%s", message)
        if self._checkpoint_error_told:
            return
        self._checkpoint_error_told = True
        if self._on_checkpoint_error is not None:
            self._on_checkpoint_error(message)

    async def _store_replaced(self, reason: str) -> None:
        """The session database was deleted or replaced while open and is
        created again: the sessions in memory are written into it."""
        store = self.store
        if store is None:
            return
        root = self._ports().root
        images = [
            session_image(s, root, self._memory_state(s, s.agent.waiting_for))
            for s in self.sessions.values()
            if s.agent.messages
        ]
        await store.restore(images)
        self.trouble.notice(
            f"the session database {store.path} {reason} while Rein was using it: it was "
            f"created again with the {len(images)} session(s) in memory; sessions that were "
            "not in memory are gone"
        )

    async def _checkpoints_replaced(self, reason: str) -> None:
        self._checkpoint_error_told = False  # a new trouble: said again
        self._checkpoint_error(
            f"the checkpoint database {self.checkpoints_path()} {reason} while Rein was using "
            "it: it was created again, empty; the changes of earlier runs cannot be undone"
        )

    def checkpoints_path(self) -> Path | None:
        store = self.checkpoints
        return store.path if isinstance(store, SqliteCheckpointStore) else None

    def close(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for session in self.sessions.values():
            session.close()
        if self.store is not None:
            try:
                self.store.close()
            except StoreError as exc:
                self.trouble.notice(str(exc))
            self.store = None
        if isinstance(self.checkpoints, SqliteCheckpointStore):
            self.checkpoints.close()
            self.checkpoints = MemoryCheckpointStore()

    def _persistence(self, session_id: str, spec: SessionSpec) -> Callable[[str, bool], Any]:
        def persistence_for(memory: str, stored: bool) -> StorePersistence | None:
            if self.store is None:
                return None
            return StorePersistence(
                self.store,
                session_id,
                memory,
                title=spec.title[:80],
                mode=spec.mode,
                origin=spec.origin,
                created=stored,
                workspace=str(self._ports().root),
                report=self._checkpoint_failed,
            )

        return persistence_for

    def _checkpoint_failed(self, exc: StoreError | None) -> None:
        if exc is None:
            self.trouble.recovered()
        else:
            self.trouble.failed(exc)

    async def _save_plan(self, session_id: str, snapshot: PlanSnapshot) -> None:
        if self.store is not None:
            await bookkeeping(
                self.trouble,
                self.store.set_memory_state(session_id, PLANNER_MEMORY, snapshot.to_json()),
            )

    # -------------------------------------------------------------- sessions

    def new(self, spec: SessionSpec | None = None, **fields: Any) -> Session:
        """A new session (or a loaded one, when ``spec`` carries its
        transcripts), registered and announced to ``on_new_session``."""
        spec = spec or SessionSpec(**fields)
        if spec.session_id is None:
            from rein.session.session import new_session_id

            spec.session_id = new_session_id()
        session = build_session(
            self._config(),
            self._ports(),
            spec,
            persistence_for=self._persistence(spec.session_id, spec),
            save_plan=self._save_plan,
            checkpoints=self.checkpoints,
            on_checkpoint_error=self._checkpoint_error,
        )
        self.sessions[session.id] = session
        self._used[session.id] = self._clock()
        self._evicted.discard(session.id)
        for listener in list(self.on_new_session):
            listener(session)
        self._evict_over_limit(keep=session.id)
        return session

    def discard(self, session: Session) -> None:
        """Forget a session that is not running (one a rejected request made
        before it ran, one the person closed): nothing of it stays in memory
        (a stored one stays in the store)."""
        if self.sessions.get(session.id) is session and not session.busy:
            del self.sessions[session.id]
            self._used.pop(session.id, None)
            session.close()
            for listener in list(self.on_evict):
                listener(session)

    # -------------------------------------------------------------- eviction

    def evictable(self, session: Session) -> bool:
        """In the store and not in use: loading it again loses nothing."""
        return (
            self._evict
            and self.store is not None
            and not session.busy
            and session.id not in self._in_use
            and session.status not in ("idle", "running")
        )

    def evict(self, session_id: str) -> bool:
        """Drop an evictable session from memory (it stays in the store)."""
        session = self.sessions.get(session_id)
        if session is None or not self.evictable(session):
            return False
        del self.sessions[session_id]
        self._used.pop(session_id, None)
        self._evicted.add(session_id)
        session.close()
        for listener in list(self.on_evict):
            listener(session)
        log.debug("session %s evicted from memory", session_id)
        return True

    def was_evicted(self, session_id: str) -> bool:
        """The session is in the store, not in memory (and so not running)."""
        return session_id in self._evicted

    def sweep(self) -> list[str]:
        """Evict every session idle for ``sessions.idleEvictMs``; re-arm the
        timer for the next one due. The evicted ids."""
        self._sweep = None
        bound_s = self._config().sessions.idle_evict_ms / 1000
        evicted: list[str] = []
        if bound_s > 0:
            now = self._clock()
            for session in list(self.sessions.values()):
                if now - self._last_used(session) < bound_s:
                    continue
                try:
                    if self.evict(session.id):
                        evicted.append(session.id)
                except Exception:  # a closer or listener that raised: the others go on
                    log.exception("evicting session %s failed", session.id)
        self._arm()
        return evicted

    def _arm(self) -> None:
        """Schedule :meth:`sweep` for when the oldest idle session is due."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        bound_s = self._config().sessions.idle_evict_ms / 1000
        due = [self._last_used(s) for s in self.sessions.values() if self.evictable(s)]
        if bound_s <= 0 or not due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        delay = max(0.0, min(due) + bound_s - self._clock())
        self._sweep = loop.call_later(delay, self.sweep)

    def _last_used(self, session: Session) -> float:
        return self._used.get(session.id, session.updated_at)

    def _evict_over_limit(self, keep: str | None = None) -> None:
        limit = self._config().sessions.max_in_memory
        if len(self.sessions) <= limit:
            return
        for session in sorted(self.sessions.values(), key=self._last_used):
            if len(self.sessions) <= limit:
                break
            if session.id != keep:
                self.evict(session.id)

    async def load(self, session_id: str) -> Session | None:
        """A session by id: a live one, else from the store with its
        transcript rolled back if a crash left tool calls without results
        (:mod:`rein.session.stored`)."""
        if session_id in self.sessions:
            self._used[session_id] = self._clock()
            return self.sessions[session_id]
        store = await self.open_store()
        if store is None:
            return None
        stored = await read_stored(store, session_id)
        if stored is None:
            return None
        if session_id in self.sessions:  # loaded by another request meanwhile
            return self.sessions[session_id]
        session = self.new(stored.spec)
        await stored.restore_into(session)
        self._arm()
        return session

    # ------------------------------------------------------------------ runs

    async def run_prompt(self, session: Session, text: str) -> RunResult:
        """One run of ``session`` on ``text`` (a new task, or the answer to
        the question it waits on), recorded in the store. The session is not
        evicted while it runs; its idle time starts when the run ends.
        Refused (BusyError) while a restore writes the session's files."""
        if session.restoring:
            raise BusyError(
                f"session {session.id} is restoring files; send the prompt when the restore is done"
            )
        self._in_use[session.id] = self._in_use.get(session.id, 0) + 1
        task = asyncio.current_task()
        self._prompts.add(task)
        try:
            return await self._run_prompt(session, text)
        finally:
            self._prompts.discard(task)
            left = self._in_use.pop(session.id) - 1
            if left:
                self._in_use[session.id] = left
            if session.id in self.sessions:
                self._used[session.id] = self._clock()
            self._arm()
            self._evict_over_limit()

    async def _run_prompt(self, session: Session, text: str) -> RunResult:
        untitled = not session.title
        if untitled:
            session.title = title_of(text)
        messages = bootstrap_messages(session, self._ports().root, text)
        store = self.store
        if store is not None:
            await record_start(store, session, self.trouble, untitled=untitled)
        capture = session.capture
        if capture is not None:
            capture.start_prompt()
        flow = session.flow
        try:
            if flow is not None:
                context = "\n\n".join(m.content for m in messages if m.origin == "bootstrap")
                result = await session.run(lambda: flow.run(text, context or None))
            else:
                result = await session.run(lambda: session.agent.prompt_messages(messages))
        except asyncio.CancelledError:
            if store is not None:
                await record_cancelled(store, session, self.trouble)
            raise
        if capture is not None:
            session.last_changes = await capture.end_prompt()
            session.last_reviews = await mark_pending(
                session, capture.prompt_runs, self._checkpoint_error
            )
            limits = self._config().checkpoints
            await capture.prune(
                max_bytes=limits.max_mb * 1024 * 1024, max_age_s=limits.max_age_days * 86400.0
            )
        session.turns += result.turns
        session.usage = session.usage + result.usage
        if store is not None:
            state = self._memory_state(session, result.waiting_for)
            await record_end(store, session, result, state, self.trouble)
        return result

    @staticmethod
    def _memory_state(session: Session, waiting_for: str | None) -> dict[str, Any]:
        """What a load needs besides the transcript: the question it waits
        on, the subagent that asked it, the changes left unvalidated."""
        state: dict[str, Any] = {"waiting_for": waiting_for}
        spawner = session.agent.env.subagents
        if isinstance(spawner, SubagentSpawner) and waiting_for is not None:
            state["subagent"] = spawner.state(waiting_for)
        if session.gates is not None:
            state["validation"] = session.gates.state_json()
        return state

    async def prompts_ended(self, bound_s: float) -> None:
        """Wait, within ``bound_s``, for the prompts in flight to write their
        status, usage and checkpoint: a host waits so before closing the store."""
        mine = asyncio.current_task()
        pending = [t for t in self._prompts if t is not None and t is not mine]
        if pending:
            await asyncio.wait(pending, timeout=bound_s)

    def in_use(self, session_id: str) -> bool:
        """A prompt of the session is being prepared or runs (between
        :meth:`run_prompt`'s start and its end): a restore must wait."""
        return session_id in self._in_use

    def active(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.busy]

    async def summaries(self) -> list[dict[str, Any]]:
        """Every session, live and stored, newest first (``rein/sessions``)."""
        found = {s.id: summary(s) for s in self.sessions.values()}
        store = await self.open_store()
        if store is not None:
            for record in await store.list_sessions():
                if record.id not in found:
                    found[record.id] = record_summary(record)
        return sorted(found.values(), key=lambda s: s["updatedAt"], reverse=True)


def title_of(text: str) -> str:
    """A session's title from its first prompt: the first line, 80 characters."""
    return text.strip().splitlines()[0][:80] if text.strip() else "session"
