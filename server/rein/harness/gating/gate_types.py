"""What every gate shares: the :class:`Gate` protocol, what a check gets
(:class:`GateContext`) and returns (:class:`GateOutcome`), and the code
context a blocker shows."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from rein.harness.errors import ReinError
from rein.harness.events import Blocker, Emit
from rein.harness.gating.analyzer_inputs import AnalyzerInput
from rein.harness.ports import DiagnosticsSnapshot, Mutation, Workspace

__all__ = [
    "MAX_BLOCKERS_IN_PROMPT",
    "SEVERITY_LEVELS",
    "SEVERITY_NAMES",
    "BaselineGate",
    "ClosingGate",
    "CoveringDiagnostics",
    "DeferredWorkspace",
    "EnvironmentChanges",
    "FileByFileCounterfactual",
    "FileByFileDiagnostics",
    "Gate",
    "GateContext",
    "GateOutcome",
    "ImporterClosure",
    "InstallState",
    "NeverThere",
    "OpenFilesOnly",
    "PartialImporters",
    "PriorTexts",
    "ProgressReporter",
    "ReadInputs",
    "ReportingGate",
    "RunEndListener",
    "StatefulGate",
    "UnsavedDocuments",
    "ValidationListener",
    "code_context",
]

#: LSP severities by number, and the names configuration uses for them.
SEVERITY_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SEVERITY_LEVELS = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}
#: The repair prompt names at most this many blockers (and says how many more).
MAX_BLOCKERS_IN_PROMPT = 20


@dataclass(slots=True)
class GateContext:
    generation: int
    #: Paths the agent changed in this run (and the carried changes').
    touched: frozenset[str]
    workspace: Workspace | None = None
    #: The run's emit, set by :meth:`GatePipeline.check`: events a gate causes
    #: (the preview's) reach the run's listeners.
    emit: Emit | None = None
    #: path -> generation of the first change being validated (a baseline
    #: taken at or after it already contains the change).
    first_change: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class GateOutcome:
    blockers: list[Blocker] = field(default_factory=list)
    stale: bool = False
    detail: str = ""
    #: Why the gate could not look (no analyzer, a stale answer): the result
    #: is "unverified", never "passed". Ignored when there are blockers.
    unverified: str | None = None


class Gate(Protocol):
    """A validation gate. What else it can do is declared by the protocols
    below, which the pipeline checks for: :class:`BaselineGate`,
    :class:`StatefulGate`, :class:`ValidationListener`."""

    name: str

    async def on_run_start(self, generation: int) -> None: ...

    async def check(self, ctx: GateContext) -> GateOutcome: ...


@runtime_checkable
class BaselineGate(Protocol):
    """A gate that captures a baseline before the run first changes a file
    (``paths`` as the workspace's ``BeforeChange``: ``(old, new)`` for a
    rename)."""

    async def before_change(self, paths: Sequence[str], workspace: Workspace) -> None: ...


@runtime_checkable
class ChangeObserver(Protocol):
    """A gate told of each of the run's changes once applied (a command's
    too, once the disk watcher saw it), after the tool turn that made it:
    it may start work for the verdict while the model takes its next turn."""

    def on_change(self, mutation: Mutation) -> None: ...


@runtime_checkable
class StatefulGate(Protocol):
    """A gate whose baselines for unvalidated changes are stored with the
    session and restored when it resumes."""

    def export_state(self) -> dict[str, Any]: ...

    def import_state(self, data: dict[str, Any]) -> None: ...


@runtime_checkable
class ValidationListener(Protocol):
    """A gate told when a generation is validated (it may drop what it kept
    for the changes up to it)."""

    def on_validated(self, generation: int) -> None: ...


class ProgressReporter(Protocol):
    """Where a gate says that it waits (on the analyzers) for more than a
    second, and that the wait is over; the pipeline's turns both into
    ``gate_waiting`` events, which every front-end shows."""

    def waiting(self, message: str, files: int | None = None) -> None: ...

    def done(self, message: str) -> None: ...

    def failed(self, message: str) -> None:
        """Work the gate did in the background failed (it is logged; the
        run goes on without what it would have given)."""
        ...


@runtime_checkable
class ClosingGate(Protocol):
    """A gate that holds something past its runs (the tests gate: its warm
    pytest process and shadow trees): closed when its session is."""

    async def close(self) -> None: ...


@runtime_checkable
class ReportingGate(Protocol):
    """A gate that reports its waits: the pipeline hands it the run's
    reporter at run start."""

    def report_progress(self, progress: ProgressReporter) -> None: ...

    def on_run_end(self) -> None:
        """The run ended: stop the background work no change waited for
        (its requests are cancelled)."""
        ...


@runtime_checkable
class RunEndListener(Protocol):
    """A gate that works for a verdict before it is asked for one (the tests
    gate judges while the model takes its turn, :class:`ChangeObserver`),
    told when the run ends (any status: an abort too) to stop that work.
    A :class:`ReportingGate` is told by its own ``on_run_end``."""

    def on_run_end(self) -> None: ...


class InstallState(Protocol):
    """The installs a manifest's change owes, as a gate that judges ahead
    sees them (the dependency coordinator): an install changes the
    environment its tests import, which no text of the workspace shows."""

    #: How many installs have finished (any exit code) so far.
    finished: int

    def installing(self) -> bool:
        """An install runs or is owed (a manifest changed since its last)."""
        ...


@runtime_checkable
class CoveringDiagnostics(Protocol):
    """A diagnostics source that knows which files its analyzers cover (the
    headless pool: the extensions of its configured analyzers, outside the
    paths the workspace filter skips). A changed source file it does not
    cover was analysed by nobody: the analyzer gate names it and its verdict
    is "unverified", never "passed". A source without this (the editor's
    diagnostics) is taken by the coordinator to cover every file but the
    presets' settings (:func:`~rein.harness.gating.analyzer_inputs.read_not_checked`)."""

    def covers(self, path: str) -> bool: ...


