"""One analyzer language server, driven by the pool as its LSP client
(pygls's LanguageClient): start and initialize it, track its progress,
send didOpen/didChange, pull (:mod:`rein.disk.pull_answers`) or receive
its diagnostics, stop it. The
:class:`~rein.disk.analyzers.AnalyzerPool` owns one per running
analyzer and decides what is open, when it is settled and what a crash
means; the server knows it only as an :class:`AnalyzerOwner` (and does not
import the pool)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_client import (
    analyzer_client,
    show_changed,
    show_closed,
    show_opened,
    show_watched,
)
from rein.disk.analyzer_findings import Findings
from rein.disk.analyzer_handshake import (
    UnaskedSettings,
    configuration_answer,
    handshake,
    settings_for,
)
from rein.disk.analyzer_notices import Registrations, StoppedAnalysis
from rein.disk.analyzer_process import start_process, stop_client
from rein.disk.analyzer_pull import LatestPulls, answers_pulls
from rein.disk.analyzer_requests import AnalyzerTimeout, bounded
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.owed_publishes import OwedFiles
from rein.disk.owed_refresh import ENVIRONMENT_GRACE_S, OwedRefresh
from rein.disk.pool_status import server_version
from rein.disk.pull_answers import ask_pull
from rein.harness.ports import Diagnostic

__all__ = ["AnalyzerOwner", "AnalyzerTimeout"]

log = logging.getLogger(__name__)


def _uri(root: Path, rel: str) -> str:
    return (root / rel).as_uri()


def _build_token(path: str) -> str:
    """The progress key of clangd's build of ``path`` (:meth:`_Analyzer.file_status`)."""
    return f"clangd:{path}"


class AnalyzerOwner(Protocol):
    """All an analyzer server needs from the pool that owns it: the workspace
    (root, a file's text, a URI's path, what the filter skips and excludes),
    the pool's bounds (one answer's timeout; too large to check more than the
    open files), what a (re)start opens, and three reports back."""

    @property
    def root(self) -> Path: ...
    @property
    def request_timeout_s(self) -> float: ...
    @property
    def large(self) -> bool: ...
    @property
    def deferring(self) -> bool: ...
    def read(self, path: str) -> str | None: ...
    def relative(self, uri: str) -> str | None: ...
    def skipped(self, path: str) -> bool: ...
    def exclude_globs(self) -> list[str]: ...
    def files_to_open(self, *, file_by_file: bool) -> Sequence[str]: ...
    def analyzer_active(self) -> None: ...
    def analyzer_published(self, path: str) -> None: ...
    async def analyzer_exited(self, analyzer: _Analyzer, returncode: int | None) -> None: ...


