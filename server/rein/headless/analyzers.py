"""The analyzer pool: real analyzer language servers standing in for the
editor's diagnostics when Rein runs headless.

Each analyzer (by default ``ruff server`` and ``basedpyright-langserver
--stdio`` when installed) is started as an LSP server with pygls's
LanguageClient. The pool opens the workspace's relevant files, sends
didOpen/didChange for every mutation, collects publishDiagnostics, and tells
the :class:`~rein.harness.coordinators.DiagnosticsCoordinator` when every
analyzer that owns a file has published for it since its last change. A
crashed analyzer is restarted once, and that is reported.

Settled means the analyzer says it is done: the pool tracks LSP work-done
progress (``$/progress`` begin/end) and pyright's own ``pyright/beginProgress``
and ``pyright/endProgress`` per analyzer. An analyzer is idle when no
progress is open, nothing is owed for a change sent to it, and a quiet
period passed since its last progress end or publish (:meth:`AnalyzerPool.wait_idle`).
basedpyright runs in ``diagnosticMode: workspace``, so it publishes for files
nobody opened; touched files are opened (:meth:`AnalyzerPool.ensure_open`).
In a workspace over ``workspace_max_files`` it checks open files only, and
``ensure_open`` opens a changed file's importers with it
(:mod:`rein.headless.importers`).
What the workspace filter skips (:mod:`rein.tools.ignore`: virtual
environments, build output, ignored paths) is neither opened nor analysed,
and diagnostics published for it are dropped.

The pool's own :meth:`AnalyzerPool.snapshot` answers at once with what the
analyzers last published; the coordinator wraps it to wait for freshness.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, Mutation
from rein.headless.importers import ImportIndex
from rein.process.environment import child_environment
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "DEFAULT_ANALYZERS",
    "AnalyzerPool",
    "AnalyzerSpec",
    "AnalyzerTimeout",
    "find_executable",
]

log = logging.getLogger(__name__)

#: The progress key of pyright's own notifications (one bar at a time).
_PYRIGHT_PROGRESS = "pyright"
#: After an environment change, how long an analyzer that watches files may
#: stay silent before it is taken as having nothing new to say (pyright waits
#: 0.5 s for more library changes, then republishes only what changed).
ENVIRONMENT_GRACE_S = 3.0


@dataclass(frozen=True, slots=True)
class AnalyzerSpec:
    name: str
    command: tuple[str, ...]
    extensions: frozenset[str]
    language_id: str = "python"
    settings: dict[str, Any] = field(default_factory=dict)
    #: Ask for pull diagnostics (textDocument/diagnostic) when the server
    #: offers them; otherwise rely on publishDiagnostics.
    pull: bool = True
    #: Declare window.workDoneProgress: the server reports its progress with
    #: ``$/progress`` instead of its own notifications (pyright's).
    work_done_progress: bool = False
    #: Every publish for an open document carries its version: one without
    #: (basedpyright's workspace pass over files it enumerated, sent before
    #: it knows the document is open) does not answer a change.
    versioned_publish: bool = False
    #: The settings key of the server's ``exclude`` list (dotted), filled with
    #: the workspace filter's folders; None: the server has none.
    exclude_setting: str | None = None
    #: The settings key (dotted) choosing between the server's own workspace
    #: analysis ("workspace") and open files only ("openFilesOnly"); None: it
    #: analyses what is open. In a workspace over the pool's
    #: ``workspace_max_files`` it is set to "openFilesOnly", and the pool
    #: opens the files a change touches and their importers instead.
    diagnostic_mode_setting: str | None = None


DEFAULT_ANALYZERS: tuple[AnalyzerSpec, ...] = (
    AnalyzerSpec("ruff", ("ruff", "server"), frozenset({".py", ".pyi"})),
    AnalyzerSpec(
        "basedpyright",
        ("basedpyright-langserver", "--stdio"),
        frozenset({".py", ".pyi"}),
        settings={
            "basedpyright": {
                "analysis": {"typeCheckingMode": "standard", "diagnosticMode": "workspace"}
            }
        },
        versioned_publish=True,
        exclude_setting="basedpyright.analysis.exclude",
        diagnostic_mode_setting="basedpyright.analysis.diagnosticMode",
    ),
)


def find_executable(name: str) -> str | None:
    """PATH first, then next to this interpreter (a venv's bin/)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else None


def _uri(root: Path, rel: str) -> str:
    return (root / rel).as_uri()


def _with_setting(settings: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """A copy of ``settings`` with ``value`` at the dotted key."""
    out = dict(settings)
    node = out
    *parents, last = dotted.split(".")
    for part in parents:
        child = node.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        node[part] = child
        node = child
    node[last] = value
    return out


def _drop_late(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled() and answer.exception() is not None:
        log.debug("a late analyzer answer: %s", answer.exception())


class AnalyzerTimeout(Exception):
    """An analyzer did not answer a request within
    ``gates.analyzer.requestTimeoutMs``."""

    def __init__(self, name: str, what: str, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            f"{name} did not answer {what} within {seconds:g} s (gates.analyzer.requestTimeoutMs)"
        )


class _Analyzer:
    """One analyzer server and what it last published."""

    def __init__(self, spec: AnalyzerSpec, executable: str, pool: AnalyzerPool) -> None:
        self.spec = spec
        self.executable = executable
        self.pool = pool
        self.client: LanguageClient | None = None
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        self.versions: dict[str, int] = {}
        #: path -> the version whose diagnostics we still wait for
        self.awaiting: dict[str, int] = {}
        self.restarts = 0
        self.alive = False
        self._stderr_task: asyncio.Task[None] | None = None
        #: The server answers textDocument/diagnostic (set after initialize).
        self.pull = False
        self._result_ids: dict[str, str] = {}
        self._pulls: set[asyncio.Task[None]] = set()
        self._stopping = False
        #: Open progress: work-done tokens, and "pyright" for its notifications.
        self.progress: set[str] = set()
        #: When its last progress ended (monotonic), for the gate benchmark.
        self.last_progress_end_at: float | None = None
        #: When it last ended a progress or published (monotonic seconds).
        self.last_activity = time.monotonic()
        #: It registered workspace/didChangeWatchedFiles (client/registerCapability).
        self.watches_files = False
        #: The server's name and version from its initialize result.
        self.version: str | None = None
        #: Why it is not running (failed to start, exited twice), for reports.
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

    def idle(self, quiet_s: float, now: float) -> bool:
        """Nothing open, nothing owed, and quiet for ``quiet_s``."""
        if not self.alive:
            return True
        if self.owed_refresh and now < self.refresh_until:
            return False
        return not self.progress and not self.awaiting and now - self.last_activity >= quiet_s

    def busy_until(self, quiet_s: float) -> float | None:
        """When it becomes idle if nothing else happens; None: not by time."""
        if self.progress or self.awaiting:
            return None
        quiet = self.last_activity + quiet_s
        return max(quiet, self.refresh_until) if self.owed_refresh else quiet

    def _activity(self) -> None:
        self.last_activity = time.monotonic()
        self.pool._activity()

    def progress_begin(self, token: str) -> None:
        self.progress.add(token)
        self._activity()

    def progress_end(self, token: str) -> None:
        self.progress.discard(token)
        self._activity()
        self.last_progress_end_at = self.last_activity

    def owns(self, path: str) -> bool:
        return os.path.splitext(path)[1] in self.spec.extensions

    @property
    def file_by_file(self) -> bool:
        """It would analyse the whole workspace, but the workspace is too
        large: it analyses the open files only (the pool opens importers)."""
        return self.pool.large and self.spec.diagnostic_mode_setting is not None

    async def start(self) -> None:
        client = LanguageClient("rein-analyzer-pool", "0.1")
        # We only need the analyzer's diagnostics, not its capabilities; some
        # servers send capabilities lsprotocol cannot structure (ruff's
        # notebook selector), so keep the initialize result as a plain dict.
        client.protocol._converter.register_structure_hook(
            lsp.InitializeResult, lambda obj, _type: obj
        )
        # A publish is read straight from its JSON (a dict): structuring
        # thousands of diagnostics with cattrs cost a large repository's
        # verdict tens of milliseconds per change (sympy).
        client.protocol._converter.register_structure_hook(
            lsp.PublishDiagnosticsParams, lambda obj, _type: obj
        )
        self.client = client
        root = self.pool.root

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: Any) -> None:
            self.on_publish(params)

        @client.feature(lsp.WORKSPACE_CONFIGURATION)
        def on_configuration(params: lsp.ConfigurationParams) -> list[Any]:
            out: list[Any] = []
            for item in params.items:
                section = item.section or ""
                value: Any = self.settings
                for part in section.split(".") if section else []:
                    value = value.get(part, {}) if isinstance(value, dict) else {}
                out.append(value)
            return out

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_progress_create(params: Any) -> None:
            # Open from here: its begin follows our answer, and publishes
            # made before that must not look like the end of the work.
            self.progress_begin(f"token:{getattr(params, 'token', '')}")

        @client.feature(lsp.PROGRESS)
        def on_progress(params: Any) -> None:
            token = str(getattr(params, "token", ""))
            value = getattr(params, "value", None)
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            if kind == "begin":
                self.progress_begin(f"token:{token}")
            elif kind == "end":
                self.progress_end(f"token:{token}")
            else:
                self._activity()

        @client.feature("pyright/beginProgress")
        def on_pyright_begin(params: Any) -> None:
            self.progress_begin(_PYRIGHT_PROGRESS)

        @client.feature("pyright/reportProgress")
        def on_pyright_report(params: Any) -> None:
            self._activity()

        @client.feature("pyright/endProgress")
        def on_pyright_end(params: Any) -> None:
            self.progress_end(_PYRIGHT_PROGRESS)

        @client.feature(lsp.WORKSPACE_DIAGNOSTIC_REFRESH)
        def on_refresh(params: Any) -> None:
            # The server's view changed (e.g. a config file): pull every file again.
            for path, version in list(self.versions.items()):
                self._schedule_pull(path, version)

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: Any) -> None:
            for registration in getattr(params, "registrations", None) or []:
                if registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                    self.watches_files = True

        @client.feature(lsp.CLIENT_UNREGISTER_CAPABILITY)
        def on_unregister(params: Any) -> None:
            for registration in getattr(params, "unregisterations", None) or []:
                if registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                    self.watches_files = False

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def on_show(params: lsp.ShowMessageParams) -> None:
            log.debug("%s: %s", self.spec.name, params.message)

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def on_log(params: lsp.LogMessageParams) -> None:
            log.debug("%s: %s", self.spec.name, params.message)

        async def server_exit(server: Any) -> None:
            self.alive = False
            if not self._stopping:
                await self.pool._crashed(self, server.returncode)

        client.server_exit = server_exit  # type: ignore[method-assign]
        self.progress.clear()
        self.watches_files = False
        self.settings = self.spec.settings
        if self.spec.exclude_setting:
            self.settings = _with_setting(
                self.spec.settings, self.spec.exclude_setting, self.pool.exclude_globs()
            )
        if self.file_by_file and self.spec.diagnostic_mode_setting:
            self.settings = _with_setting(
                self.settings, self.spec.diagnostic_mode_setting, "openFilesOnly"
            )
        await client.start_io(
            self.executable, *self.spec.command[1:], cwd=str(root), env=child_environment()
        )
        server = client._server
        if server is not None and server.stderr is not None:
            self._stderr_task = asyncio.create_task(self._drain(server.stderr))
        result: Any = await self._bounded(
            "initialize",
            client.initialize_async(
                lsp.InitializeParams(
                    process_id=os.getpid(),
                    root_uri=root.as_uri(),
                    workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                    capabilities=lsp.ClientCapabilities(
                        workspace=lsp.WorkspaceClientCapabilities(
                            configuration=True,
                            workspace_folders=True,
                            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(
                                dynamic_registration=True
                            ),
                        ),
                        window=lsp.WindowClientCapabilities(
                            work_done_progress=self.spec.work_done_progress
                        ),
                        text_document=lsp.TextDocumentClientCapabilities(
                            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
                            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                                version_support=True, related_information=False
                            ),
                            diagnostic=lsp.DiagnosticClientCapabilities(
                                related_document_support=False
                            )
                            if self.spec.pull
                            else None,
                        ),
                    ),
                    initialization_options={"settings": self.settings} if self.settings else None,
                )
            ),
        )
        caps = result.get("capabilities", {}) if isinstance(result, dict) else {}
        info = result.get("serverInfo") if isinstance(result, dict) else None
        if isinstance(info, dict) and info.get("version"):
            self.version = str(info["version"])
        self.pull = bool(self.spec.pull and caps.get("diagnosticProvider"))
        client.initialized(lsp.InitializedParams())
        if self.settings:
            client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=self.settings)
            )
        self.alive = True
        self.failure = None
        self.versions.clear()
        self.awaiting.clear()
        self.unanswered.clear()
        self.owed_refresh.clear()
        self.diagnostics.clear()
        self._activity()
        # File by file, start opens nothing: what a change touches is opened
        # (with its importers) before the change; a restart reopens those.
        for path in self.pool.requested if self.file_by_file else self.pool.files:
            if self.owns(path):
                self.open(path)

    async def _bounded(self, what: str, request: Awaitable[Any]) -> Any:
        """Await ``request``, at most the pool's request bound; past it
        :class:`AnalyzerTimeout`."""
        seconds = self.pool.request_timeout_s
        # Shielded: a late answer completes the request instead of meeting a
        # cancelled future (pygls logs that as an error); it is dropped.
        answer = asyncio.ensure_future(request)
        answer.add_done_callback(_drop_late)
        try:
            return await asyncio.wait_for(asyncio.shield(answer), seconds)
        except TimeoutError:
            raise AnalyzerTimeout(self.spec.name, what, seconds) from None

    def refresh(self) -> None:
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
            self.refresh_until = time.monotonic() + ENVIRONMENT_GRACE_S
        self._activity()

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
        self.awaiting[path] = 1
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(
                    uri=_uri(self.pool.root, path),
                    language_id=self.spec.language_id,
                    version=1,
                    text=text,
                )
            )
        )
        self._schedule_pull(path, 1)

    def change(self, path: str, text: str | None = None) -> None:
        """Send the file's content (or ``text``, shown instead of it)."""
        if not self.alive or self.client is None or not self.owns(path):
            return
        text = self.pool.read(path) if text is None else text
        uri = _uri(self.pool.root, path)
        if text is None:
            if path in self.versions:
                del self.versions[path]
                self.awaiting.pop(path, None)
                self.client.text_document_did_close(
                    lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
                )
            # A server that lets us watch files for it (basedpyright in
            # workspace mode) learns of a deleted file only from us.
            self._watched(uri, lsp.FileChangeType.Deleted)
            self.diagnostics.pop(path, None)
            return
        if path not in self.versions:
            self.open(path)
            return
        version = self.versions[path] + 1
        self.versions[path] = version
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

    def _watched(self, uri: str, kind: lsp.FileChangeType) -> None:
        if self.watches_files and self.client is not None:
            self.client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri, type=kind)])
            )

    def _schedule_pull(self, path: str, version: int) -> None:
        if not self.pull:
            return
        task = asyncio.ensure_future(self._pull(path, version))
        self._pulls.add(task)
        task.add_done_callback(self._pulls.discard)

    async def _pull(self, path: str, version: int) -> None:
        """Ask for the diagnostics of ``path`` at ``version`` (pull model)."""
        client = self.client
        if client is None:
            return
        uri = _uri(self.pool.root, path)
        for _attempt in range(3):
            try:
                report: Any = await self._bounded(
                    f"the diagnostics of {path}",
                    client.text_document_diagnostic_async(
                        lsp.DocumentDiagnosticParams(
                            text_document=lsp.TextDocumentIdentifier(uri=uri),
                            previous_result_id=self._result_ids.get(path),
                        )
                    ),
                )
                break
            except AnalyzerTimeout as exc:
                # Not owed any more (the wait would run to the settle bound
                # for nothing): the snapshot says this file is stale, and why.
                log.warning("%s", exc)
                if self.versions.get(path) == version:
                    self.unanswered[path] = str(exc)
                    self.awaiting.pop(path, None)
                    self._activity()
                return
            except Exception as exc:  # ServerCancelled: the server asks to retry
                log.debug("%s: pull diagnostics for %s failed: %s", self.spec.name, path, exc)
                await asyncio.sleep(0.05)
        else:
            return
        if self.versions.get(path) != version:
            return  # a newer version is already being pulled
        kind = getattr(report, "kind", None)
        result_id = getattr(report, "result_id", None)
        if result_id:
            self._result_ids[path] = result_id
        self.unanswered.pop(path, None)
        if kind != "unchanged":
            items = getattr(report, "items", None) or []
            self.diagnostics[path] = [self.pool.convert(path, d, self.spec.name) for d in items]
        wanted = self.awaiting.get(path)
        if wanted is not None and wanted <= version:
            del self.awaiting[path]
        self.last_activity = time.monotonic()
        self.pool._published(self, path)

    def on_publish(self, params: dict[str, Any] | lsp.PublishDiagnosticsParams) -> None:
        """A publishDiagnostics, as its JSON (the pool's client skips
        structuring it) or as lsprotocol's object."""
        self.last_activity = time.monotonic()
        if isinstance(params, dict):
            uri, version = str(params.get("uri", "")), params.get("version")
            items = params.get("diagnostics") or []
            convert = self.pool.convert_json
        else:
            uri, version, items = params.uri, params.version, params.diagnostics
            convert = self.pool.convert  # type: ignore[assignment]
        path = self.pool.relative(uri)
        if path is None or self.pool.skipped(path):
            self.pool._activity()
            return
        self.diagnostics[path] = [convert(path, d, self.spec.name) for d in items]
        self.unanswered.pop(path, None)
        wanted = self.awaiting.get(path)
        if wanted is not None and (
            version >= wanted if version is not None else not self.spec.versioned_publish
        ):
            del self.awaiting[path]
        self.owed_refresh.discard(path)
        self.pool._published(self, path)

    async def stop(self) -> None:
        self._stopping = True
        client = self.client
        if client is None:
            return
        try:
            if self.alive:
                with anyio_fail_after(3):
                    await client.shutdown_async(None)
                client.exit(None)
        except Exception:
            log.debug("%s did not shut down cleanly", self.spec.name, exc_info=True)
        server = client._server
        if server is not None and server.returncode is None:
            try:
                await asyncio.wait_for(server.wait(), 3)
            except TimeoutError:
                server.kill()
        try:
            await asyncio.wait_for(client.stop(), 3)
        except (TimeoutError, Exception):
            log.debug("%s client stop", self.spec.name, exc_info=True)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
        self.alive = False


