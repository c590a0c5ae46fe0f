"""A command's change in a cold session (or where the analyzers check the
open files only: :meth:`~rein.analysis.run_baselines.RunBaselines.per_file`),
judged file by file.

A tool's first change in a cold session is baselined file by file before it
is applied (:mod:`rein.analysis.cold_start`). A command's (``sed -i``, a
code generator) is seen only after it ran, and which files it will change
is not known before. So, while the whole-workspace snapshot is still being
taken, a command does not wait for it: every file's text is read before the
command runs (:meth:`~rein.harness.gating.gate_types.FileByFileCounterfactual.
read_texts`, the texts a command could change), and at the verdict the
files it changed get what a tool's write gets: each changed file and its
importers are opened, the changed files' diagnostics asked for with the
analyzers shown them as they were before the run (their baseline), and the
importers are owed theirs (:mod:`rein.analysis.owed_importers`): the
verdict asks the changed files and the importers as they are (partial like
a tool's first), then, with the changed files shown as they were, only
the importers in which it found errors. An importer with none has nothing
that could block: asking it as it was too checked every importer twice.

A path that neither was nor is a file (``sed -i``'s own temporary file) is
one that does not exist. A command that created a file (even an empty one:
``touch pkg/json.py`` shadows the standard library's ``json`` in its
neighbours) or deleted one is not judged so: neither can be shown away, the
analyzers resolve imports from the disk. Its verdict waits for the
whole-workspace snapshot; the files it changed get their baseline from the
same texts there, a created file one that says it did not exist, and the
files importing a created module's name are not asked about as they were
before (:func:`~rein.analysis.run_texts.users_of_created`)
(:func:`~rein.analysis.command_baselines.baselines_after_the_fact`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping

from rein.analysis.baselines import FileBaseline
from rein.analysis.command_baselines import with_tools_changes
from rein.analysis.reach import describe
from rein.harness.gating.gate_types import (
    FileByFileCounterfactual,
    FileByFileDiagnostics,
    ProgressReporter,
)
from rein.harness.gating.waiting import reported
from rein.harness.ports import Diagnostic

__all__ = ["command_baselines", "texts_before_a_command"]

#: Its messages keep the name they had in analysis/gate.py (the log shows it).
log = logging.getLogger("rein.analysis.gate")


async def texts_before_a_command(
    source: FileByFileCounterfactual, progress: ProgressReporter | None
) -> Callable[[str], str | None] | None:
    """Every file's text before a command runs (reported when reading them
    takes more than a second); None when they could not be read (the
    command then waits for the whole-workspace snapshot instead)."""
    try:
        return await reported(
            source.read_texts(), progress, "the workspace's texts before a command"
        )
    except Exception:
        log.exception("could not read the texts before a command: it waits instead")
        return None


async def command_baselines(
    source: FileByFileDiagnostics,
    texts_before: Callable[[str], str | None] | None,
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    late: Mapping[str, tuple[Diagnostic, ...]],
    now: Callable[[str], Awaitable[str | None]],
    timeout_s: float,
    progress: ProgressReporter | None,
) -> tuple[dict[str, FileBaseline], list[str]] | None:
    """Baselines for the changed files in ``touched`` that have none in
    ``files`` (a command changed them), from their texts before the command
    (``texts_before``), and their importers opened now, not asked (owed a
    baseline: :mod:`rein.analysis.owed_importers`). None when they cannot
    be had so (see the module doc). ``now`` reads a file's text now (None:
    no such file; "" is an empty one)."""
    if texts_before is None or not isinstance(source, FileByFileCounterfactual):
        return None
    changed: list[str] = []
    gone: dict[str, FileBaseline] = {}
    before: dict[str, str] = {}
    for path in sorted(p for p in touched if p not in files):
        was, text = texts_before(path), await now(path)
        if was is None and text is None:
            # The command's own temporary file.
            gone[path] = FileBaseline(path, "", (), existed=False)
        elif was is None or text is None:
            return None  # created (even empty) or deleted by the command
        else:
            changed.append(path)
            before[path] = was
    importers = [
        p
        for p in await source.open_with_importers(changed)
        if p not in touched and p not in files and p not in late
    ]
    # Every changed file as it was before the run (a tool's too).
    shown = await with_tools_changes(before, touched, files, now)
    snap = await reported(
        source.snapshot_files_with(shown, changed, timeout_s),
        progress,
        f"the analyzers: {describe(changed)} before the command's change",
        len(changed),
    )
    if snap.blind is not None or snap.stale:
        return None
    found: dict[str, list[Diagnostic]] = {}
    for d in snap.diagnostics:
        found.setdefault(d.path, []).append(d)
    baselines = {p: FileBaseline(p, text, tuple(found.get(p, ()))) for p, text in before.items()}
    return {**gone, **baselines}, importers