class _Analyzer:
    """One analyzer server and what it last published."""

    def __init__(self, spec: AnalyzerSpec, executable: str, pool: AnalyzerOwner) -> None:
        self.spec = spec
        self.executable = executable
        self.pool = pool
        self.client: LanguageClient | None = None
        self.capabilities: dict[str, Any] = {}  #: initialize's (navigation asks by them)
        #: What it last said of each file (:mod:`rein.disk.analyzer_findings`).
        self.findings = Findings(spec.name, workspace_mode=spec.diagnostic_mode_setting is not None)
        self.versions: dict[str, int] = {}
        #: path -> the text last sent (open files): a rename's edits are checked on it.
        self.sent: dict[str, str] = {}
        #: path -> the version whose diagnostics we still wait for
        self.awaiting = OwedFiles()
        self.restarts = 0
        self.alive = False
        #: Its process exited (until the next start): what is read from it
        #: now was written before, and is not taken.
        self.exited = False
        self._stderr_task: asyncio.Task[None] | None = None
        #: The server answers textDocument/diagnostic (set after initialize).
        self.pull = False
        #: Its pulls out, and each file's latest (only it counts: :mod:`rein.disk.pull_answers`).
        self.pulls = LatestPulls()
        #: Its settings sent unasked if it does not ask (asks_settings).
        self._unasked = UnaskedSettings(spec.name)
        self._stopping = False
        #: Open progress: work-done tokens, and "pyright" for its notifications.
        self.progress: set[str] = set()
        #: When its last progress ended (monotonic), for the gate benchmark.
        self.last_progress_end_at: float | None = None
        #: When it last ended a progress or published (monotonic seconds).
        self.last_activity = time.monotonic()
        #: Its dynamic registrations (client/registerCapability), by id.
        self.registrations = Registrations()
        #: A registration of workspace/didChangeWatchedFiles stands.
        self.watches_files = False
        #: The server's name and version from its initialize result.
        self.version: str | None = None
        #: Why it is not running (failed to start, off after repeated
        #: crashes), for reports; None while it runs or restarts.
        self.failure: str | None = None
        #: Settings sent to it: the spec's, with the filter's excludes.
        self.settings: dict[str, Any] = spec.settings
        #: Open files it has not republished since an environment change
        #: (:mod:`rein.disk.owed_refresh`).
        self.owed_refresh = OwedRefresh()
        #: Its files changed while it was not running (its findings of them are stale).
        self.changed_while_down: set[str] = set()
        self.hold_until = 0.0  #: not idle before this (pull_answers.PULL_GRACE_S)
        #: Its analysis stopped and was resumed (:meth:`analysis_stopped`).
        self._stops = StoppedAnalysis()

    @property
    def diagnostics(self) -> dict[str, list[Diagnostic]]:
        return self.findings.diagnostics

    @property
    def unanswered(self) -> dict[str, str]:
        """path -> why its diagnostics are missing (:class:`Findings`)."""
        return self.findings.unanswered

    @property
    def answered_blind(self) -> set[str]:
        return self.findings.answered_blind

    def idle(self, quiet_s: float, now: float) -> bool:
        """Nothing open, nothing owed, and quiet for ``quiet_s`` (or its settle period)."""
        if not self.alive:
            return True
        if self.owed_refresh.holds(now):
            return False
        quiet = now - self.last_activity >= max(quiet_s, self.spec.settle_s)
        return not self.progress and not self.awaiting and quiet and now >= self.hold_until

    def busy_until(self, quiet_s: float) -> float | None:
        """When it becomes idle if nothing else happens; None: not by time."""
        if self.progress or self.awaiting:
            return None
        quiet = max(self.last_activity + max(quiet_s, self.spec.settle_s), self.hold_until)
        return max(quiet, self.owed_refresh.until) if self.owed_refresh else quiet

    def note_activity(self) -> None:
        self.last_activity = time.monotonic()
        self.pool.analyzer_active()

    def progress_begin(self, token: str) -> None:
        self._stops.working()
        self.progress.add(token)
        self.note_activity()

    def progress_end(self, token: str) -> None:
        self.progress.discard(token)
        self.note_activity()
        self.last_progress_end_at = self.last_activity

    def file_status(self, uri: str, state: str) -> None:
        """clangd says what it does with the file at ``uri``
        (:data:`~rein.disk.analyzer_notices.CLANGD_FILE_STATUS`): a file it
        is building is work in progress until it says "idle". A header's
        change rebuilds the files including it after the header's own
        publish: without this, the quiet period could pass between the two
        and their diagnostics be taken as current. Keyed by workspace path
        (clangd's URI and ours spell a path differently: ``d:x%20y`` against
        ``d%3Ax%20y``); a file not open is built no more, whatever it says
        (a file closed right after a change gets no status after its close,
        and one already on its way would keep it busy for good)."""
        path = self.pool.relative(uri)
        if path is None:
            self.note_activity()
            return
        token = _build_token(path)
        if state == "idle" or path not in self.versions:
            self.progress_end(token)
        else:
            self.progress_begin(token)

    def registrations_changed(self) -> None:
        self.watches_files = self.registrations.has(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)

    def analysis_stopped(self, message: str) -> None:
        """The server says an internal error stopped its analysis (pyright's
        "Error performing analysis"): it checks nothing more until its
        program changes, so a file opened since is never published and the
        wait for it would last its whole bound (basedpyright on django, in
        open-files mode, after the last open file was closed). Its settings
        are sent again, which makes it check the open files afresh, and they
        are owed again. Once resumed RESUMES_WITHOUT_PUBLISH times with
        nothing published in between (:class:`~rein.disk.analyzer_notices.
        StoppedAnalysis`), the next stop leaves what it owes stale, saying why."""
        if not self.alive or self.client is None:
            return
        resume = self._stops.stopped(message)
        if resume is None:
            return  # said already
        why = f"{self.spec.name} stopped analysing: {message.splitlines()[0]}"
        if not resume:
            log.warning("%s (again; its open files are stale)", why)
            for path, version in list(self.awaiting.items()):
                self.not_answered(path, version, why)
            return
        log.warning("%s; its settings sent again so it checks its open files afresh", why)
        self.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings=self.settings)
        )
        self.refresh()

    def owns(self, path: str) -> bool:
        return os.path.splitext(path)[1] in self.spec.extensions

    @property
    def file_by_file(self) -> bool:
        """The workspace is too large, or its whole analysis is deferred:
        every server analyses the open files only (the pool opens a change's
        files, and in a large workspace their importers)."""
        return self.pool.large or self.pool.deferring

    @property
    def pid(self) -> int | None:
        """The analyzer's process id, while its client has a process."""
        server = self.client._server if self.client is not None else None
        return server.pid if server is not None else None

    async def start(self) -> None:
        self.exited = False
        self.client = client = analyzer_client(self, self.spec.name)
        root = self.pool.root
        self.progress.clear()
        self.registrations.clear()
        self.watches_files = False
        self.settings = settings_for(
            self.spec, self.pool.exclude_globs(), file_by_file=self.file_by_file
        )
        command = [self.executable, *self.spec.command[1:]]
        self._stderr_task = await start_process(client, self.spec.name, command, root)
        self._unasked.reset()
        result = await handshake(client, self.spec, root, self.settings, self.bounded_request)
        self._unasked.expect(client, self.spec, self.settings)
        caps = result.get("capabilities")
        self.capabilities = caps = caps if isinstance(caps, dict) else {}
        self.version = server_version(result.get("serverInfo"))
        self.pull = bool(self.spec.pull and caps.get("diagnosticProvider")) or self.spec.tsserver
        self.alive = True
        self.failure = None
        self.versions.clear()
        self.awaiting.clear()
        self.changed_while_down.clear()
        self.owed_refresh.clear()
        self._stops = StoppedAnalysis()
        # A new server: the old one's findings and questions are not its own.
        self.findings.clear()
        self.pulls.clear()
        self.note_activity()
        # File by file, start opens nothing: what a change touches is opened
        # (with its importers) before the change; a restart reopens those.
        for path in self.pool.files_to_open(file_by_file=self.file_by_file):
            if self.owns(path):
                self.open(path)

    def on_configuration(self, params: lsp.ConfigurationParams) -> list[Any]:
        """The server asks for its settings."""
        self._unasked.asked()
        return configuration_answer(self.settings, params)

    def on_refresh(self) -> None:
        """The server's view changed (``workspace/diagnostic/refresh``, e.g.
        a config file): every open file pulled again, owed until answered."""
        for path, version in list(self.versions.items()):
            self.awaiting[path] = version
            ask_pull(self, path, version)

    async def on_exit(self, returncode: int | None) -> None:
        """Its process ended (the pool is told unless it was stopped)."""
        self.alive = False
        self.exited = True
        self._unasked.reset()
        if not self._stopping:
            await self.pool.analyzer_exited(self, returncode)

    async def bounded_request(
        self, what: str, request: Awaitable[Any], bound_s: float = 0.0, bound: str = ""
    ) -> Any:
        """Await ``request``, at most ``bound_s`` (named ``bound`` in the
        timeout's reason) or the pool's request bound."""
        seconds = bound_s or self.pool.request_timeout_s
        return await bounded(self.spec.name, what, seconds, request, bound if bound_s else "")

    def refresh(self, grace_s: float = ENVIRONMENT_GRACE_S) -> None:
        """After a change it cannot see in a document (the environment):
        pulled again where it offers pull diagnostics; a pushing analyzer
        owes a republish of its open files until ENVIRONMENT_GRACE_S passed
        (it republishes only what changed, and says nothing else)."""
        for path, version in self.versions.items():
            if self.pull:
                self.awaiting[path] = version
                ask_pull(self, path, version)
        if not self.pull:
            self.owed_refresh.owe(self.versions, grace_s)
        self.note_activity()

    def analyse_workspace(self) -> None:
        """The pool's deferral ended: its settings for the whole workspace
        sent (a server that asks for them asks again), the files start-up
        opens opened, every open file owed afresh."""
        if not self.alive or self.client is None:
            return
        settings = settings_for(self.spec, self.pool.exclude_globs(), file_by_file=False)
        if settings != self.settings:
            self.settings = settings
            self.client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=settings)
            )
        for path in self.pool.files_to_open(file_by_file=False):
            if self.owns(path) and path not in self.versions:
                self.open(path)
        self.refresh()

    async def restart(self) -> None:
        """Stop the server and start it again (it reopens the pool's files)."""
        await self.stop()
        self._stopping = False
        self.client = None
        await self.start()

    def open(self, path: str) -> None:
        text = self.pool.read(path)
        if text is None or self.client is None:
            return
        self.versions[path] = 1
        self.sent[path] = text
        self.awaiting[path] = 1
        show_opened(self.client, _uri(self.pool.root, path), self.spec.language_for(path), text)
        ask_pull(self, path, 1)

    def close(self, path: str) -> None:
        """Close an open file; its diagnostics are forgotten (a file-by-file
        analyzer publishes none for a closed file)."""
        if path not in self.versions:
            return
        self._forget(path)
        if self.client is not None and self.alive:
            show_closed(self.client, _uri(self.pool.root, path))

    def _forget(self, path: str) -> None:
        """All it holds of ``path`` (closed or deleted)."""
        self.versions.pop(path, None)
        self.sent.pop(path, None)
        self.awaiting.pop(path, None)
        self.owed_refresh.discard(path)
        self.findings.forget(path)
        # A closed file's build is over, whether clangd said "idle" or not.
        self.progress.discard(_build_token(path))

    def change(self, path: str, text: str | None = None) -> None:
        """Send the file's content (or ``text``, shown instead of it)."""
        if not self.alive or self.client is None or not self.owns(path):
            return
        text = self.pool.read(path) if text is None else text
        uri = _uri(self.pool.root, path)
        if text is None:
            # A server that lets us watch files for it (basedpyright in
            # workspace mode) learns of a deleted file only from us, before
            # its close: basedpyright that analysed after the close first
            # (under load) resolved the module still, as empty ('"double" is
            # unknown import symbol'), and kept that after the deletion.
            if self.watches_files:
                show_watched(self.client, uri, lsp.FileChangeType.Deleted)
            if path in self.versions:
                show_closed(self.client, uri)
            self._forget(path)  # its pull's timeout too (nothing else clears it)
            return
        if path not in self.versions:
            self.open(path)
            return
        self._send(path, text)
        for other, at in list(self.versions.items()) if self.spec.tsserver else ():
            if other != path:  # asked again too: the change may break them
                self.awaiting[other] = at
                ask_pull(self, other, at)

    def show_again(self, path: str) -> bool:
        """Send an open file's text once more, as a new version, to a server
        that answers pulls: analysed afresh, with nothing kept from before.
        basedpyright keeps the errors it met in a file's code while checking
        another file (an importer's inferred types) until that file is
        parsed again, and reports them at the file's next check, even after
        the file they came from changed back: '"is_random" is unknown import
        symbol' in sympy's ``crv.py`` with ``rv.py`` shown as before a
        ``sed`` renamed it. Not to one that only publishes: clangd says
        nothing of a text it was sent again, and the version would stay
        owed to the bound (review29). Returns whether it was sent."""
        if not (self.alive and self.client is not None and path in self.versions):
            return False
        if not self.answers_pulls:
            return False
        self._send(path, self.sent[path])
        return True

    def _send(self, path: str, text: str) -> None:
        """``text`` as ``path``'s next version, its diagnostics owed."""
        assert self.client is not None
        version = self.versions[path] + 1
        self.versions[path] = version
        self.sent[path] = text
        self.awaiting[path] = version
        show_changed(self.client, _uri(self.pool.root, path), version, text)
        ask_pull(self, path, version)

    def repull(
        self, path: str, bound_s: float = 0.0, bound: str = "", *, answered: bool = False
    ) -> None:
        """Ask for ``path``'s diagnostics afresh, even if it publishes
        (file_checks), within ``bound_s`` (named ``bound``); ``answered``:
        only the answer settles it, not a publish meanwhile (asked after
        other files were shown other texts: a check begun before that can
        publish after the question)."""
        self.findings.result_ids.pop(path, None)
        self.awaiting[path] = self.versions[path]
        ask_pull(
            self,
            path,
            self.versions[path],
            force=True,
            bound_s=bound_s,
            bound=bound,
            answered=answered,
        )

    @property
    def answers_pulls(self) -> bool:
        """It answers textDocument/diagnostic (:func:`answers_pulls`)."""
        return answers_pulls(self.spec, self.capabilities, self.registrations, pulled=self.pull)

    def analysed(self, path: str) -> bool:
        """Its last answer for ``path`` came from an analysis (file_checks)."""
        return self.findings.analysed(path)

    def not_answered(self, path: str, version: int, reason: str) -> None:
        """The pull of ``path`` at ``version`` got no answer: the snapshot
        says the file is stale, and why (unless a newer version is owed)."""
        if self.versions.get(path) == version:
            self.unanswered[path] = reason
            self.awaiting.pop(path, None)
            self.note_activity()

    def give_up(self, path: str, version: int, reason: str) -> None:
        """Owed past its bound (:mod:`rein.disk.owed_publishes`): stale, and why."""
        if self.awaiting.get(path) == version:
            del self.awaiting[path]
            self.unanswered[path] = reason
            self.note_activity()

    def on_publish(self, params: dict[str, Any] | lsp.PublishDiagnosticsParams) -> None:
        """A publishDiagnostics, as its JSON (the pool's client skips
        structuring it) or as lsprotocol's object. One read after its
        process exited (a publish it wrote before it died) is dropped: the
        crash cleared what it had said, which is stale until it runs again."""
        if self.exited:
            return
        self.last_activity = time.monotonic()
        self._unasked.published()
        if isinstance(params, dict):
            uri, version = str(params.get("uri", "")), params.get("version")
            items = params.get("diagnostics") or []
        else:
            uri, version, items = params.uri, params.version, params.diagnostics
        path = self.pool.relative(uri)
        if path is None or self.pool.skipped(path) or self.spec.tsserver:
            self.pool.analyzer_active()
            return
        if self.file_by_file and path not in self.versions:
            # A closed file's last word (an empty publish, or an analysis
            # that finished after the close): not part of any snapshot.
            self.findings.dropped(path)
            self.pool.analyzer_active()
            return
        self._stops.published()  # it analyses (a closed file's last word above does not)
        self.findings.published(path, items, structured=not isinstance(params, dict))
        wanted = self.awaiting.get(path)
        if (
            wanted is not None
            and (version >= wanted if version is not None else not self.spec.versioned_publish)
            # A question about this version is out that only its answer
            # settles (file_checks asked it afresh). basedpyright checks in
            # the background, and a check begun before the question (an
            # importer's, before the file it imports was shown another
            # text) can publish after it.
            and not self.pulls.asking_at(path, self.versions.get(path))
        ):
            del self.awaiting[path]
        self.owed_refresh.discard(path)
        self.pool.analyzer_published(path)

    async def stop(self) -> None:
        self._stopping = True
        self._unasked.reset()
        client = self.client
        if client is None:
            return
        # Busy: a progress open, or not idle by its other signs (a change's
        # diagnostics owed; basedpyright just after answering a pull, which
        # ends its progress though its workspace analysis goes on).
        busy = bool(self.progress) or not self.idle(0.0, time.monotonic())
        await stop_client(self.spec.name, client, self.alive, busy=busy)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
        self.alive = False