def anyio_fail_after(seconds: float) -> Any:
    import anyio

    return anyio.fail_after(seconds)


class AnalyzerPool:
    """Analyzers for one workspace root; a raw DiagnosticsSource."""

    def __init__(
        self,
        root: str | Path,
        specs: Sequence[AnalyzerSpec] = DEFAULT_ANALYZERS,
        *,
        on_diagnostics_changed: Callable[[list[str]], None] | None = None,
        on_report: Callable[[str], None] | None = None,
        max_files: int = 500,
        quiet_ms: int = 150,
        workspace_max_files: int = 1_000,
        max_importers: int = 30,
        request_timeout_ms: int = 10_000,
        read: Callable[[str], str | None] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        #: Asked for a file's text before the disk (``rein acp``: the text
        #: the client showed or was given, its unsaved buffer); None: the
        #: disk only.
        self.read_first = read
        #: Bound on one answer of an analyzer (initialize, a diagnostics
        #: pull): ``gates.analyzer.requestTimeoutMs``.
        self.request_timeout_s = request_timeout_ms / 1000
        self.specs = list(specs)
        self.on_diagnostics_changed = on_diagnostics_changed
        self.on_report = on_report or (lambda message: log.warning("%s", message))
        #: How many files start-up opens (for speed: basedpyright covers the
        #: rest in workspace mode, ruff's findings never cross files, and
        #: :meth:`ensure_open` opens every touched file).
        self.max_files = max_files
        #: Above this many files the workspace is "large": analyzers with a
        #: diagnostic mode analyse the open files only (see AnalyzerSpec).
        self.workspace_max_files = workspace_max_files
        #: How many importers of a file are opened with it in a large workspace.
        self.max_importers = max_importers
        self.large = False
        #: Files opened on request (ensure_open, changes), in order: what a
        #: file-by-file analyzer reopens after a restart.
        self.requested: list[str] = []
        self.imports: ImportIndex | None = None
        #: The quiet period after an analyzer's last progress end or publish.
        self.quiet_s = quiet_ms / 1000
        self.analyzers: list[_Analyzer] = []
        #: Analyzers that could not run (not found, failed to start, crashed
        #: twice), as "name: reason".
        self.failed: list[str] = []
        self.filter = WorkspaceFilter(self.root)
        self.files: list[str] = []
        self.generation = 0
        self.last_publish_at: dict[str, float] = {}
        self.missing: list[str] = []
        self._publish_event = asyncio.Event()
        self._activity_event = asyncio.Event()

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        found = self._scan()
        self.large = len(found) > self.workspace_max_files
        self.imports = ImportIndex(found, self.read) if self.large else None
        self.files = found[: self.max_files]
        for spec in self.specs:
            executable = find_executable(spec.command[0])
            if executable is None:
                self.missing.append(spec.name)
                continue
            analyzer = _Analyzer(spec, executable, self)
            try:
                await analyzer.start()
            except Exception as exc:
                self.on_report(f"analyzer {spec.name} failed to start: {exc}")
                self.failed.append(f"{spec.name} failed to start: {exc}")
                await analyzer.stop()
                continue
            self.analyzers.append(analyzer)

    async def stop(self) -> None:
        for analyzer in self.analyzers:
            await analyzer.stop()

    async def __aenter__(self) -> AnalyzerPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _crashed(self, analyzer: _Analyzer, returncode: int | None) -> None:
        if analyzer.restarts >= 1:
            self.on_report(
                f"analyzer {analyzer.spec.name} exited again (code {returncode}); it stays off"
            )
            analyzer.failure = f"{analyzer.spec.name} exited twice (code {returncode})"
            analyzer.awaiting.clear()
            analyzer.progress.clear()
            analyzer.diagnostics.clear()
            self._activity()
            return
        analyzer.restarts += 1
        self.on_report(
            f"analyzer {analyzer.spec.name} exited (code {returncode}); restarting it once"
        )
        try:
            await analyzer.start()
        except Exception as exc:
            self.on_report(f"analyzer {analyzer.spec.name} could not be restarted: {exc}")
            analyzer.failure = f"{analyzer.spec.name} could not be restarted: {exc}"
            await analyzer.stop()
            self._activity()

    # ----------------------------------------------------------------- files

    def _scan(self) -> list[str]:
        """Every file the workspace filter keeps (hidden folders left out
        too), in path order; start-up opens the first ``max_files``."""
        extensions = {e for s in self.specs for e in s.extensions}
        self.filter = WorkspaceFilter(self.root)
        found = [
            path
            for path in self.filter.walk_files(extensions)
            if not any(part.startswith(".") for part in path.split("/")[:-1])
        ]
        return found

    def skipped(self, path: str) -> bool:
        """The workspace filter skips it: not analysed, its diagnostics dropped."""
        return self.filter.skipped(path)

    def exclude_globs(self) -> list[str]:
        return self.filter.exclude_globs()

    def read(self, path: str) -> str | None:
        """The text the analyzers are shown for ``path``: the ``read`` hook's
        when it knows one, else the disk's; None when there is none."""
        if self.read_first is not None:
            text = self.read_first(path)
            if text is not None:
                return text
        try:
            return (self.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def relative(self, uri: str) -> str | None:
        from urllib.parse import unquote, urlparse

        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        try:
            return Path(unquote(parsed.path)).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    @staticmethod
    def convert_json(path: str, d: dict[str, Any], source: str) -> Diagnostic:
        """A diagnostic as the analyzer sent it (JSON) -> Rein's."""
        start = d["range"]["start"]
        end = d["range"]["end"]
        code = d.get("code")
        severity = d.get("severity")
        return Diagnostic(
            path=path,
            line=start["line"],
            character=start["character"],
            end_line=end["line"],
            end_character=end["character"],
            severity=int(severity) if severity is not None else 1,
            code=str(code) if code is not None else None,
            source=d.get("source") or source,
            message=d.get("message", ""),
        )

    @staticmethod
    def convert(path: str, d: lsp.Diagnostic, source: str) -> Diagnostic:
        code = d.code
        return Diagnostic(
            path=path,
            line=d.range.start.line,
            character=d.range.start.character,
            end_line=d.range.end.line,
            end_character=d.range.end.character,
            severity=int(d.severity) if d.severity is not None else 1,
            code=str(code) if code is not None else None,
            source=d.source or source,
            message=d.message,
        )

    # ------------------------------------------------------------- mutations

    def refresh(self, paths: Sequence[str]) -> None:
        """Show the analyzers the text of ``paths`` again (:meth:`read`),
        without a new generation: a text learnt other than by a change (the
        ACP client's unsaved buffer, read by the model)."""
        for path in paths:
            if self.skipped(path):
                continue
            if path not in self.requested:
                self.requested.append(path)
            for analyzer in self.analyzers:
                if analyzer.alive and analyzer.owns(path):
                    analyzer.change(path)

    def on_mutation(self, mutation: Mutation) -> None:
        """Send the change to every analyzer that owns the file."""
        self.generation = max(self.generation, mutation.generation)
        unowned: list[str] = []
        for path in mutation.paths:
            if self.skipped(path):
                unowned.append(path)
                continue
            if path not in self.files and self.read(path) is not None:
                self.files.append(path)
            if path not in self.requested:
                self.requested.append(path)
            if self.imports is not None:
                self.imports.update(path)
            owners = [a for a in self.analyzers if a.alive and a.owns(path)]
            for analyzer in owners:
                analyzer.change(path)
            if not owners:
                unowned.append(path)
        if unowned and self.on_diagnostics_changed is not None:
            # Nobody analyses these files: their (empty) diagnostics are fresh now.
            self.on_diagnostics_changed(unowned)

    def _activity(self) -> None:
        """Something changed that may make the pool idle (or busy)."""
        self._activity_event.set()
        self._activity_event = asyncio.Event()

    def _published(self, analyzer: _Analyzer, path: str) -> None:
        self.last_publish_at[path] = time.monotonic()
        self._publish_event.set()
        self._publish_event = asyncio.Event()
        self._activity()
        if any(path in a.awaiting for a in self.analyzers if a.alive):
            return  # another analyzer still owes diagnostics for this change
        if self.on_diagnostics_changed is not None:
            self.on_diagnostics_changed([path])

    def pending(self) -> list[str]:
        return sorted({p for a in self.analyzers if a.alive for p in a.awaiting})

    # ----------------------------------------------------------- the source

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        wanted = set(paths) if paths is not None else None
        out: list[Diagnostic] = []
        for analyzer in self.analyzers:
            for path, diagnostics in analyzer.diagnostics.items():
                if wanted is None or path in wanted:
                    out.extend(diagnostics)
        out.sort(key=lambda d: (d.path, d.line, d.character, d.source or ""))
        blind = self.blind()
        missing = None if blind is not None else self.missing_diagnostics(wanted)
        return DiagnosticsSnapshot(
            tuple(out),
            max(self.generation, min_generation),
            stale=missing is not None,
            blind=blind,
            sources=tuple(a.spec.name for a in self.analyzers if a.alive),
            stale_reason=missing,
        )

    def missing_diagnostics(self, wanted: set[str] | None = None) -> str | None:
        """Why some diagnostics are missing while others are there: an
        analyzer that is dead (crashed twice, could not restart) or
        restarting leaves every later snapshot stale; one that did not
        answer for a file within the bound leaves that file's stale. None
        when nothing is missing."""
        reasons: list[str] = []
        for a in self.analyzers:
            if a.alive:
                late = sorted(p for p in a.unanswered if wanted is None or p in wanted)
                reasons += [a.unanswered[p] for p in late]
            elif a.failure is not None:
                reasons.append(f"{a.spec.name} is not running ({a.failure})")
            else:
                reasons.append(f"{a.spec.name} is restarting")
        if not reasons:
            return None
        return "diagnostics are missing: " + "; ".join(reasons)

    def blind(self) -> str | None:
        """Why no analyzer looks, or None while one runs."""
        if any(a.alive for a in self.analyzers):
            return None
        reasons = [*(f"{name} was not found" for name in self.missing), *self.failed]
        reasons += [a.failure for a in self.analyzers if a.failure]
        if not self.specs:
            return "no analyzer is configured"
        if not reasons:
            return "no analyzer is running"
        return f"no analyzer is running ({'; '.join(reasons)})"

    def describe(self) -> str:
        """One line for the terminal: which analyzers run, and their versions."""
        running = [
            f"{a.spec.name} {a.version}" if a.version else a.spec.name
            for a in self.analyzers
            if a.alive
        ]
        if running:
            absent = [
                *(f"{name} was not found" for name in self.missing),
                *self.failed,
                *(a.failure for a in self.analyzers if a.failure),
            ]
            return ", ".join(running) + (f" ({'; '.join(absent)})" if absent else "")
        reason = self.blind() or "none"
        return f"none ({reason}; the analyzer gate is unverified)"

    # ------------------------------------------------------------- settling

    def idle(self) -> bool:
        now = time.monotonic()
        return all(a.idle(self.quiet_s, now) for a in self.analyzers)

    async def wait_idle(self, timeout_s: float) -> bool:
        """Wait until every analyzer is idle: no progress open, nothing owed
        for a change sent to it, and the quiet period passed after its last
        progress end or publish. False on timeout."""
        deadline = time.monotonic() + timeout_s
        while True:
            now = time.monotonic()
            if self.idle():
                return True
            left = deadline - now
            if left <= 0:
                return False
            wake = [
                t
                for a in self.analyzers
                if a.alive and not a.idle(self.quiet_s, now)
                for t in [a.busy_until(self.quiet_s)]
                if t is not None
            ]
            timer = min([left, *(max(t - now, 0.0) for t in wake)])
            event = self._activity_event
            try:
                await asyncio.wait_for(event.wait(), timer)
            except TimeoutError:
                pass

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> list[str]:
        """Open these files in every analyzer that owns them (not waiting);
        paths that do not exist, are skipped or owned by nobody are ignored.
        In a large workspace (``importers``) the files that import them are
        opened too in the analyzers that check file by file. Returns the
        paths some analyzer opened now."""
        opened: list[str] = []
        for path in paths:
            if self.skipped(path) or self.read(path) is None:
                continue
            targets = [path]
            if importers and self.imports is not None:
                targets += self.imports.importers(path, self.max_importers)
            for target in targets:
                if target not in self.files:
                    self.files.append(target)
                if target not in self.requested:
                    self.requested.append(target)
                for analyzer in self.analyzers:
                    if not (analyzer.alive and analyzer.owns(target)):
                        continue
                    if target != path and not analyzer.file_by_file:
                        continue
                    if target not in analyzer.versions:
                        analyzer.open(target)
                        if target not in opened:
                            opened.append(target)
        return opened

    async def environment_changed(self, paths: Sequence[str]) -> None:
        """Tell the analyzers the environment changed under them: a
        didChangeWatchedFiles for ``paths`` (manifests, site-packages) to
        those that watch files, a restart for the others. Each owes a fresh
        publish for its open files afterwards, so :meth:`wait_idle` waits."""
        # A folder (site-packages) gained or lost packages: a structural
        # change; a file (a manifest, a lock file) changed in place.
        changes = [
            lsp.FileEvent(
                uri=(self.root / p).as_uri(),
                type=lsp.FileChangeType.Created
                if (self.root / p).is_dir()
                else lsp.FileChangeType.Changed,
            )
            for p in paths
        ]
        for analyzer in list(self.analyzers):
            if not analyzer.alive or analyzer.client is None:
                continue
            if analyzer.watches_files:
                analyzer.client.workspace_did_change_watched_files(
                    lsp.DidChangeWatchedFilesParams(changes=changes)
                )
                analyzer.refresh()
            else:
                await analyzer.restart()

    async def snapshot_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot | None:
        """Show the analyzers ``texts`` instead of those files' contents
        (in memory: nothing is written), snapshot ``paths`` once they are
        idle, then show the real contents again and wait for that too."""
        shown = [p for p in texts if not self.skipped(p)]
        try:
            for path in shown:
                for analyzer in self.analyzers:
                    if analyzer.alive and analyzer.owns(path):
                        analyzer.change(path, texts[path])
            if not await self.wait_idle(timeout_s):
                return None
            return await self.snapshot(paths)
        finally:
            for path in shown:
                for analyzer in self.analyzers:
                    if analyzer.alive and analyzer.owns(path):
                        analyzer.change(path)
            await self.wait_idle(timeout_s)

    async def wait_published(self, timeout_s: float = 30.0) -> bool:
        """Wait until every analyzer published for every file it was sent
        (the old settle rule; :meth:`wait_idle` also waits for their
        progress to end). Returns False on timeout."""
        deadline = time.monotonic() + timeout_s
        while self.pending():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._publish_event.wait(), left)
            except TimeoutError:
                return False
        return True

    async def wait_settled(self, timeout_s: float = 30.0) -> bool:
        """Wait until every analyzer is idle (see :meth:`wait_idle`)."""
        return await self.wait_idle(timeout_s)

    wait_initial = wait_settled

    @property
    def last_progress_end_at(self) -> dict[str, float | None]:
        """Per analyzer, when its last work-done progress ended."""
        return {a.spec.name: a.last_progress_end_at for a in self.analyzers}

    def names(self) -> Iterable[str]:
        return (a.spec.name for a in self.analyzers)
