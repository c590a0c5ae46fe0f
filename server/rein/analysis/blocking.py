"""Which errors of a verdict's snapshot block, file by file: in a changed
file, those new relative to its own baseline, its lines mapped through the
change (its text now read for that); in another file, those not in its
diagnostics before the run; in a file whose state before the run is not
known, none (the verdict says it did not check it). A changed file without
a baseline of its own is judged against the run-start snapshot only when
that predates the change, else every error in it blocks
(:func:`without_own_baseline`). The matching rules are
:mod:`rein.analysis.baselines`'s."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from rein.analysis.baselines import FileBaseline, blocking_in_file, blocking_in_untouched_files
from rein.analysis.run_texts import text_now
from rein.harness.ports import Diagnostic, DiagnosticsSnapshot, Workspace

__all__ = ["blocking_in_snapshot", "without_own_baseline"]


def without_own_baseline(
    path: str, first_change: int | None, run_start: DiagnosticsSnapshot | None
) -> FileBaseline:
    """A changed file without its own baseline (a command changed it on
    disk, or an earlier step of a flow without gates): the run-start
    snapshot's entries when that snapshot predates the change
    (``first_change``, its generation); else nothing is known of its errors
    before the change and every error in it blocks (never a pass on an
    unknown baseline)."""
    if run_start is not None and first_change is not None and first_change > run_start.generation:
        return FileBaseline(path, None, tuple(d for d in run_start.diagnostics if d.path == path))
    return FileBaseline(path, None, ())


async def blocking_in_snapshot(
    serious: Iterable[Diagnostic],
    touched: Collection[str],
    not_judged: Collection[str],
    before_the_run: Callable[[str], Sequence[Diagnostic]],
    own_baseline: Callable[[str], FileBaseline],
    workspace: Workspace | None,
) -> list[Diagnostic]:
    """The blocking ones of ``serious`` (the snapshot's errors at or above
    the threshold): in the ``touched`` files against ``own_baseline(path)``,
    elsewhere against ``before_the_run(path)``, none in ``not_judged``."""
    by_path: dict[str, list[Diagnostic]] = {}
    for d in serious:
        by_path.setdefault(d.path, []).append(d)
    untouched = {
        p: found for p, found in by_path.items() if p not in touched and p not in not_judged
    }
    blocking = blocking_in_untouched_files(untouched, before_the_run)
    for path in sorted(touched):
        current = by_path.get(path, [])
        if not current:
            continue
        baseline = own_baseline(path)
        new_text = await text_now(workspace, path) if baseline.text is not None else None
        blocking.extend(blocking_in_file(current, baseline, new_text))
    return blocking
