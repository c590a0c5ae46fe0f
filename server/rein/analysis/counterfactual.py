"""The analyzer gate's counterfactual question: is an error in a file the
run did not change there without the run's changes too?

basedpyright's inference over circular imports depends on the order it
checks files in: an importer can gain an error from a re-check alone. So the
errors in unchanged files are asked about once more, with the analyzers
shown the changed files as they were before the run (in memory: nothing is
written), through a :class:`~rein.harness.ports.CounterfactualDiagnostics`
source. An error that is there then too is not the run's. One that is
not is asked about once more, with the texts as they are, each file parsed
afresh (:class:`~rein.harness.ports.AnsweringDiagnostics`): an error the
analyzers do not report again came from the order they checked files in
(sympy's ``is_random`` command edit: ``stats/tests/test_finite_rv.py:109``
gained eight ``reportIndexIssue`` errors in 3 of 5 first verdicts, none
of them reported by the command line, before or after).

Only a change of a file's text can be shown in memory. A file the run
deleted (or renamed away) cannot: the analyzers resolve imports from the
disk, so with it still gone every error it causes looks as if it was there
before, and not only in its importers' import lines (a name a star import
brought, an attribute of a package that re-exported it, in files that
import those). The errors in unchanged files are then not asked about in
memory: they were judged against the run-start snapshot already, and that
is the verdict (issue 32: toolz's ``itertoolz.py`` renamed away blocked on
7 of the 46 new errors the command line reports), unless the source can
check copies of the workspace on disk, as it was and as it is
(:mod:`rein.analysis.on_disk`). A file the run created is
shown empty, and the files importing its name are not asked about
(``unshowable``, :func:`~rein.analysis.run_texts.users_of_created`): it
shadows what it shadows (the standard library's ``json`` for a created
``pkg/json.py``) whatever text it is shown with. Nor can a changed file the
analyzers read but never open (a setting: clangd's ``compile_flags.txt``,
:func:`~rein.analysis.run_texts.settings_changed`): the errors in unchanged
files are then not asked about either (review23: an unchanged ``main.c``
that no longer compiled with the run's flags was "there without the run's
changes too", the flags being read from the disk). An answer that is
stale (an analyzer did not answer for a file within its bound) clears
nothing: what it holds of the file is from before the question.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

from rein.analysis.baselines import FileBaseline, blocking_untouched
from rein.analysis.on_disk import asked_on_disk, gone, gone_files
from rein.analysis.run_texts import before_and_now, settings_changed, users_of_created
from rein.harness.ports import (
    AnsweringDiagnostics,
    CounterfactualDiagnostics,
    Diagnostic,
    DiskDiagnostics,
    Workspace,
)

__all__ = ["not_the_runs", "without_the_run"]


async def without_the_run(
    source: CounterfactualDiagnostics,
    blocking: Sequence[Diagnostic],
    touched: Collection[str],
    before: Mapping[str, str],
    now: Mapping[str, str],
    timeout_s: float,
    unshowable: Callable[[Sequence[str]], Awaitable[Collection[str]]] | None = None,
    asked_already: Collection[str] = (),
) -> tuple[list[Diagnostic], int]:
    """The blockers left after the question, and how many were dropped.
    ``before``/``now``: each changed file's text before the run and now
    ("" for a file that does not exist; a changed file not in them is not
    shown). The files ``unshowable`` names are not asked about: their
    errors stay; nor are those ``asked_already`` (their baseline is this
    question's answer: it was asked after the as-is one)."""
    if gone(touched, before, now):
        return list(blocking), 0  # the state before cannot be shown in memory
    paths = sorted({d.path for d in blocking if d.path not in touched})
    kept_out = set(await unshowable(paths)) if unshowable is not None and paths else set()
    kept_out |= set(asked_already) & set(paths)
    asked = [d for d in blocking if d.path not in touched and d.path not in kept_out]
    paths = [p for p in paths if p not in kept_out]
    if not paths:
        return list(blocking), 0
    shown = {p: before[p] for p in sorted(touched) if p in before}
    snap = await source.snapshot_with(shown, paths, timeout_s)
    if snap is None or snap.blind is not None or snap.stale:
        # Stale: a file got no answer with the earlier texts shown, and what
        # it holds of it is its findings with the run's changes, the errors
        # asked about among them: "there without the run" would drop them
        # all (a pass with the importers broken). Not answered: kept.
        return list(blocking), 0
    there = await _confirmed(source, blocking_untouched(asked, snap.diagnostics), timeout_s)
    kept = [d for d in blocking if d.path in touched or d.path in kept_out] + there
    return kept, len(blocking) - len(kept)


async def _confirmed(
    source: CounterfactualDiagnostics, there: list[Diagnostic], timeout_s: float
) -> list[Diagnostic]:
    """The errors of ``there`` the analyzers report again, asked afresh with
    the texts now (:class:`~rein.harness.ports.AnsweringDiagnostics`):
    those they do not were the order they checked files in, not the run.
    All of them when the source cannot ask so, or an answer is missing."""
    if not there or not isinstance(source, AnsweringDiagnostics):
        return there
    again = await source.snapshot_answered(sorted({d.path for d in there}), timeout_s)
    if again.stale or again.blind is not None:
        return there
    gone = {id(d) for d in blocking_untouched(there, again.diagnostics)}
    return [d for d in there if id(d) not in gone]


async def not_the_runs(
    source: object,
    blocking: list[Diagnostic],
    touched: Collection[str],
    files: Mapping[str, FileBaseline],
    workspace: Workspace | None,
    timeout_s: float,
    environment_changed: bool,
    asked_already: Collection[str] = (),
    current: Sequence[Diagnostic] = (),
) -> tuple[list[Diagnostic], int]:
    """The analyzer gate's question: errors in files the run did not change
    (``blocking``) asked about once more with ``source`` shown the changed
    files as they were before the run (``files``: their baselines), when it
    can be asked so and every such text is known (not of the files
    ``asked_already``; ``current``: the verdict's errors, blocking or not,
    for the question on disk). Returns the blockers left and how many were
    dropped."""
    if not isinstance(source, CounterfactualDiagnostics) or all(
        d.path in touched or d.path in asked_already for d in blocking
    ):
        return blocking, 0
    if settings_changed(source, touched) or environment_changed:
        # Read from the disk (a setting), or installed (the environment):
        # the state before cannot be shown.
        return blocking, 0
    texts = await before_and_now(touched, files, workspace, source)
    if texts is None:
        return blocking, 0  # the state before the run is not known for every file
    if await gone_files(touched, files, workspace, *texts):
        # Not to be shown in memory (an empty module too: review67).
        if isinstance(source, DiskDiagnostics):
            return await asked_on_disk(
                source, blocking, touched, files, workspace, *texts, timeout_s, current
            )
        return blocking, 0
    return await without_the_run(
        source,
        blocking,
        touched,
        *texts,
        timeout_s,
        lambda paths: users_of_created(touched, files, workspace, paths),
        asked_already,
    )
