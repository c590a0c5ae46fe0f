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
known, a path that was no file then (created, a rename's new path) is none
now, and nothing was installed since the baselines were taken (an install
changes what imports resolve to; :class:`~rein.analysis.gate.AnalyzerGate`
keeps that apart).
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
    before_command: Callable[[str], str | None] | None = None,
) -> bool:
    """Every path in ``touched`` is as it was before the run (``files``:
    their baselines; ``now``: a path's text now, None when it is no file).
    A path without a baseline counts only when it is no file now and was
    none before the command that touched it either (``before_command``:
    every file's text then, as a cold session reads them; ``sed -i``'s own
    temporary file, as :func:`~rein.analysis.cold_commands.command_baselines`
    takes it)."""
    if not touched:
        return False
    for path in sorted(touched):
        baseline = files.get(path)
        text = await now(path)
        if baseline is None:
            if before_command is None or before_command(path) is not None or text is not None:
                return False  # nothing known of it before the run
            continue
        if baseline.text_before_the_run is None:
            return False
        absent = not baseline.existed or baseline.renamed_from is not None
        if (text is not None) if absent else (text != baseline.text_before_the_run):
            return False
    return True