@runtime_checkable
class WholeCoverage(Protocol):
    """A source that can say which files its whole-workspace snapshot holds
    for every analyzer (the headless pool: an analyzer without a workspace
    diagnostic mode, ruff, checks only the files start-up opens, the first
    ``maxFiles``). The coordinator answers False for a source without this
    (the editor's diagnostics hold what its servers checked); the analyzer
    gate takes any other source without it to hold every file."""

    def in_whole_snapshot(self, path: str) -> bool:
        """Every analyzer that checks ``path`` reports it in a
        whole-workspace snapshot, without its being opened for a change."""
        ...


@runtime_checkable
class ExplainedCoverage(Protocol):
    """A covering source that can say why a file is not covered (the
    headless pool: ``gopls was not found``, ``clangd failed to start:
    ...``), so the verdict names the server rather than only the file."""

    def why_not_covered(self, path: str) -> str | None: ...


@runtime_checkable
class FileByFileDiagnostics(Protocol):
    """A source that can have a few files' diagnostics before its analyzers
    finish analysing the whole workspace (the headless pool, whose
    analyzers answer a pull of one file by analysing it then): a cold
    session's first change is baselined and judged on the changed files and
    their importers instead of waiting for the workspace analysis."""

    def answers_per_file(self) -> bool:
        """Every running analyzer can be asked file by file now."""
        ...

    async def open_with_importers(self, paths: Sequence[str]) -> Sequence[str]:
        """Open ``paths`` and the files that import them (at most the
        source's bound of them) in every analyzer; returns the importers."""
        ...

    async def snapshot_files(self, paths: Sequence[str], timeout_s: float) -> DiagnosticsSnapshot:
        """Ask for these open files' diagnostics afresh, wait until every
        analyzer answered having analysed them, and return them (stale when
        one did not answer within ``timeout_s``)."""
        ...


@runtime_checkable
class FileByFileCounterfactual(Protocol):
    """A source asked file by file that can also judge what a command changed
    before its whole-workspace analysis ends: it reads every file before
    the command runs, and shows the analyzers a few files' earlier texts
    while it asks for some files' diagnostics
    (:mod:`rein.analysis.cold_commands`)."""

    async def read_texts(self) -> Callable[[str], str | None] | None:
        """Read every file the analyzers could see (off the event loop);
        returns what a file said then (None: no such file then, or too long
        to keep). None: this source cannot."""
        ...

    async def snapshot_files_with(
        self, texts: Mapping[str, str], paths: Sequence[str], timeout_s: float
    ) -> DiagnosticsSnapshot:
        """:meth:`FileByFileDiagnostics.snapshot_files` of ``paths`` with the
        analyzers shown ``texts`` instead of those open files' contents (in
        memory: nothing is written; the contents are shown again after)."""
        ...


@runtime_checkable
class PartialImporters(Protocol):
    """A source that opens a changed file's importers with it, at most a
    bound of them (``gates.analyzer.maxImporters``), and can open the rest
    later, a batch at a time."""

    def importers_left(self) -> Sequence[str]:
        """Importers of the changed files that were not opened (past the
        bound), in the order they would be opened."""
        ...

    async def open_more_importers(self) -> Sequence[str]:
        """Open the next batch of them (at most the bound) in the analyzers
        that check file by file; returns those opened now."""
        ...


