"""A setting the analyzers read changed during the run (``pyproject.toml``,
``pyrightconfig.json``, ``ruff.toml``): what the baselines taken after it
hold.

The analyzers read a setting from the disk, never from an open document: its
text before the run cannot be shown to them in memory. So a baseline they
gave after it changed holds the findings the new setting brings, taken for
the state before the run: a changed file's own baseline (captured before its
first change, but after the setting's), a command's changed files' (asked
after the command), an importer opened then, a run-start snapshot taken
after a cold change and corrected in memory. ruff's ``select`` widened to
``ALL`` and a module edited after it in one run: the module's new findings
passed while its unchanged neighbour's blocked; both done by one command in
a session whose workspace analysis was deferred: everything passed.

Where the run-start snapshot was taken before any change of the run and the
analyzers check the whole workspace, it holds every file as it was before
the run, the setting as it was: every file the verdict judges is judged
against it (:func:`judged_from_run_start`; a changed file's lines are still
mapped through the run's changes, a renamed one's baseline is its old
path's). Elsewhere (a cold session, open files only) the state before the
setting changed is known for no file the analyzers first saw after it: a
verdict that finds nothing blocking is unverified and says why
(:func:`unseen_setting`); what blocks still blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, MutableMapping
from dataclasses import replace

from rein.analysis.baselines import FileBaseline, carried
from rein.harness.gating.gate_types import GateOutcome
from rein.harness.ports import Diagnostic

__all__ = ["judged_from_run_start", "unseen_setting"]


def judged_from_run_start(
    files: MutableMapping[str, FileBaseline],
    late: MutableMapping[str, tuple[Diagnostic, ...]],
    run_start: Callable[[str], tuple[Diagnostic, ...]],
) -> None:
    """Every baseline in ``files`` (the changed files') and ``late`` (the
    importers first analysed after the run-start snapshot) made the
    run-start snapshot's entries (``run_start(path)``), in place (a path
    that was no file before the run has none there)."""
    for path, baseline in list(files.items()):
        if baseline.renamed_from is not None:
            old = baseline.renamed_from
            was = FileBaseline(old, baseline.text, run_start(old), renamed_from=None)
            files[path] = carried(was, path)
        else:
            files[path] = replace(baseline, diagnostics=run_start(path), settled=True)
    for path in list(late):
        late[path] = run_start(path)


def unseen_setting(outcome: GateOutcome, settings: Collection[str]) -> GateOutcome:
    """``outcome`` where the run changed ``settings`` and the files it judged
    were not all analysed before they changed: unverified when nothing
    blocks (the findings they bring may have been taken for the state before
    the run), said in the detail either way."""
    names = ", ".join(sorted(settings))
    note = (
        f"a setting the analyzers read from the disk changed ({names}) and the files "
        "judged were not all analysed before it: what it adds to them is not known"
    )
    if outcome.blockers:
        return replace(outcome, detail=f"{outcome.detail}; {note}")
    unverified = note if outcome.unverified is None else f"{outcome.unverified}; {note}"
    return replace(outcome, detail=f"{outcome.detail}; {note}", unverified=unverified)
