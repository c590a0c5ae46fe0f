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
now, and nothing was installed since the baselines were taken. A path that
never was a file, before the run nor now (``sed -i``'s temporary file), is
no change. After a command the tree may still differ out of sight of the
changed files: a ``pip uninstall`` changes what imports resolve to. So a
verdict after a command takes this shortcut only when the source watches
the analyzers' environment (the headless pool's
:class:`~rein.disk.python_environment.PythonEnvironment`: its site folders,
``.pth`` files and interpreter) and saw no change there
(:meth:`~rein.analysis.run_baselines.RunBaselines.commanded_unseen`). In
the editor nothing watches it: a verdict after a command asks again.

Issue 32: sympy's ``sed`` rename of ``is_random`` reversed by the repair's
``sed`` was asked again, and basedpyright's answers for an unchanged test
file depend on the order it checks files in: the repair's verdict blocked
on 4 to 9 ``reportIndexIssue`` errors that were not the run's, and the run
failed. A command's changes are otherwise judged as before: a file it
changed that is not back to its text is asked, with its importers.

What a command changes outside the workspace other than that environment
(a user-level ruff configuration, a folder ``extraPaths`` names outside the
root) is not seen, here or in any verdict; nor is a file the workspace
filter skips (a generated, git-ignored module): neither is a changed path.
:class:`~rein.analysis.gate.AnalyzerGate` keeps the installs and the
commands apart.
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
