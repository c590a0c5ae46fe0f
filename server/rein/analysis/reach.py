"""What a verdict's analyzers did not look at.

* A changed source file no configured analyzer covers (a ``.ts`` or ``.go``
  file with only Python analyzers) was analysed by nobody: the analyzer
  gate names it and its verdict is "unverified", never "passed". Files that
  are not source code (docs, data, configuration) are nobody's to analyse.
* Importers past ``gates.analyzer.maxImporters`` are opened a batch per
  verdict; while some are left, the verdict says it is partial, and it is
  not "passed" when a changed file's public names changed (what those
  importers use may be gone) (:func:`open_more_importers`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

from rein.analysis.run_texts import run_changes, unread_by
from rein.harness.gating.analyzer_inputs import CODE_EXTENSIONS
from rein.harness.gating.gate_types import (
    CoveringDiagnostics,
    ExplainedCoverage,
    PartialImporters,
)
from rein.harness.ports import CounterfactualDiagnostics, Diagnostic, DiagnosticsSource

__all__ = [
    "CODE_EXTENSIONS",
    "check_more_importers",
    "describe",
    "importers_not_checked",
    "not_analysed",
    "open_more_importers",
    "public_names_changed",
    "why_not_analysed",
]


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def not_analysed(source: object, paths: Collection[str]) -> list[str]:
    """The source files among ``paths`` that ``source`` does not cover (a
    source that does not say covers all)."""
    if not isinstance(source, CoveringDiagnostics):
        return []
    return sorted(p for p in paths if _suffix(p) in CODE_EXTENSIONS and not source.covers(p))


def why_not_analysed(source: object, paths: Sequence[str]) -> str:
    """``paths`` (:func:`not_analysed`'s) described, each group with why
    nobody covers it when the source says (``geom/geom.go (gopls was not
    found)``)."""
    if not isinstance(source, ExplainedCoverage):
        return describe(paths)
    groups: dict[str | None, list[str]] = {}
    for path in paths:
        groups.setdefault(source.why_not_covered(path), []).append(path)
    return "; ".join(
        describe(group) + (f" ({why})" if why else "") for why, group in groups.items()
    )


_TOP_LEVEL = re.compile(
    r"^(?:(?:async\s+)?def|class)\s+([A-Za-z]\w*)[^\n]*|^([A-Za-z]\w*)\s*(?::[^=\n]*)?=(?!=)",
    re.MULTILINE,
)


def _public_names(text: str) -> set[str]:
    """A Python module's public top-level definitions, each as its header
    line (a signature change is a change) or assigned name."""
    out: set[str] = set()
    for m in _TOP_LEVEL.finditer(text):
        if m.group(1) is not None:
            out.add(m.group(0).rstrip())
        else:
            out.add(m.group(2))
    return out


def public_names_changed(before: str | None, after: str | None, path: str) -> bool:
    """Whether a change of ``path`` may have changed what its importers use:
    a public top-level name or signature added, removed or changed (any
    change of a file that is not Python, or whose text is unknown)."""
    if before is None or after is None or _suffix(path) not in {".py", ".pyi"}:
        return True
    return _public_names(before) != _public_names(after)


def describe(paths: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


async def importers_not_checked(
    source: DiagnosticsSource,
    unbaselined: Collection[str],
    touched: Collection[str],
    before_and_now: Callable[[], Awaitable[tuple[Mapping[str, str], Mapping[str, str]] | None]],
) -> tuple[str, str | None] | None:
    """What a verdict says about importers it did not check (left past the
    source's bound, or opened without a baseline): the detail, and why it is
    unverified when a changed file's public names changed (None: it may
    pass). None when every importer was checked. ``before_and_now``: each
    changed file's text before the run and now (None: not known), read only
    when some importer was not checked."""
    left = sorted(
        {
            *(source.importers_left() if isinstance(source, PartialImporters) else ()),
            *unbaselined,
        }
    )
    if not left:
        return None
    detail = (
        f"partial: {len(left)} importer(s) of the changed files not checked "
        f"(past gates.analyzer.maxImporters; the next verdicts check them): {describe(left)}"
    )
    texts = await before_and_now()
    changed = [
        p
        for p in run_changes(source, touched)
        if not unread_by(source, p)
        and (
            texts is None
            or p not in texts[0]
            or p not in texts[1]  # a file whose texts were not had: may have changed
            or public_names_changed(texts[0][p], texts[1][p], p)
        )
    ]
    if not changed:
        return detail + " (no public name changed)", None
    return detail, (
        f"{len(left)} importer(s) of changed public names not checked: {describe(left)}"
    )


async def open_more_importers(
    source: DiagnosticsSource,
    touched: Collection[str],
    before_and_now: Callable[[], Awaitable[tuple[Mapping[str, str], Mapping[str, str]] | None]],
    timeout_s: float,
) -> tuple[list[str], dict[str, tuple[Diagnostic, ...]]] | None:
    """Importers left past the source's bound by earlier verdicts: the next
    batch is opened, its baseline taken with the analyzers shown the
    changed files as they were before the run (they were not open then).
    Returns the importers opened and the baselines had (an opened importer
    without one: the analyzers did not answer in time), nothing opened
    while a file the run deleted is gone (imports are resolved from the
    disk: a baseline now would hold its damage; they stay unopened until it
    is back or the changes pass); None when none is left or the state
    before the run is not known."""
    if not (
        isinstance(source, PartialImporters)
        and isinstance(source, CounterfactualDiagnostics)
        and source.importers_left()
    ):
        return None
    texts = await before_and_now()
    if texts is None:
        return None
    before, now = texts
    if any(text and not now[p] for p, text in before.items()):
        return [], {}
    opened = [p for p in await source.open_more_importers() if p not in touched]
    snap = await source.snapshot_with(before, opened, timeout_s) if opened else None
    if snap is None or snap.blind is not None or snap.stale:
        return opened, {}
    return opened, {p: tuple(d for d in snap.diagnostics if d.path == p) for p in opened}


async def check_more_importers(
    source: DiagnosticsSource,
    touched: Collection[str],
    before_and_now: Callable[[], Awaitable[tuple[Mapping[str, str], Mapping[str, str]] | None]],
    timeout_s: float,
    unbaselined: set[str],
    late: dict[str, tuple[Diagnostic, ...]],
) -> set[str]:
    """:func:`open_more_importers`, its baselines joining ``late`` and the
    importers opened without one ``unbaselined`` (not judged: they stay not
    checked). Returns ``unbaselined`` now."""
    found = await open_more_importers(source, touched, before_and_now, timeout_s)
    if found is None:
        return set(unbaselined)
    opened, had = found
    unbaselined.update(p for p in opened if p not in had)
    late.update(had)
    return set(unbaselined)
