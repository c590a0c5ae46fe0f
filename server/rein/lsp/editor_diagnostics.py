"""The editor's diagnostics: :class:`EditorDiagnostics` asks the client
for them (``rein/diagnostics``); ``rein/diagnosticsChanged`` feeds the
coordinator, which of its files are fresh said by :func:`fresh_and_outdated`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from rein.harness.errors import SandboxError
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, Mutation
from rein.harness.redaction import redact
from rein.lsp.channel import method_not_found

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from rein.lsp.channel import ClientChannel
    from rein.lsp.editor import EditorWorkspace

__all__ = ["EditorDiagnostics", "fresh_and_outdated"]

log = logging.getLogger(__name__)

NO_DIAGNOSTICS = "the client does not answer rein/diagnostics (method not found)"


def fresh_and_outdated(
    workspace: EditorWorkspace,
    documents: Mapping[str, TextDocument],
    uris: Sequence[str],
    versions: Mapping[str, int],
) -> tuple[list[str], list[str]]:
    """The workspace-relative paths of ``rein/diagnosticsChanged``'s
    ``uris``: fresh, and outdated. Diagnostics the editor made for an older
    version of a document than the one synced (``documents``; the client
    batches its notices: one can arrive after Rein's next edit) are not
    fresh for that edit, nor are those made for the version an edit of
    Rein's was computed against (the notice can arrive while that edit is
    on its way, before the editor's answer and its didChange)."""
    fresh: list[str] = []
    outdated: list[str] = []
    for uri in uris:
        path = workspace.relative(uri)
        if path is None:
            continue
        made_for = versions.get(uri)
        document = documents.get(uri) if made_for is not None else None
        synced = document.version if document is not None else None
        if made_for is not None and (
            (synced is not None and made_for < synced)
            or workspace.older_than_last_edit(uri, made_for)
        ):
            outdated.append(path)
        else:
            fresh.append(path)
    return fresh, outdated


def _convert(path: str, d: dict[str, Any]) -> Diagnostic:
    rng = d.get("range") or {}
    start = rng.get("start") or {}
    end = rng.get("end") or {}
    code = d.get("code")
    if isinstance(code, dict):  # some clients send {value, target}
        code = code.get("value")
    return Diagnostic(
        path=path,
        line=int(start.get("line", 0)),
        character=int(start.get("character", 0)),
        end_line=end.get("line"),
        end_character=end.get("character"),
        severity=int(d.get("severity") or 1),
        code=str(code) if code is not None else None,
        source=d.get("source"),
        # Redacted as it enters: the stored baselines hold this text too.
        message=redact(str(d.get("message", ""))),
    )


#: The bound on one rein/diagnostics answer: a client that does not answer
#: within it leaves that snapshot blind (never an unbounded wait).
ANSWER_TIMEOUT_S = 10.0
#: Without a settle bound from the caller, how long a ``pending`` answer is
#: waited on before the snapshot says ``stale``.
PENDING_WAIT_S = 5.0
#: A ``pending`` answer is asked again at the next rein/diagnosticsChanged or
#: after this long: a client's pending can end without any change (VS Code's
#: bridge says pending for a few seconds after it opened a file no language
#: server analyses), and nothing else would wake the wait before its bound.
PENDING_RECHECK_S = 0.5
#: The bound on the next asks after one went unanswered.
RETRY_TIMEOUT_S = 1.0


class _Answer:
    """One rein/diagnostics answer: its items and whether the client says
    more are coming; ``blind`` says why there is no answer."""

    __slots__ = ("blind", "items", "pending")

    def __init__(
        self, items: list[dict[str, Any]], pending: bool = False, blind: str | None = None
    ) -> None:
        self.items = items
        self.pending = pending
        self.blind = blind


class EditorDiagnostics:
    """The raw source: the editor's current diagnostics from all its
    language servers, asked with ``rein/diagnostics``.

    It is a :class:`~rein.harness.ports.SettlingDiagnostics` as far as an
    editor allows (it has no progress API for other extensions' servers):

    * :meth:`ensure_open` asks ``rein/diagnostics`` for the files; the client
      opens (loads) the documents it is asked about, so its language servers
      analyse them before the run changes them.
    * :meth:`wait_idle`: idle is a quiet period (``quiet_ms``) after the last
      ``rein/diagnosticsChanged``, and no ``pending: true`` in the client's
      answer for the files opened or changed since the last idle point (a
      client whose analysis is progressive says so until the last layer is
      published).
    * :meth:`environment_changed` does nothing beyond what wait_idle waits
      for: the editor's servers watch the files themselves.

    Never blind silently: a client without ``rein/diagnostics``, one that
    does not answer within ``answer_timeout_s`` or answers with an error
    gives a snapshot whose ``blind`` says so.
    """

    def __init__(
        self,
        client: ClientChannel,
        workspace: EditorWorkspace,
        *,
        quiet_ms: int = 150,
        answer_timeout_s: float = ANSWER_TIMEOUT_S,
        pending_wait_s: float = PENDING_WAIT_S,
        pending_recheck_s: float = PENDING_RECHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.workspace = workspace
        self.quiet_s = quiet_ms / 1000.0
        self.answer_timeout_s = answer_timeout_s
        self.pending_wait_s = pending_wait_s
        self.pending_recheck_s = pending_recheck_s
        self._clock = clock
        self._last_change = -1e9
        self._changed = asyncio.Event()
        #: Files opened or changed since the last idle point: wait_idle asks
        #: the client whether their analysis is still pending.
        self._watched: set[str] = set()
        #: The last ask got no answer in time.
        self._silent = False

    @property
    def supported(self) -> bool:
        return self.client.supports("rein/diagnostics")

    # ------------------------------------------------------------ feeding

    def notify_changed(self, paths: Sequence[str]) -> None:
        """A ``rein/diagnosticsChanged`` arrived for ``paths`` (they restart
        the quiet period; they are not asked about: the client opens what it
        is asked about, and an editor may publish for thousands of files)."""
        self._last_change = self._clock()
        self._changed.set()
        self._changed = asyncio.Event()

    def notify_mutation(self, mutation: Mutation) -> None:
        """A file changed: its analysis is owed until the client says done."""
        self._watched.update(mutation.paths)

    # ------------------------------------------------------------ asking

    async def _ask(self, uris: list[str] | None) -> _Answer:
        if not self.supported:
            return _Answer([], blind=NO_DIAGNOSTICS)
        # After one unanswered ask, the next ones wait briefly until the
        # client answers again (a verdict asks up to three times).
        bound = (
            min(self.answer_timeout_s, RETRY_TIMEOUT_S) if self._silent else self.answer_timeout_s
        )
        try:
            result = await asyncio.wait_for(
                self.client.request("rein/diagnostics", {"uris": uris}), bound
            )
        except TimeoutError:
            log.warning("rein/diagnostics: no answer within %g s", bound)
            self._silent = True
            return _Answer(
                [],
                blind=(
                    "the client does not answer rein/diagnostics (no answer within "
                    f"{bound:g} s, gates.analyzer.requestTimeoutMs)"
                ),
            )
        except JsonRpcException as exc:
            if method_not_found(exc):
                log.warning(
                    "the client does not answer rein/diagnostics: the analyzer gate is blind"
                )
                return _Answer([], blind=NO_DIAGNOSTICS)
            log.warning("rein/diagnostics failed: %s", exc)
            return _Answer([], blind=f"the client's rein/diagnostics failed: {exc}")
        except Exception as exc:  # the client went away, or a bad frame: not fatal
            log.warning("rein/diagnostics failed", exc_info=True)
            return _Answer(
                [], blind=f"the client's rein/diagnostics failed: {type(exc).__name__}: {exc}"
            )
        self._silent = False
        if not isinstance(result, dict):
            return _Answer([])
        items = [i for i in result.get("items") or [] if isinstance(i, dict)]
        return _Answer(items, pending=result.get("pending") is True)

    async def _wait_change(self, seconds: float) -> None:
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), max(seconds, 0.0))

    def _uris(self, paths: Sequence[str]) -> list[str]:
        out: list[str] = []
        for path in sorted(set(paths)):
            try:
                out.append(self.workspace.uri(path))
            except SandboxError:
                continue
        return out

    async def _settled_answer(
        self, uris: list[str] | None, deadline: float
    ) -> tuple[_Answer, bool]:
        """Ask until the client no longer says ``pending`` (each pending
        answer is asked again at the next rein/diagnosticsChanged, or after
        ``pending_recheck_s``), at most until ``deadline``. Returns the last
        answer and whether it is settled."""
        while True:
            answer = await self._ask(uris)
            if answer.blind is not None or not answer.pending:
                return answer, True
            left = deadline - self._clock()
            if left <= 0:
                return answer, False
            await self._wait_change(min(left, self.pending_recheck_s))

    # ------------------------------------------------------------ the port

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        uris = self._uris(paths) if paths is not None else None
        answer, settled = await self._settled_answer(uris, self._clock() + self.pending_wait_s)
        generation = max(self.workspace.generation, min_generation)
        if answer.blind is not None:
            return DiagnosticsSnapshot((), generation, stale=True, blind=answer.blind)
        out: list[Diagnostic] = []
        for item in answer.items:
            path = self.workspace.relative(str(item.get("uri", "")))
            if path is None:
                continue
            out.extend(_convert(path, d) for d in item.get("diagnostics") or [])
        return DiagnosticsSnapshot(
            tuple(out),
            generation,
            stale=not settled,
            sources=("editor",),
            stale_reason=None
            if settled
            else "the editor still said pending after gates.analyzer.maxWaitMs",
        )

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        """Ask the client about ``paths``: it opens (loads) the documents it
        is asked about, so the editor's servers analyse them. The answer
        itself is not used (wait_idle asks again). The editor's analyzers
        decide what else they analyse: nothing else is opened."""
        uris = self._uris(paths)
        if not uris:
            return ()
        self._watched.update(paths)
        await self._ask(uris)
        return ()

    async def wait_idle(self, timeout_s: float) -> bool:
        """No ``pending`` for the watched files and a quiet period after the
        last rein/diagnosticsChanged; False when ``timeout_s`` passed first.
        A blind client has nothing to wait for (its snapshot says blind)."""
        deadline = self._clock() + timeout_s
        watched = sorted(self._watched)
        while True:
            if watched:
                answer, settled = await self._settled_answer(self._uris(watched), deadline)
                if answer.blind is not None:
                    return True
                if not settled:
                    return False
            quiet_left = self.quiet_s - (self._clock() - self._last_change)
            if quiet_left <= 0:
                self._watched.difference_update(watched)
                return True
            left = deadline - self._clock()
            if left <= 0:
                return False
            await self._wait_change(min(left, quiet_left))

    async def environment_changed(self, paths: Sequence[str]) -> None:
        """Nothing to tell: the editor's language servers watch the files
        and the environment themselves; the verdict waits for their quiet
        period (:meth:`wait_idle`)."""
        return None
