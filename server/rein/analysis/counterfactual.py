"""The analyzer gate's counterfactual question: is an error in a file the
run did not change there without the run's changes too?

basedpyright's inference over circular imports depends on the order it
checks files in: an importer can gain an error from a re-check alone. So the
errors in unchanged files are asked about once more, with the analyzers
shown the changed files as they were before the run (in memory: nothing is
written), through a :class:`~rein.harness.ports.CounterfactualDiagnostics`
source. An error that is there then too is not the run's.

Only a change of a file's text can be shown in memory. A file the run
deleted (or renamed away) cannot: the analyzers resolve imports from the
disk, so its importers' broken imports would look as if they were there
before. An error that names a module the run deleted or renamed is the
run's without asking; the others are asked with the deleted files left
deleted. A file the run created is shown empty.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from rein.analysis.baselines import blocking_untouched
from rein.harness.ports import CounterfactualDiagnostics, Diagnostic

__all__ = ["module_names", "names_a_module", "without_the_run"]

_QUOTED = re.compile("[`\"'\u2018\u201c]([^`\"'\u2019\u201d]{1,200})[`\"'\u2019\u201d]")


def module_names(path: str) -> set[str]:
    """The names an import of ``path`` could use: its dotted module path
    (from the root, and from below a ``src`` folder) and its own name (a
    package's for ``__init``)."""
    stem, dot, _ext = path.rpartition(".")
    if not dot:
        stem = path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts:
        return set()
    names = {".".join(parts[i:]) for i in range(len(parts))}
    return names


def names_a_module(d: Diagnostic, modules: Collection[str], paths: Collection[str]) -> bool:
    """The message names one of ``modules`` (a quoted dotted name ending in
    one, relative imports' leading dots ignored) or one of ``paths``."""
    if any(p in d.message for p in paths):
        return True
    for match in _QUOTED.finditer(d.message):
        quoted = match.group(1).lstrip(".")
        if quoted in modules or any(quoted.endswith("." + m) for m in modules):
            return True
    return False


async def without_the_run(
    source: CounterfactualDiagnostics,
    blocking: Sequence[Diagnostic],
    touched: Collection[str],
    before: Mapping[str, str],
    now: Mapping[str, str],
    timeout_s: float,
) -> tuple[list[Diagnostic], int]:
    """The blockers left after the question, and how many were dropped.
    ``before``/``now``: each changed file's text before the run and now
    ("" for a file that does not exist)."""
    elsewhere = [d for d in blocking if d.path not in touched]
    gone = sorted(p for p in touched if before.get(p) and not now.get(p))
    modules = {m for p in gone for m in module_names(p)}
    named = [d for d in elsewhere if gone and names_a_module(d, modules, gone)]
    named_ids = {id(d) for d in named}
    asked = [d for d in elsewhere if id(d) not in named_ids]
    paths = sorted({d.path for d in asked})
    if not paths:
        return list(blocking), 0
    shown = {p: before[p] for p in sorted(touched) if p not in gone}
    snap = await source.snapshot_with(shown, paths, timeout_s) if shown else None
    if snap is None or snap.blind is not None:
        return list(blocking), 0
    there = blocking_untouched(asked, snap.diagnostics)
    kept = [d for d in blocking if d.path in touched] + named + there
    return kept, len(blocking) - len(kept)
