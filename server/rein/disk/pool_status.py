"""What the analyzer pool says about itself in words: why diagnostics are
missing, why nobody looks, and the one line the terminal shows at start."""

from __future__ import annotations

from collections.abc import Sequence

from rein.disk.analyzer_server import _Analyzer

__all__ = ["blind", "describe", "missing_diagnostics"]


def missing_diagnostics(analyzers: Sequence[_Analyzer], wanted: set[str] | None) -> str | None:
    """Why some diagnostics are missing while others are there: an analyzer
    that is off (cooling down after repeated crashes) or restarting leaves
    every snapshot stale until it runs again; one that did not answer for a
    file within the bound leaves that file's stale. None when nothing is
    missing."""
    reasons: list[str] = []
    for a in analyzers:
        if a.alive:
            late = sorted(p for p in a.unanswered if wanted is None or p in wanted)
            reasons += [a.unanswered[p] for p in late]
        elif a.failure is not None:
            reasons.append(f"{a.spec.name} is not running ({a.failure})")
        else:
            reasons.append(f"{a.spec.name} is restarting")
    if not reasons:
        return None
    return "diagnostics are missing: " + "; ".join(reasons)


def _absent(
    analyzers: Sequence[_Analyzer], missing: Sequence[str], failed: Sequence[str]
) -> list[str]:
    return [
        *(f"{name} was not found" for name in missing),
        *failed,
        *(a.failure for a in analyzers if a.failure),
    ]


def blind(
    analyzers: Sequence[_Analyzer],
    configured: int,
    missing: Sequence[str],
    failed: Sequence[str],
) -> str | None:
    """Why no analyzer looks (of ``configured`` ones), or None while one runs."""
    if any(a.alive for a in analyzers):
        return None
    if not configured:
        return "no analyzer is configured"
    reasons = _absent(analyzers, missing, failed)
    if not reasons:
        return "no analyzer is running"
    return f"no analyzer is running ({'; '.join(reasons)})"


def describe(
    analyzers: Sequence[_Analyzer],
    configured: int,
    missing: Sequence[str],
    failed: Sequence[str],
) -> str:
    """Which analyzers run, and their versions, in one line."""
    running = [
        f"{a.spec.name} {a.version}" if a.version else a.spec.name for a in analyzers if a.alive
    ]
    if running:
        absent = _absent(analyzers, missing, failed)
        return ", ".join(running) + (f" ({'; '.join(absent)})" if absent else "")
    reason = blind(analyzers, configured, missing, failed) or "none"
    return f"none ({reason}; the analyzer gate is unverified)"
