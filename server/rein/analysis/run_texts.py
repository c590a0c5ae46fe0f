"""The changed files' texts as the analyzer gate reads them: now (from the
workspace: "" for a file that does not exist, None when it cannot be
read), and before the run (from their baselines); and which files a file
the run created can change the diagnostics of.

A file the run created, even an empty one, cannot be shown away: the
analyzers resolve imports from the disk, so a created ``pkg/json.py``
shadows the standard library's ``json`` in its neighbours whatever text it
is shown with. The files importing its module name
(:func:`users_of_created`) are never asked about as they were before the
run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

from rein.analysis.baselines import FileBaseline
from rein.harness.errors import ReinError
from rein.harness.gating.analyzer_inputs import never_read
from rein.harness.gating.gate_types import CoveringDiagnostics, NeverThere, ReadInputs
from rein.harness.ports import Workspace
from rein.python_imports import imported_modules, module_name

__all__ = [
    "analysed",
    "before_and_now",
    "exists",
    "imports_module",
    "reader",
    "run_changes",
    "settings_changed",
    "text_now",
    "unread_by",
    "users_of_created",
]


def analysed(source: object, paths: Collection[str]) -> frozenset[str]:
    """The changed files among ``paths`` that ``source`` covers (a source
    that does not say covers all; the editor's, through the coordinator,
    all but the settings): the others (a README, a JSON file) cannot change
    diagnostics."""
    if not isinstance(source, CoveringDiagnostics):
        return frozenset(paths)
    return frozenset(p for p in paths if source.covers(p))


def run_changes(source: object, touched: Collection[str]) -> list[str]:
    """``touched`` (the run record's changed paths) as changes, in order:
    less the paths that never were files, before the run nor now (a
    command's temporary file, :class:`~rein.harness.gating.gate_types.
    NeverThere`): they changed nothing."""
    if not isinstance(source, NeverThere):
        return sorted(touched)
    return sorted(p for p in touched if not source.never_there(p))


def unread_by(source: object, path: str) -> bool:
    """No analyzer of ``source`` reads ``path``: the source's own answer
    (:class:`~rein.harness.gating.gate_types.ReadInputs`: a configured
    analyzer that is no preset reads every file), else the presets'
    (:func:`~rein.harness.gating.analyzer_inputs.never_read`)."""
    if isinstance(source, ReadInputs):
        return source.analyzer_input(path) == "unread"
    return never_read(path)


def settings_changed(source: object, touched: Collection[str]) -> list[str]:
    """The run's changes that the analyzers read but never open: a setting
    (``compile_flags.txt``, ``pyproject.toml``), a manifest. Its text
    before the run cannot be shown in memory to anyone (only an open
    document's can). Empty when ``source`` does not say what it covers."""
    if not isinstance(source, CoveringDiagnostics):
        return []
    return [
        p
        for p in run_changes(source, touched)
        if not p.endswith((".py", ".pyi")) and not unread_by(source, p) and not source.covers(p)
    ]


async def exists(workspace: Workspace, path: str) -> bool:
    try:
        return await workspace.exists(path)
    except (ReinError, OSError):
        return False


async def text_now(workspace: Workspace | None, path: str) -> str | None:
    """``path``'s text now ("" when it does not exist, None when unknown)."""
    if workspace is None:
        return None
    try:
        return (await workspace.read_text(path)).text
    except (ReinError, OSError):
        return "" if not await exists(workspace, path) else None


def reader(workspace: Workspace | None) -> Callable[[str], Awaitable[str | None]]:
    """A file's text now in ``workspace``: None when it does not exist (or
    cannot be read), "" for an empty file."""

    async def now(path: str) -> str | None:
        if workspace is None or not await exists(workspace, path):
            return None
        return await text_now(workspace, path)

    return now


async def before_and_now(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    source: object = None,
) -> tuple[dict[str, str], dict[str, str]] | None:
    """Each changed file's text before the run (``files``: their baselines)
    and now ("" for a file that does not exist); None when one of them is
    not known. A changed file ``source`` does not cover (:func:`analysed`)
    is left out."""
    before: dict[str, str] = {}
    now: dict[str, str] = {}
    for path in sorted(analysed(source, touched)):
        baseline = files.get(path)
        was = baseline.text_before_the_run if baseline is not None else None
        text = await text_now(workspace, path)
        if was is None or text is None:
            return None
        before[path], now[path] = was, text
    return before, now


def imports_module(module: str, created: str) -> bool:
    """``module`` (an imported name) may resolve to the module ``created``
    or into it: to it whole or to a tail of it (``json`` for ``pkg.json``,
    found next to the importer)."""
    parts = created.split(".")
    tails = {".".join(parts[i:]) for i in range(len(parts))}
    return any(module == tail or module.startswith(tail + ".") for tail in tails)


async def users_of_created(
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    paths: Sequence[str],
) -> set[str]:
    """The files among ``paths`` that import the name of a module the run
    created (a changed file that was no file before the run and is one
    now, even empty): what they say cannot be asked as before the run. All
    of them for a created file that is no Python module (a TypeScript or Go
    file: another language's resolution, not scanned here, or a setting),
    unless no analyzer reads it (prose, a backup, a log:
    :func:`~rein.harness.gating.analyzer_inputs.never_read`)."""
    if workspace is None or not paths:
        return set()
    created = [
        p
        for p in sorted(touched)
        if not never_read(p)
        and (b := files.get(p)) is not None
        and not b.existed
        and await exists(workspace, p)
    ]
    if not created:
        return set()
    names = [module_name(p) for p in created]
    if any(name is None for name in names):
        return set(paths)
    users: set[str] = set()
    for path in paths:
        text = await text_now(workspace, path)
        imported = imported_modules(path, text) if text else set()
        if text is None or any(imports_module(m, n) for m in imported for n in names if n):
            users.add(path)
    return users
