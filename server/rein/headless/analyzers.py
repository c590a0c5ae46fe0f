"""The analyzer pool: real analyzer language servers standing in for the
editor's diagnostics when Rein runs headless.

Each analyzer (by default ``ruff server`` and ``basedpyright-langserver
--stdio`` when installed) is started as an LSP server with pygls's
LanguageClient. The pool opens the workspace's relevant files, sends
didOpen/didChange for every mutation, collects publishDiagnostics, and tells
the :class:`~rein.harness.coordinators.DiagnosticsCoordinator` when every
analyzer that owns a file has published for it since its last change. A
crashed analyzer is restarted once, and that is reported.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, Mutation

__all__ = ["DEFAULT_ANALYZERS", "AnalyzerPool", "AnalyzerSpec", "find_executable"]

log = logging.getLogger(__name__)

_SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    "build",
    "dist",
}


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


DEFAULT_ANALYZERS: tuple[AnalyzerSpec, ...] = (
    AnalyzerSpec("ruff", ("ruff", "server"), frozenset({".py", ".pyi"})),
    AnalyzerSpec(
        "basedpyright",
        ("basedpyright-langserver", "--stdio"),
        frozenset({".py", ".pyi"}),
        settings={"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}},
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

    def owns(self, path: str) -> bool:
        return os.path.splitext(path)[1] in self.spec.extensions

    async def start(self) -> None:
        client = LanguageClient("rein-analyzer-pool", "0.1")
        # We only need the analyzer's diagnostics, not its capabilities; some
        # servers send capabilities lsprotocol cannot structure (ruff's
        # notebook selector), so keep the initialize result as a plain dict.
        client.protocol._converter.register_structure_hook(
            lsp.InitializeResult, lambda obj, _type: obj
        )
        self.client = client
        root = self.pool.root

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
            self.on_publish(params)

        @client.feature(lsp.WORKSPACE_CONFIGURATION)
        def on_configuration(params: lsp.ConfigurationParams) -> list[Any]:
            out: list[Any] = []
            for item in params.items:
                section = item.section or ""
                value: Any = self.spec.settings
                for part in section.split(".") if section else []:
                    value = value.get(part, {}) if isinstance(value, dict) else {}
                out.append(value)
            return out

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_progress_create(params: Any) -> None:
            return None

        @client.feature(lsp.WORKSPACE_DIAGNOSTIC_REFRESH)
        def on_refresh(params: Any) -> None:
            # The server's view changed (e.g. a config file): pull every file again.
            for path, version in list(self.versions.items()):
                self._schedule_pull(path, version)

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: Any) -> None:
            return None

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def on_log(params: lsp.LogMessageParams) -> None:
            log.debug("%s: %s", self.spec.name, params.message)

        async def server_exit(server: Any) -> None:
            self.alive = False
            if not self._stopping:
                await self.pool._crashed(self, server.returncode)

        client.server_exit = server_exit  # type: ignore[method-assign]
        await client.start_io(self.executable, *self.spec.command[1:], cwd=str(root))
        server = client._server
        if server is not None and server.stderr is not None:
            self._stderr_task = asyncio.create_task(self._drain(server.stderr))
        result: Any = await client.initialize_async(
            lsp.InitializeParams(
                process_id=os.getpid(),
                root_uri=root.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                capabilities=lsp.ClientCapabilities(
                    workspace=lsp.WorkspaceClientCapabilities(
                        configuration=True, workspace_folders=True
                    ),
                    text_document=lsp.TextDocumentClientCapabilities(
                        synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
                        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                            version_support=True, related_information=False
                        ),
                        diagnostic=lsp.DiagnosticClientCapabilities(related_document_support=False)
                        if self.spec.pull
                        else None,
                    ),
                ),
                initialization_options={"settings": self.spec.settings}
                if self.spec.settings
                else None,
            )
        )
        caps = result.get("capabilities", {}) if isinstance(result, dict) else {}
        self.pull = bool(self.spec.pull and caps.get("diagnosticProvider"))
        client.initialized(lsp.InitializedParams())
        if self.spec.settings:
            client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings=self.spec.settings)
            )
        self.alive = True
        self.versions.clear()
        for path in self.pool.files:
            if self.owns(path):
                self.open(path)

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

    def change(self, path: str) -> None:
        if not self.alive or self.client is None or not self.owns(path):
            return
        text = self.pool.read(path)
        uri = _uri(self.pool.root, path)
        if text is None:
            if path in self.versions:
                del self.versions[path]
                self.awaiting.pop(path, None)
                self.client.text_document_did_close(
                    lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
                )
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
                report: Any = await client.text_document_diagnostic_async(
                    lsp.DocumentDiagnosticParams(
                        text_document=lsp.TextDocumentIdentifier(uri=uri),
                        previous_result_id=self._result_ids.get(path),
                    )
                )
                break
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
        if kind != "unchanged":
            items = getattr(report, "items", None) or []
            self.diagnostics[path] = [self.pool.convert(path, d, self.spec.name) for d in items]
        wanted = self.awaiting.get(path)
        if wanted is not None and wanted <= version:
            del self.awaiting[path]
        self.pool._published(self, path)

    def on_publish(self, params: lsp.PublishDiagnosticsParams) -> None:
        path = self.pool.relative(params.uri)
        if path is None:
            return
        self.diagnostics[path] = [
            self.pool.convert(path, d, self.spec.name) for d in params.diagnostics
        ]
        wanted = self.awaiting.get(path)
        if wanted is not None and (params.version is None or params.version >= wanted):
            del self.awaiting[path]
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
    ) -> None:
        self.root = Path(root).resolve()
        self.specs = list(specs)
        self.on_diagnostics_changed = on_diagnostics_changed
        self.on_report = on_report or (lambda message: log.warning("%s", message))
        self.max_files = max_files
        self.analyzers: list[_Analyzer] = []
        self.files: list[str] = []
        self.generation = 0
        self.last_publish_at: dict[str, float] = {}
        self.missing: list[str] = []
        self._publish_event = asyncio.Event()

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        self.files = self._scan()
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
            analyzer.awaiting.clear()
            return
        analyzer.restarts += 1
        self.on_report(
            f"analyzer {analyzer.spec.name} exited (code {returncode}); restarting it once"
        )
        try:
            await analyzer.start()
        except Exception as exc:
            self.on_report(f"analyzer {analyzer.spec.name} could not be restarted: {exc}")

    # ----------------------------------------------------------------- files

    def _scan(self) -> list[str]:
        extensions = {e for s in self.specs for e in s.extensions}
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(
                d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")
            )
            for name in sorted(filenames):
                if os.path.splitext(name)[1] in extensions:
                    found.append(
                        os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/")
                    )
                    if len(found) >= self.max_files:
                        return found
        return found

    def read(self, path: str) -> str | None:
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

    def on_mutation(self, mutation: Mutation) -> None:
        """Send the change to every analyzer that owns the file."""
        self.generation = max(self.generation, mutation.generation)
        unowned: list[str] = []
        for path in mutation.paths:
            if path not in self.files and self.read(path) is not None:
                self.files.append(path)
            owners = [a for a in self.analyzers if a.alive and a.owns(path)]
            for analyzer in owners:
                analyzer.change(path)
            if not owners:
                unowned.append(path)
        if unowned and self.on_diagnostics_changed is not None:
            # Nobody analyses these files: their (empty) diagnostics are fresh now.
            self.on_diagnostics_changed(unowned)

    def _published(self, analyzer: _Analyzer, path: str) -> None:
        self.last_publish_at[path] = time.monotonic()
        self._publish_event.set()
        self._publish_event = asyncio.Event()
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
        return DiagnosticsSnapshot(tuple(out), max(self.generation, min_generation))

    async def wait_settled(self, timeout_s: float = 30.0) -> bool:
        """Wait until every analyzer published for every file it was sent
        (at start: the baseline). Returns False on timeout."""
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

    wait_initial = wait_settled

    def names(self) -> Iterable[str]:
        return (a.spec.name for a in self.analyzers)