@runtime_checkable
class ImporterClosure(Protocol):
    """A source that can say which files may depend on some files (the
    headless pool, from its import scan: :mod:`rein.analysis.closure`)."""

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        """``paths`` and every file whose analysis may depend on them; None
        when that cannot be known (a changed file is no source it scans)."""
        ...


@runtime_checkable
class EnvironmentChanges(Protocol):
    """A source that watches its analyzers' environment (the headless
    pool: the site folders basedpyright imports from,
    :mod:`rein.disk.python_environment`). A command's ``pip install -U``
    there can break an unchanged importer of the package: after one, what
    a run's changes can reach is not known, and the environment before the
    run cannot be shown to the analyzers."""

    def environment_changes(self) -> int:
        """How many changes to the environment it has seen (a count: the
        gate compares it with the one when its baselines were taken)."""
        ...

    def environment_watched(self) -> bool:
        """Whether the environment is known and watched now: its changes
        (packages added or removed, ``.pth`` files written) are counted by
        :meth:`environment_changes` (False: it may change unseen, so a
        command may have changed it)."""
        ...


@runtime_checkable
class ReadInputs(Protocol):
    """A source that knows its analyzers (the headless pool): what a
    changed path is to them, a configured analyzer that is no preset
    counted (:func:`~rein.harness.gating.analyzer_inputs.analyzer_input`)."""

    def analyzer_input(self, path: str) -> AnalyzerInput:
        """``"module"``, ``"read"`` or ``"unread"``."""
        ...


@runtime_checkable
class NeverThere(Protocol):
    """A source that knows which changed paths never were files: no file
    before the run changed them nor after (``sed -i``'s temporary file,
    seen by the disk watcher as it came and went): no change (the headless
    pool, from its scan: :mod:`rein.disk.file_presence`)."""

    def never_there(self, path: str) -> bool:
        """Whether ``path`` is such a path (False when not known)."""
        ...


@runtime_checkable
class OpenFilesOnly(Protocol):
    """A source whose analyzers may check only the files opened for the
    changes (a workspace past ``gates.analyzer.workspaceMaxFiles``)."""

    def analyses_open_files_only(self) -> bool:
        """Whether they do: a file nobody opened is analysed by nobody."""
        ...


@runtime_checkable
class DeferredWorkspace(Protocol):
    """A source whose whole-workspace analysis waits until it is asked for
    (the headless pool, ``gates.analyzer.deferWorkspaceAnalysis``): until
    then its analyzers check the files opened for the changes only."""

    def workspace_deferred(self) -> bool:
        """Whether the whole-workspace analysis has not been started yet."""
        ...

    async def analyse_workspace(self) -> None:
        """Start it (at once; its end is waited for as any analysis is)."""
        ...


@runtime_checkable
class PriorTexts(Protocol):
    """A source that knows what a changed file said before the run first
    changed it, though the run's change was not announced before it was
    made (a command's, seen by the disk watcher): the headless pool in a
    workspace it analyses file by file, which read every file at start."""

    def text_before_change(self, path: str) -> str | None:
        """``path``'s text before its first change since the changes were
        last released; None when it did not change or that is not known."""
        ...


@runtime_checkable
class UnsavedDocuments(Protocol):
    """A workspace that knows which of its files the person has open with
    changes not saved (the editor's dirty buffers, in ``rein serve``): the
    tests gate names those a selected test imports, as the tests read their
    saved text."""

    def unsaved_paths(self) -> Sequence[str]:
        """Workspace-relative paths of the open documents whose text is not
        the disk's (or that are not on disk)."""
        ...


async def code_context(
    workspace: Workspace | None, path: str, line: int, radius: int = 2
) -> str | None:
    """Lines ``line-radius .. line+radius`` (0-based ``line``) with numbers
    and a marker on the line itself."""
    if workspace is None:
        return None
    try:
        text = (await workspace.read_text(path)).text
    except (ReinError, OSError):
        return None
    lines = text.splitlines()
    if not lines:
        return None
    start = max(0, line - radius)
    end = min(len(lines), line + radius + 1)
    width = len(str(end))
    return "\n".join(
        f"{'>' if i == line else ' '} {str(i + 1).rjust(width)} | {lines[i]}"
        for i in range(start, end)
    )
