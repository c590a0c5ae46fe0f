"""A verdict on changes that were all undone: every file the run changed is
back to its text before the run (a repair that reverts, a deleted module
written back, a renamed one moved back, a ``sed`` reversed).

The tree the analyzers would analyse is then the one the baselines were
taken of: whatever they would say now is what they said then, so no new
error can be the run's. Asking them again (a cold session's verdict pulls
the changed files and their importers afresh, then waits for the whole
workspace) was that analysis done twice; on toolz it cost a cold run 3-5 s
of its 15-18 s (issue 32 item 7).

Only exact: every changed path has a baseline whose text before the run is
known and is read now (a file that cannot be read is not known to be the
same), a path that was no file then (created, a rename's new path) is none
now, nothing was installed since the baselines were taken, and no command
ran (an install, or a command's ``pip``, changes what imports resolve to,
out of sight of the changed files; :class:`~rein.analysis.gate.AnalyzerGate`
keeps both apart).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping

from rein.analysis.baselines import FileBaseline

__all__ = ["RESTORED", "all_restored"]

#: What such a verdict's detail says.
RESTORED = (
    "every changed file is back to its text before the run: the analyzers' "
    "baseline stands (not asked again)"
)


async def all_restored(
    files: Mapping[str, FileBaseline],
    touched: Collection[str],
    now: Callable[[str], Awaitable[str | None]],
    exists: Callable[[str], Awaitable[bool]],
) -> bool:
    """Every path in ``touched`` is as it was before the run (``files``:
    their baselines; ``now``: a path's text now, None when it is no file or
    cannot be read; ``exists``: whether it is a file now). A path without a
    baseline, or one that exists but cannot be read (binary, too large), is
    not known to be restored."""
    if not touched:
        return False
    for path in sorted(touched):
        baseline = files.get(path)
        if baseline is None or baseline.text_before_the_run is None:
            return False  # nothing known of it before the run
        text = await now(path)
        if text is None and await exists(path):
            return False  # there, but not read: not known to be the same
        absent = not baseline.existed or baseline.renamed_from is not None
        if (text is not None) if absent else (text != baseline.text_before_the_run):
            return False
    return True
