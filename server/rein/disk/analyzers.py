"""The analyzer pool: real analyzer language servers standing in for the
editor's diagnostics when Rein runs headless.

Each analyzer (by default ``ruff server`` and ``basedpyright-langserver
--stdio`` when installed) is started as an LSP server with pygls's
LanguageClient. The pool opens the workspace's relevant files, sends
didOpen/didChange for every mutation, collects publishDiagnostics, and tells
the :class:`~rein.harness.gating.coordinators.DiagnosticsCoordinator` when every
analyzer that owns a file has published for it since its last change. A
crashed analyzer is restarted after a backoff, a few times a minute at most,
then again after a cool-down (:mod:`rein.disk.restarts`); each crash is
reported, and verdicts while it is down say it is missing.

Settled means the analyzer says it is done: the pool tracks LSP work-done
progress (``$/progress`` begin/end) and pyright's own ``pyright/beginProgress``
and ``pyright/endProgress`` per analyzer. An analyzer is idle when no
progress is open, nothing is owed for a change sent to it, and a quiet
period passed since its last progress end or publish (:meth:`AnalyzerPool.wait_idle`).
basedpyright runs in ``diagnosticMode: workspace``, so it publishes for files
nobody opened; touched files are opened (:meth:`AnalyzerPool.ensure_open`).
In a workspace over ``workspace_max_files`` every analyzer checks open
files only (basedpyright is switched to ``openFilesOnly``; the others open
nothing at start), and ``ensure_open`` opens a changed file's importers
with it (:mod:`rein.disk.importers`: Python, TypeScript/JavaScript and Go
imports); :meth:`AnalyzerPool.release_opened` closes them once validated.
What the workspace filter skips (:mod:`rein.tools.ignore`: virtual
environments, build output, ignored paths) is neither opened nor analysed,
and diagnostics published for it are dropped.

The pool's own :meth:`AnalyzerPool.snapshot` answers at once with what the
analyzers last published; the coordinator wraps it to wait for freshness.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import anyio

from rein.disk import disk_checks, file_checks, open_files, pool_files, pool_status
from rein.disk.analyzer_server import AnalyzerTimeout, _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec, find_executable
from rein.disk.file_presence import FilePresence
from rein.disk.file_set_importers import FileSetImporters
from rein.disk.importers import ImportIndex
from rein.disk.owed_publishes import OwedPublishes
from rein.disk.pool_environment import SettingChanges, tell_installed
from rein.disk.prior_texts import TextMemory
from rein.disk.python_environment import PythonEnvironment
from rein.disk.restarts import AnalyzerRestarts, RestartPolicy
from rein.disk.ruff_extends import SETTINGS_NAMES, RuffExtends
from rein.disk.uri_paths import UriPaths
from rein.harness.errors import ToolError
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, DiskErrors
from rein.tools.disk_read import read_text
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "DEFAULT_ANALYZERS",
    "AnalyzerPool",
    "AnalyzerSpec",
    "AnalyzerTimeout",
    "find_executable",
]

log = logging.getLogger(__name__)


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
        owed_limit_ms: int = 120_000,
        read: Callable[[str], str | None] | None = None,
        restart_policy: RestartPolicy | None = None,
        defer_workspace: bool = False,
    ) -> None:
        self.root = Path(root).resolve()
        #: Asked for a file's text before the disk (``rein acp``: the text
        #: the client showed or was given, its unsaved buffer); None: the
        #: disk only.
        self.read_first = read
        #: Bound on one answer of an analyzer (initialize, a diagnostics
        #: pull): ``gates.analyzer.requestTimeoutMs``.
        self.request_timeout_s = request_timeout_ms / 1000
        #: Diagnostics owed longer than the settle bound are given up (stale).
        self.owed = OwedPublishes(owed_limit_ms / 1000)
        self.specs = list(specs)
        self.on_diagnostics_changed = on_diagnostics_changed
        self.on_report = on_report or (lambda message: log.warning("%s", message))
        #: Starts crashed analyzers again (backoff, a budget, a cool-down).
        self.restarts = AnalyzerRestarts(
            restart_policy or RestartPolicy(), report=self.on_report, changed=self.analyzer_active
        )
        #: How many files start-up opens (for speed: basedpyright covers the
        #: rest in workspace mode, ruff's findings never cross files, and
        #: :meth:`ensure_open` opens every touched file).
        self.max_files = max_files
        #: Above this many files the workspace is "large": every analyzer
        #: analyses the open files only (see AnalyzerSpec).
        self.workspace_max_files = workspace_max_files
        #: How many importers of a file are opened with it in a large workspace.
        self.max_importers = max_importers
        self.large = False
        #: ``defer_workspace``: a workspace analysed as a whole is checked
        #: file by file, as a large one, until :meth:`analyse_workspace`.
        self.defer_workspace = defer_workspace
        self.deferring = False
        #: Files opened on request (ensure_open, changes), in order: what a
        #: file-by-file analyzer reopens after a restart.
        self.requested: list[str] = []
        self.imports: ImportIndex | None = None
        #: The import scan of a workspace analysed as a whole, built for a
        #: cold session's first change (:mod:`rein.disk.file_checks`).
        self.cold_imports: ImportIndex | None = None
        #: A large workspace's texts (:meth:`text_before_change`).
        self.texts: TextMemory | None = None
        #: Files' earlier texts shown to the analyzers (a command's baseline).
        self.shown_earlier = file_checks.EarlierTexts()
        #: The quiet period after an analyzer's last progress end or publish.
        self.quiet_s = quiet_ms / 1000
        self.analyzers: list[_Analyzer] = []
        #: Analyzers that could not run (not found, failed to start), as
        #: "name: reason".
        self.failed: list[str] = []
        self.filter = WorkspaceFilter(self.root)
        self.files: list[str] = []
        #: Every file the analyzers could see on disk (the scan's, then kept
        #: up to date by the changes): a change that adds or removes one
        #: changes the file set, which every analyzer must hear of.
        self.existing: set[str] = set()
        self.generation = 0
        self.last_publish_at: dict[str, float] = {}
        self.missing: list[str] = []
        self._uris = UriPaths(self.root)
        #: Importers of changed files past ``max_importers``, not opened.
        self.importers_unopened: list[str] = []
        #: Every file name, for the changes that were never files (:mod:`rein.disk.file_presence`).
        self.presence = FilePresence(self.root)
        #: Analyzers to restart for a setting they read only at start (clangd's flags).
        #: The files ruff's settings ``extend``, whatever their names.
        self.ruff_extends = RuffExtends(
            self.root, self.read, lambda: self.presence.named(SETTINGS_NAMES)
        )
        self.setting_changes = SettingChanges(self.ruff_extends)
        #: Files created or deleted whose importers the next wait asks afresh
        #: (a workspace analysed as a whole: :mod:`rein.disk.file_set_importers`).
        self.file_set = FileSetImporters()
        #: The environment basedpyright resolves imports from (its folders
        #: in the workspace; what a command installed into it).
        self.python_env = PythonEnvironment(self.root, self.read, self.skipped)
        #: Its look, started by the scan (:func:`~rein.disk.pool_files.prepare`).
        self.environment_look: asyncio.Future[None] | None = None
        self._activity_event = asyncio.Event()
        self._started = asyncio.Event()

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        await self.prepare()
        await self.start_analyzers()

    async def start_analyzers(self) -> None:
        """Start the analyzers side by side (each waits for its initialize),
        kept in their configured order. What asks the analyzers (snapshots,
        waits, opening files) waits for this; a host may run it in the
        background while the model is asked (:meth:`started`)."""
        try:
            found = [(s, find_executable(s.command[0])) for s in self.specs]
            self.missing += [spec.name for spec, executable in found if executable is None]
            # A task group, not gather: cancelled (the host closed while they
            # started), it waits for each start's clean-up.
            async with anyio.create_task_group() as tg:
                for spec, executable in found:
                    if executable is not None:
                        tg.start_soon(self._start_one, spec, executable)
            self.analyzers.sort(key=lambda a: [s.name for s in self.specs].index(a.spec.name))
        finally:
            self._started.set()

    async def started(self) -> None:
        """Return once :meth:`start_analyzers` ended (started or failed)."""
        await self._started.wait()

    @property
    def has_started(self) -> bool:  # see started()
        return self._started.is_set()

    async def _start_one(self, spec: AnalyzerSpec, executable: str) -> None:
        analyzer = _Analyzer(spec, executable, self)
        try:
            await analyzer.start()
        except Exception as exc:
            self.on_report(f"analyzer {spec.name} failed to start: {exc}")
            self.failed.append(f"{spec.name} failed to start: {exc}")
            await analyzer.stop()
            return
        except BaseException:  # cancelled (the host closed while it started)
            with anyio.CancelScope(shield=True):
                await analyzer.stop()  # bounded: shutdown, then terminate
            raise
        self.analyzers.append(analyzer)

    async def stop(self) -> None:
        await self.restarts.aclose()
        # All at once: each may wait its bound on a busy server.
        await asyncio.gather(*(analyzer.stop() for analyzer in self.analyzers))

    async def __aenter__(self) -> AnalyzerPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def analyzer_exited(self, analyzer: _Analyzer, returncode: int | None) -> None:
        """Its process exited: reported, started again later (not here: this
        runs in the dead client's exit handler)."""
        self.restarts.crashed(analyzer, f"exited (code {returncode})")

    # ----------------------------------------------------------------- files

    def skipped(self, path: str) -> bool:
        """The workspace filter skips it: not analysed, its diagnostics dropped."""
        return self.filter.skipped(path)

    def exclude_globs(self) -> list[str]:
        return self.filter.exclude_globs()

    def files_to_open(self, *, file_by_file: bool) -> list[str]:
        """What a (re)started analyzer opens: file by file, the files opened
        on request; else the files start-up opens and those touched since."""
        return self.requested if file_by_file else self.files

    def read(self, path: str) -> str | None:
        """The text the analyzers are shown for ``path``: the ``read`` hook's
        when it knows one, else the disk's; None when there is none."""
        if self.read_first is not None:
            text = self.read_first(path)
            if text is not None:
                return text
        try:
            # The one workspace reader: a FIFO or device is refused, never waited on.
            return read_text(self.root / path, path).text
        except (OSError, ToolError):
            return None

    def text_before_change(self, path: str) -> str | None:
        """``path``'s text before its first change since the changes were
        last released (:meth:`release_opened`); None when it did not change
        or that text is not known (a workspace analysed as a whole keeps no
        texts)."""
        return self.texts.before_change(path) if self.texts is not None else None

    def relative(self, uri: str) -> str | None:
        """The workspace path of an analyzer's URI (remembered)."""
        return self._uris.relative(uri)

    # ------------------------------------------------------------- mutations

    # The files the pool knows and what a change does to them (:mod:`rein.disk.pool_files`).
    prepare = pool_files.prepare
    _scan = pool_files.scan
    refresh = pool_files.refresh
    on_mutation = pool_files.on_mutation
    file_set_changed = pool_files.file_set_changed
    environment_changed = pool_files.environment_changed

    def analyzer_active(self) -> None:
        """Something changed that may make the pool idle (or busy)."""
        self._activity_event.set()
        self._activity_event = asyncio.Event()

    def analyzer_published(self, path: str) -> None:
        """An analyzer has new diagnostics for ``path``."""
        self.last_publish_at[path] = time.monotonic()
        self.analyzer_active()
        if any(path in a.awaiting for a in self.analyzers if a.alive):
            return  # another analyzer still owes diagnostics for this change
        if self.on_diagnostics_changed is not None:
            self.on_diagnostics_changed([path])

    def activity(self) -> asyncio.Event:
        """Set at the next change that may make the pool idle (or busy)."""
        return self._activity_event

    def pending(self) -> list[str]:
        return sorted({p for a in self.analyzers if a.alive for p in a.awaiting})

    # ----------------------------------------------------------- the source

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        await self._started.wait()
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
        return pool_status.missing_diagnostics(self.analyzers, wanted)

    def blind(self) -> str | None:
        """Why no analyzer looks, or None while one runs."""
        if not self.has_started:
            return None  # snapshots wait for the start; this is asked after it
        return pool_status.blind(self)

    def describe(self) -> str:
        """One line for the terminal: which analyzers run, for which
        languages, and their versions."""
        if not self.has_started:
            return "starting " + ", ".join(spec.name for spec in self.specs)
        return pool_status.describe(self)

    # ------------------------------------------------------------- settling

    def idle(self) -> bool:
        now = time.monotonic()
        return all(a.idle(self.quiet_s, now) for a in self.analyzers)

    async def wait_idle(self, timeout_s: float) -> bool:
        """Wait until every analyzer is idle: no progress open, nothing owed
        for a change sent to it, and the quiet period passed after its last
        progress end or publish (what is owed past the pool's bound is given
        up: :mod:`rein.disk.owed_publishes`). False on timeout."""
        deadline = time.monotonic() + timeout_s
        try:
            await asyncio.wait_for(self._started.wait(), timeout_s)
        except TimeoutError:
            return False
        await self.setting_changes.apply(self.analyzers)
        await self.check_environment()
        await self.file_set.ask(self, self.owed.limit_s)
        while True:
            now = time.monotonic()
            expires = self.owed.expire(self.analyzers, now)
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
            wake += [expires] if expires is not None else []
            timer = min([left, *(max(t - now, 0.0) for t in wake)])
            event = self._activity_event
            try:
                await asyncio.wait_for(event.wait(), timer)
            except TimeoutError:
                pass

    def covers(self, path: str) -> bool:
        """A started analyzer (running or restarting) checks files like
        ``path`` and the workspace filter does not skip it."""
        suffix = Path(path).suffix
        return not self.skipped(path) and any(suffix in a.spec.extensions for a in self.analyzers)

    def in_whole_snapshot(self, path: str) -> bool:
        """Every analyzer that checks ``path`` reports it without its being
        opened for a change: start-up opens it (the first ``max_files``), or
        the analyzer checks the whole workspace itself (basedpyright's
        workspace diagnostic mode); never while the analyzers check file by
        file (a large workspace, a deferred analysis)."""
        if self.large or self.deferring:
            return False
        owners = [a for a in self.analyzers if a.owns(path)]
        return path in self.files or all(a.findings.workspace_mode for a in owners)

    def environment_changes(self) -> int:
        """Changes to basedpyright's environment seen since the pool
        started (:meth:`~rein.disk.python_environment.PythonEnvironment.changes`)."""
        return self.python_env.changes()

    def environment_watched(self) -> bool:
        """Whether basedpyright's environment is known and its changes are
        counted (:meth:`~rein.disk.python_environment.PythonEnvironment.watched`)."""
        return self.python_env.watched()

    def why_not_covered(self, path: str) -> str | None:
        """Why no analyzer checks ``path``: its server was not found or did
        not start (:func:`~rein.disk.pool_status.why_not_covered`), or the
        workspace filter leaves it out."""
        if self.skipped(path):
            return "the workspace filter skips it"
        return pool_status.why_not_covered(self, Path(path).suffix)

    # Files opened on request (:mod:`rein.disk.open_files`).
    ensure_open = open_files.ensure_open
    importers_left = open_files.importers_left
    open_more_importers = open_files.open_more_importers
    release_opened = open_files.release_opened

    # A few files' diagnostics before the workspace analysis ends (:mod:`rein.disk.file_checks`).
    answers_per_file = file_checks.answers_per_file
    open_with_importers = file_checks.open_with_importers
    importer_closure = file_checks.importer_closure
    analyses_open_files_only = file_checks.analyses_open_files_only
    snapshot_files = file_checks.snapshot_files
    read_texts = file_checks.read_texts
    snapshot_files_with = file_checks.snapshot_files_with
    never_there = file_checks.never_there
    analyzer_input = file_checks.input_kind

    def workspace_deferred(self) -> bool:
        """The whole-workspace analysis waits for :meth:`analyse_workspace`
        (:class:`~rein.harness.gating.gate_types.DeferredWorkspace`)."""
        return self.deferring

    async def analyse_workspace(self) -> None:
        """End the deferral: each analyzer is told its settings for the
        whole workspace and opens the files start-up opens; :meth:`wait_idle`
        then waits for all of them."""
        await self._started.wait()
        if not self.deferring:
            return
        self.deferring = False
        for analyzer in self.analyzers:
            analyzer.analyse_workspace()

    async def check_environment(self) -> None:
        """A command installed into the analyzers' environment, wherever it
        is: they are told as of an install
        (:func:`~rein.disk.pool_environment.tell_installed`)."""
        await tell_installed(self.root, self.analyzers, self.python_env)

    async def snapshot_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot | None:
        """Show the analyzers ``texts`` instead of those files' contents
        (in memory: nothing is written), snapshot ``paths`` once they are
        idle, then show the real contents again and wait for that too: both
        waits within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        await self._started.wait()
        if self.large and file_checks.answers_per_file(self):
            # Open files only: no progress covers the importers' re-checks,
            # so a wait for the pool's quiet took their answers from before
            # the texts were shown, then the shown texts' for today's (a
            # pass with sympy's importers broken). Each asked file is asked
            # afresh, and owed afresh once the contents are shown again.
            return await file_checks.snapshot_files_with(self, texts, paths, timeout_s)
        shown = [p for p in texts if not self.skipped(p)]
        # The files asked, parsed afresh after each showing
        # (file_checks.show_asked_again).
        servers = [a for a in self.analyzers if a.alive and any(a.owns(p) for p in shown)]
        others = [p for p in paths if p not in texts]
        try:
            for path in shown:
                for analyzer in self.analyzers:
                    if analyzer.alive and analyzer.owns(path):
                        analyzer.change(path, texts[path])
            file_checks.show_asked_again(servers, others)
            if not await self.wait_idle(timeout_s):
                return None
            return await self.snapshot(paths)
        finally:
            for path in shown:
                for analyzer in self.analyzers:
                    if analyzer.alive and analyzer.owns(path):
                        analyzer.change(path)
            file_checks.show_asked_again(servers, others)
            await self.wait_idle(max(deadline - time.monotonic(), 0.0))

    async def snapshot_answered(
        self, paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        """The diagnostics of ``paths`` once each is answered for its text
        now (after :meth:`snapshot_with`, the answers to the questions it
        asked again), stale past ``timeout_s``."""
        await self._started.wait()
        if self.large and file_checks.answers_per_file(self):
            return await file_checks.snapshot_files(self, paths, timeout_s)
        if not await self.wait_idle(timeout_s):
            snap = await self.snapshot(paths)
            why = "the analyzers did not settle within the settle bound"
            return replace(snap, stale=True, stale_reason=snap.stale_reason or why)
        return await self.snapshot(paths)

    def _command_lines(self) -> list[disk_checks.CommandLine]:
        return disk_checks.command_lines(
            (a.spec.name, a.executable, a.alive, a.settings) for a in self.analyzers
        )

    def checked_on_disk(self) -> frozenset[str]:
        """The analyzers whose command line checks copies of the workspace."""
        return frozenset(c.name for c in self._command_lines())

    async def errors_on_disk(
        self,
        overlays: Sequence[Mapping[str, str | None]],
        paths: Sequence[Sequence[str]],
        timeout_s: float,
    ) -> DiskErrors | None:
        """The command lines' errors in each overlay's ``paths`` of a copy of
        the workspace per overlay (:mod:`rein.disk.disk_checks`); None when
        one answered nothing. One analyzer's command line: basedpyright's."""
        commands = self._command_lines()
        if not commands or len(paths) != len(overlays) or not all(paths):
            return None
        # Folders of the workspace the environment imports from (an editable
        # install's ``.pth``): a copy would import the real ones, where the
        # gone module is gone too (review67).
        if await asyncio.to_thread(self.python_env.roots) != ():
            return None
        return await disk_checks.errors_on_disk(self.root, commands[0], overlays, paths, timeout_s)

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

    def pids(self) -> dict[str, int]:
        """Per analyzer with a running process, its process id."""
        return {a.spec.name: a.pid for a in self.analyzers if a.pid is not None}
