"""A file's own baseline when the run already changed a file it imports.

A file's own baseline is taken just before the run first changes it
(:mod:`rein.analysis.file_capture`); asked then, the analyzers see the
run's earlier changes in place, and an error such a change caused in the
file (a.py's ``helper`` renamed: b.py's import of it) would be taken for
the file's own old one: never blocking, the verdict passing without having
looked. So a file the run is about to change for the first time, that
imports a file the run changed already (or that is owed a baseline as a
cold write's importer, :mod:`rein.analysis.owed_importers`), gets as its
own diagnostics those from before those changes:

* those taken when it was opened with a changed file, before that change
  (the gate's ``late``);
* else asked with the analyzers shown every changed file as it was (owed:
  :func:`~rein.analysis.cold_start.owed_baselines`; else through a
  :class:`~rein.harness.ports.CounterfactualDiagnostics` source);
* else, not had (no such source, no answer in time, a changed file gone,
  it imports a module the run created): none, so that every error in it
  blocks (never a pass on an unknown baseline).

Only Python imports are seen (a TypeScript file importing a changed one
keeps its capture).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from rein.analysis.baselines import FileBaseline
from rein.analysis.cold_start import gone_files, owed_baselines
from rein.analysis.command_baselines import with_tools_changes
from rein.analysis.run_texts import imports_module, reader, users_of_created
from rein.harness.gating.gate_types import FileByFileDiagnostics, ProgressReporter
from rein.harness.gating.waiting import reported
from rein.harness.ports import CounterfactualDiagnostics, Diagnostic, Workspace
from rein.python_imports import imported_modules, module_name

__all__ = ["before_earlier_changes"]


async def before_earlier_changes(
    path: str,
    text: str | None,
    owed: bool,
    source: object,
    files: Mapping[str, FileBaseline],
    late: Mapping[str, tuple[Diagnostic, ...]],
    workspace: Workspace | None,
    timeout_s: float,
    progress: ProgressReporter | None,
) -> tuple[Diagnostic, ...] | None:
    """``path``'s diagnostics before the run's earlier changes (``text``:
    its text now, before its first change; ``owed``: a cold write's importer
    owed a baseline; ``files``: the changed files' baselines), to stand for
    its own; None when its capture stands (it imports no file the run
    changed already and is owed nothing). See the module docstring."""
    if path in late:
        return late[path]
    now = reader(workspace)
    changed = [p for p in sorted(files) if p != path and await _changed(files[p], now)]
    if not changed or not (owed or _imports_one(path, text, changed)):
        return None
    if owed and isinstance(source, FileByFileDiagnostics):
        found, _ = await owed_baselines(
            source,
            [path],
            changed,
            files,
            now,
            lambda paths: users_of_created(changed, files, workspace, paths),
            timeout_s,
            progress,
        )
        return found.get(path, ())
    if (
        not isinstance(source, CounterfactualDiagnostics)
        or await gone_files(changed, files, now)
        or await users_of_created(changed, files, workspace, [path])
    ):
        return ()
    snap = await reported(
        source.snapshot_with(await with_tools_changes({}, changed, files, now), [path], timeout_s),
        progress,
        f"the analyzers: {path} as before the run's changes",
        1,
    )
    if snap is None or snap.blind is not None or snap.stale:
        return ()
    return tuple(d for d in snap.diagnostics if d.path == path)


async def _changed(baseline: FileBaseline, now: Callable[[str], Awaitable[str | None]]) -> bool:
    """The file holds something else than before the run (or is gone)."""
    was = baseline.text_before_the_run if baseline.existed else None
    return await now(baseline.path) != was


def _imports_one(path: str, text: str | None, changed: list[str]) -> bool:
    """``text`` (``path``'s, a Python module's; None: not known) imports one
    of the ``changed`` modules."""
    if module_name(path) is None:
        return False
    names = [n for p in changed if (n := module_name(p)) is not None]
    if text is None:
        return bool(names)
    imported = imported_modules(path, text)
    return any(imports_module(m, n) for m in imported for n in names)
