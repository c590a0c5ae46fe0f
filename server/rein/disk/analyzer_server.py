"""One analyzer language server, driven by the pool as its LSP client
(pygls's LanguageClient): start and initialize it, track its progress,
send didOpen/didChange, pull or receive its diagnostics, stop it. The
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

from rein.disk._lsp_diagnostics import diagnostic_from_json, diagnostic_from_lsp
from rein.disk.analyzer_handshake import (
    UnaskedSettings,
    configuration_answer,
    handshake,
    settings_for,
)
from rein.disk.analyzer_notices import Registrations, listen
from rein.disk.analyzer_pull import answers_pulls, ask_diagnostics
from rein.disk.analyzer_requests import AnalyzerTimeout, bounded
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzer_stop import stop_client
from rein.disk.owed_publishes import OwedFiles
from rein.harness.ports import Diagnostic
from rein.process.environment import child_environment

__all__ = ["ENVIRONMENT_GRACE_S", "AnalyzerOwner", "AnalyzerTimeout"]

log = logging.getLogger(__name__)

#: After a change of the file set (a file created or deleted), how long an
#: analyzer that watches files may stay silent before it is taken as having
#: nothing new to say (pyright waits 0.5 s for more library changes, then
#: republishes only what changed).
ENVIRONMENT_GRACE_S = 3.0
#: The same after an install: basedpyright rebuilds its program and resolves
#: every import again, which took over 3 s on a busy 2-core machine (the
#: verdict then still said the installed package could not be resolved).
INSTALL_GRACE_S = 15.0
#: Not idle this long after answering a pull it was asked though it publishes
#: (:mod:`rein.disk.file_checks`: the answer ends basedpyright's progress).
PULL_GRACE_S = 1.0
#: How often a stopped analysis is resumed (see
#: :meth:`_Analyzer.analysis_stopped`) with nothing published in between
#: before its open files are left stale (it stops again on the same error).
RESUMES_WITHOUT_PUBLISH = 2


def _uri(root: Path, rel: str) -> str:
    return (root / rel).as_uri()


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
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        #: path -> the JSON items of its last publish: an unchanged publish
        #: (basedpyright re-checking an importer) keeps the same Diagnostic
        #: objects, so the gate can skip files whose findings are the
        #: baseline's own objects.
        self._published_items: dict[str, list[Any]] = {}
        self.versions: dict[str, int] = {}
        #: path -> the text last sent (open files): a rename's edits are checked on it.
        self.sent: dict[str, str] = {}
        #: path -> the version whose diagnostics we still wait for
        self.awaiting = OwedFiles()
        self.restarts = 0
        self.alive = False
        self._stderr_task: asyncio.Task[None] | None = None
        #: The server answers textDocument/diagnostic (set after initialize).
        self.pull = False
        self._result_ids: dict[str, str] = {}
        self._pulls: set[asyncio.Task[None]] = set()
        #: path -> its latest pull: an earlier one's answer is not taken for
        #: it, nor its timeout (see _pull).
        self._latest_pull: dict[str, asyncio.Future[None]] = {}
        #: Paths whose latest pull was answered without an analysis (no
        #: result id from a server with a workspace mode), nothing since.
        self.answered_blind: set[str] = set()
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
        #: Open files it has not republished since an environment change,
        #: owed until ``refresh_until`` (it republishes only what changed).
        self.owed_refresh: set[str] = set()
        self.refresh_until = 0.0
        #: path -> why its diagnostics are missing (a request not answered
        #: within the bound), until it answers or publishes for it again.
        self.unanswered: dict[str, str] = {}
        #: Its files changed while it was not running (its findings of them are stale).
        self.changed_while_down: set[str] = set()
        self.hold_until = 0.0  #: not idle before this (PULL_GRACE_S)
        #: Its analysis stopped and was resumed this many times since it last published.
        self.resumed = 0
        #: The stop it said last, until it works again (said twice: a
        #: window/showMessage and a window/logMessage).
        self._stop_said: str | None = None

    def idle(self, quiet_s: float, now: float) -> bool:
        """Nothing open, nothing owed, and quiet for ``quiet_s`` (or its settle period)."""
        if not self.alive:
            return True
        if self.owed_refresh and now < self.refresh_until:
            return False
        quiet = now - self.last_activity >= max(quiet_s, self.spec.settle_s)
        return not self.progress and not self.awaiting and quiet and now >= self.hold_until

    def busy_until(self, quiet_s: float) -> float | None:
        """When it becomes idle if nothing else happens; None: not by time."""
        if self.progress or self.awaiting:
            return None
        quiet = max(self.last_activity + max(quiet_s, self.spec.settle_s), self.hold_until)
        return max(quiet, self.refresh_until) if self.owed_refresh else quiet

    def note_activity(self) -> None:
        self.last_activity = time.monotonic()
        self.pool.analyzer_active()

    def progress_begin(self, token: str) -> None:
        self._stop_said = None
        self.progress.add(token)
        self.note_activity()

    def progress_end(self, token: str) -> None:
        self.progress.discard(token)
        self.note_activity()
        self.last_progress_end_at = self.last_activity

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
        nothing published in between, the next stop leaves what it owes
        stale, saying why."""
        if message == self._stop_said or not self.alive or self.client is None:
            return
        self._stop_said = message
        why = f"{self.spec.name} stopped analysing: {message.splitlines()[0]}"
        if self.resumed >= RESUMES_WITHOUT_PUBLISH:
            log.warning("%s (again; its open files are stale)", why)
            for path, version in list(self.awaiting.items()):
                self._unanswered(path, version, why)
            return
        self.resumed += 1
        log.warning("%s; its settings sent again so it checks its open files afresh", why)
        self.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings=self.settings)
        )
        self.refresh()

    def owns(self, path: str) -> bool:
        return os.path.splitext(path)[1] in self.spec.extensions

    @property
    def file_by_file(self) -> bool:
        """The workspace is too large: every server analyses the open files
        only (the pool opens a change's files and their importers)."""
        return self.pool.large

    @property
    def pid(self) -> int | None:
        """The analyzer's process id, while its client has a process."""
        server = self.client._server if self.client is not None else None
        return server.pid if server is not None else None

    async def start(self) -> None:
        client = LanguageClient("rein-analyzer-pool", "0.1")
        # Kept as plain dicts: some servers send capabilities lsprotocol cannot
        # structure (ruff's notebook selector), and structuring thousands of
        # diagnostics with cattrs cost a large repository's verdict tens of
        # milliseconds per change (sympy).
        for raw in (lsp.InitializeResult, lsp.PublishDiagnosticsParams):
            client.protocol._converter.register_structure_hook(raw, lambda obj, _type: obj)
        self.client = client
        root = self.pool.root

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: Any) -> None:
            self.on_publish(params)

        @client.feature(lsp.WORKSPACE_CONFIGURATION)
        def on_configuration(params: lsp.ConfigurationParams) -> list[Any]:
            self._unasked.asked()
            return configuration_answer(self.settings, params)

        @client.feature(lsp.WORKSPACE_DIAGNOSTIC_REFRESH)
        def on_refresh(params: Any) -> None:
            # The server's view changed (e.g. a config file): every file
            # pulled again, owed until answered.
            for path, version in list(self.versions.items()):
                self.awaiting[path] = version
                self._schedule_pull(path, version)

        listen(client, self, self.spec.name)

        async def server_exit(server: Any) -> None:
            self.alive = False
            self._unasked.reset()
            if not self._stopping:
                await self.pool.analyzer_exited(self, server.returncode)

        client.server_exit = server_exit  # type: ignore[method-assign]
        self.progress.clear()
        self.registrations.clear()
        self.watches_files = False
        self.settings = settings_for(
            self.spec, self.pool.exclude_globs(), file_by_file=self.file_by_file
        )
        # Its own process group: a launcher's child (basedpyright-langserver
        # is a Python script running node) ends with it, see stop().
        await client.start_io(
            self.executable,
            *self.spec.command[1:],
            cwd=str(root),
            env=child_environment(),
            start_new_session=True,
        )
        server = client._server
        if server is not None and server.stderr is not None:
            self._stderr_task = asyncio.create_task(self._drain(server.stderr))
        self._unasked.reset()
        result = await handshake(client, self.spec, root, self.settings, self._bounded)
        self._unasked.expect(client, self.spec, self.settings)
        caps = result.get("capabilities")
        self.capabilities = caps = caps if isinstance(caps, dict) else {}
        info = result.get("serverInfo")
        if isinstance(info, dict) and info.get("version"):
            self.version = str(info["version"])
        self.pull = bool(self.spec.pull and caps.get("diagnosticProvider")) or self.spec.tsserver
        self.alive = True
        self.failure = None
        self.versions.clear()
        self.awaiting.clear()
        self.unanswered.clear()
        self.changed_while_down.clear()
        self.owed_refresh.clear()
        self.resumed = 0
        self._stop_said = None
        self.diagnostics.clear()
        self._published_items.clear()
        # A new server: the old one's result ids and questions are not its own.
        self._result_ids.clear()
        self._latest_pull.clear()
        self.answered_blind.clear()
        self.note_activity()
        # File by file, start opens nothing: what a change touches is opened
        # (with its importers) before the change; a restart reopens those.
        for path in self.pool.files_to_open(file_by_file=self.file_by_file):
            if self.owns(path):
                self.open(path)

    async def _bounded(
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
                self._schedule_pull(path, version)
        if not self.pull:
            self.owed_refresh = set(self.versions)
            self.refresh_until = time.monotonic() + grace_s
        self.note_activity()

    async def restart(self) -> None:
        """Stop the server and start it again (it reopens the pool's files)."""
        await self.stop()
        self._stopping = False
        self.client = None
        await self.start()

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while True:
            line = await stream.readline()
            if not line:
                return
            log.debug("%s stderr: %s", self.spec.name, line.decode(errors="replace").rstrip())

    def open(self, path: str) -> None:
        text = self.pool.read(path)
        if text is None or self.client is None:
            return
        self.versions[path] = 1
        self.sent[path] = text
        self.awaiting[path] = 1
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(
                    uri=_uri(self.pool.root, path),
                    language_id=self.spec.language_for(path),
                    version=1,
                    text=text,
                )
            )
        )
        self._schedule_pull(path, 1)

    def close(self, path: str) -> None:
        """Close an open file; its diagnostics are forgotten (a file-by-file
        analyzer publishes none for a closed file)."""
        if path not in self.versions:
            return
        self._forget(path)
        if self.client is not None and self.alive:
            self.client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(
                    lsp.TextDocumentIdentifier(uri=_uri(self.pool.root, path))
                )
            )

    def _forget(self, path: str) -> None:
        """All it holds of ``path`` (closed or deleted)."""
        self.versions.pop(path, None)
        self.sent.pop(path, None)
        self.awaiting.pop(path, None)
        self.unanswered.pop(path, None)
        self.answered_blind.discard(path)
        self.owed_refresh.discard(path)
        self.diagnostics.pop(path, None)
        self._published_items.pop(path, None)

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
            self._watched(uri, lsp.FileChangeType.Deleted)
            if path in self.versions:
                self.client.text_document_did_close(
                    lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
                )
            self._forget(path)  # its pull's timeout too (nothing else clears it)
            return
        if path not in self.versions:
            self.open(path)
            return
        version = self.versions[path] + 1
        self.versions[path] = version
        self.sent[path] = text
        self.awaiting[path] = version
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        self.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        self._schedule_pull(path, version)
        for other, at in list(self.versions.items()) if self.spec.tsserver else ():
            if other != path:  # asked again too: the change may break them
                self.awaiting[other] = at
                self._schedule_pull(other, at)

    def _watched(self, uri: str, kind: lsp.FileChangeType) -> None:
        if self.watches_files and self.client is not None:
            self.client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri, type=kind)])
            )

    def repull(self, path: str, bound_s: float = 0.0, bound: str = "") -> None:
        """Ask for ``path``'s diagnostics afresh, even if it publishes
        (file_checks), within ``bound_s`` (named ``bound``)."""
        self._result_ids.pop(path, None)
        self.awaiting[path] = self.versions[path]
        self._schedule_pull(path, self.versions[path], force=True, bound_s=bound_s, bound=bound)

    @property
    def answers_pulls(self) -> bool:
        """It answers textDocument/diagnostic (:func:`answers_pulls`)."""
        return answers_pulls(self.spec, self.capabilities, self.registrations, pulled=self.pull)

    def analysed(self, path: str) -> bool:
        """Its last answer for ``path`` came from an analysis (file_checks)."""
        return self.spec.diagnostic_mode_setting is None or path in self._result_ids

    def _schedule_pull(
        self, path: str, version: int, *, force: bool = False, bound_s: float = 0.0, bound: str = ""
    ) -> None:
        if not (self.pull or force) or self.client is None:
            return
        task = asyncio.ensure_future(self._pull(self.client, path, version, bound_s, bound))
        self._latest_pull[path] = task
        self._pulls.add(task)
        task.add_done_callback(self._pulls.discard)

    async def _pull(
        self, client: LanguageClient, path: str, version: int, bound_s: float, bound: str
    ) -> None:
        """Ask for the diagnostics of ``path`` at ``version`` (pull model).
        Only the file's latest question to the current server (``client``,
        the one asked) counts, and
        its timeout only while the file is still owed: an earlier question
        (asked again since), a server's from before a restart, or a
        question whose debt a publish settled meanwhile says nothing."""
        me = asyncio.current_task()

        def latest() -> bool:
            return self.client is client and self._latest_pull.get(path, me) is me

        report, failure = await ask_diagnostics(
            client,
            self.spec,
            self.pool.root,
            path,
            self._result_ids.get(path),
            lambda what, request: self._bounded(what, request, bound_s, bound),
            lambda: self.versions.get(path) == version,
        )
        if failure is not None:
            # Not owed any more (the wait would run to the settle bound
            # for nothing): the snapshot says this file is stale, and why.
            if latest() and path in self.awaiting:
                log.warning("%s", failure)
                self._unanswered(path, version, failure)
            return
        if self.versions.get(path) != version:
            return  # a newer version is already being pulled
        if not latest():
            # Asked again since (the file's version the same: another file
            # was shown another text meanwhile): this answer may predate it.
            return
        kind = getattr(report, "kind", None)
        result_id = getattr(report, "result_id", None)
        blind = not result_id and self.spec.diagnostic_mode_setting is not None
        if blind and path not in self.awaiting:
            return  # not analysed, and a publish settled it meanwhile: that stands
        if result_id:
            self._result_ids[path] = result_id
        if blind:
            self.answered_blind.add(path)
        else:
            self.answered_blind.discard(path)
        self.unanswered.pop(path, None)
        if kind != "unchanged":
            items = getattr(report, "items", None) or []
            self.diagnostics[path] = [diagnostic_from_lsp(path, d, self.spec.name) for d in items]
        wanted = self.awaiting.get(path)
        if wanted is not None and wanted <= version:
            del self.awaiting[path]
        self.last_activity = time.monotonic()
        if not self.pull:  # asked though it publishes: see PULL_GRACE_S
            self.hold_until = self.last_activity + PULL_GRACE_S
        self.pool.analyzer_published(path)

    def _unanswered(self, path: str, version: int, reason: str) -> None:
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
        structuring it) or as lsprotocol's object."""
        self.last_activity = time.monotonic()
        self._unasked.published()
        if isinstance(params, dict):
            uri, version = str(params.get("uri", "")), params.get("version")
            items = params.get("diagnostics") or []
            convert = diagnostic_from_json
        else:
            uri, version, items = params.uri, params.version, params.diagnostics
            convert = diagnostic_from_lsp  # type: ignore[assignment]
        path = self.pool.relative(uri)
        if path is None or self.pool.skipped(path) or self.spec.tsserver:
            self.pool.analyzer_active()
            return
        if self.file_by_file and path not in self.versions:
            # A closed file's last word (an empty publish, or an analysis
            # that finished after the close): not part of any snapshot.
            self.diagnostics.pop(path, None)
            self._published_items.pop(path, None)
            self.pool.analyzer_active()
            return
        self.resumed = 0  # it analyses (a closed file's last word above does not say so)
        self._stop_said = None
        if not isinstance(params, dict):
            self.diagnostics[path] = [convert(path, d, self.spec.name) for d in items]
        elif items != self._published_items.get(path) or path not in self.diagnostics:
            self.diagnostics[path] = [convert(path, d, self.spec.name) for d in items]
            self._published_items[path] = items
        self.unanswered.pop(path, None)
        self.answered_blind.discard(path)
        wanted = self.awaiting.get(path)
        if wanted is not None and (
            version >= wanted if version is not None else not self.spec.versioned_publish
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
