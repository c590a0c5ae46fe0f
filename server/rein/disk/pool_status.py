"""What the analyzer pool says of itself: which analyzers run, for which
languages and at which version (:func:`describe`, the analyzers line of
``rein run`` and ``rein acp``), why none looks (:func:`blind`) and why
some diagnostics are missing (:func:`missing_diagnostics`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from rein.disk.analyzer_specs import AnalyzerSpec

__all__ = [
    "PoolView",
    "blind",
    "describe",
    "languages",
    "missing_diagnostics",
    "not_analysed_text",
    "not_found",
    "server_version",
    "why_not_covered",
]


class _Running(Protocol):
    @property
    def spec(self) -> AnalyzerSpec: ...
    @property
    def alive(self) -> bool: ...
    @property
    def version(self) -> str | None: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def unanswered(self) -> Mapping[str, str]: ...
    @property
    def awaiting(self) -> Mapping[str, int]: ...
    @property
    def changed_while_down(self) -> set[str]: ...
    def owns(self, path: str) -> bool: ...


class PoolView(Protocol):
    """The pool's parts its status is told from."""

    @property
    def specs(self) -> Sequence[AnalyzerSpec]: ...
    @property
    def missing(self) -> Sequence[str]: ...
    @property
    def failed(self) -> Sequence[str]: ...
    @property
    def analyzers(self) -> Sequence[_Running]: ...


def languages(spec: AnalyzerSpec) -> str:
    """The languages a spec analyses, by languageId (``typescript, javascript``)."""
    ids = dict.fromkeys(spec.language_ids.values()) or {spec.language_id: None}
    out: list[str] = []
    for language in ids:
        base = language.removesuffix("react")  # typescriptreact: typescript's
        if base not in out:
            out.append(base)
    return ", ".join(out)


def not_found(pool: PoolView, name: str) -> str:
    """``gopls was not found``; with the program looked for when it has
    another name than its preset: ``typescript (typescript-language-server)
    was not found`` ("bash was not found" read as if the shell were
    missing)."""
    program = next((s.command[0] for s in pool.specs if s.name == name), name)
    program = program.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name} was not found" if program == name else f"{name} ({program}) was not found"


def _absent(pool: PoolView) -> list[str]:
    return [
        *(not_found(pool, name) for name in pool.missing),
        *pool.failed,
        *(a.failure for a in pool.analyzers if a.failure),
    ]


def blind(pool: PoolView) -> str | None:
    """Why no analyzer looks, or None while one runs."""
    if any(a.alive for a in pool.analyzers):
        return None
    reasons = _absent(pool)
    if not pool.specs:
        return "no analyzer is configured"
    if not reasons:
        return "no analyzer is running"
    return f"no analyzer is running ({'; '.join(reasons)})"


_SAID_VERSION = re.compile(r"\bversion\s+(v?\d[\w.+-]*)")


def server_version(info: Any) -> str | None:
    """The version a server's ``initialize`` result names (its
    ``serverInfo.version``), or None. gopls sends its whole build
    information there as JSON (``{"GoVersion": ..., "Version": "v0.16.2"}``):
    its ``Version`` is taken. clangd sends a sentence (``Debian clangd
    version 14.0.6 linux+grpc x86_64-pc-linux-gnu``): the number after
    ``version`` is taken."""
    if not isinstance(info, dict) or not info.get("version"):
        return None
    version = str(info["version"]).strip()
    if version.startswith("{"):
        try:
            build = json.loads(version)
        except ValueError:
            return None
        inner = build.get("Version") if isinstance(build, dict) else None
        return inner if isinstance(inner, str) and inner else None
    said = _SAID_VERSION.search(version)
    return said.group(1) if said else version


def why_not_covered(pool: PoolView, suffix: str) -> str | None:
    """Why files ending in ``suffix`` are analysed by nobody: the
    configured servers for them that were not found or did not start
    (``gopls was not found``), or None (none is configured)."""
    reasons: list[str] = []
    running = {a.spec.name: a for a in pool.analyzers}
    for spec in pool.specs:
        if suffix not in spec.extensions:
            continue
        if spec.name in pool.missing:
            reasons.append(not_found(pool, spec.name))
        elif spec.name in running:
            failure = running[spec.name].failure
            reasons.append(f"{spec.name} is not running ({failure})" if failure else "")
        else:
            failed = [f for f in pool.failed if f.startswith(f"{spec.name} ")]
            reasons += failed or [f"{spec.name} did not start"]
    said = [r for r in reasons if r]
    return "; ".join(said) if said else None


def describe(pool: PoolView) -> str:
    """One line for the terminal: which analyzers run, their versions and
    languages, then those that do not (``ruff 0.6 (python), gopls v0.16
    (go); basedpyright was not found``)."""
    running: list[str] = []
    for a in pool.analyzers:
        if not a.alive:
            continue
        about = languages(a.spec) + (f"; {a.spec.note}" if a.spec.note else "")
        name = f"{a.spec.name} {a.version}" if a.version else a.spec.name
        running.append(f"{name} ({about})")
    if running:
        absent = _absent(pool)
        return "; ".join([", ".join(running), *absent])
    reason = blind(pool) or "none"
    return f"none ({reason}; the analyzer gate is unverified)"


def not_analysed_text(counts: Mapping[str, int]) -> str | None:
    """``not analysed: .rs (3 files), .java (1 file)``, or None."""
    if not counts:
        return None
    parts = [f"{ext} ({n} file{'s' if n != 1 else ''})" for ext, n in counts.items()]
    return "not analysed: " + ", ".join(parts)


def missing_diagnostics(analyzers: Sequence[_Running], wanted: set[str] | None) -> str | None:
    """Why some diagnostics are missing while others are there: an analyzer
    that is off (cooling down after repeated crashes) or restarting leaves
    stale what it owed (a change it had not answered when it stopped) and
    its files changed since (asked for some files: any of its files among
    them); the other analyzers' part stands; one that did not answer for a
    file within the bound leaves that file's stale. None when nothing is
    missing."""
    reasons: list[str] = []
    for a in analyzers:
        if a.alive:
            late = sorted(p for p in a.unanswered if wanted is None or p in wanted)
            reasons += [a.unanswered[p] for p in late]
        elif not (
            any(a.owns(p) for p in wanted)
            if wanted is not None
            else a.awaiting or a.changed_while_down
        ):
            continue  # none of its files changed since it stopped: the verdict needs it not
        elif a.failure is not None:
            reasons.append(f"{a.spec.name} is not running ({a.failure})")
        else:
            reasons.append(f"{a.spec.name} is restarting")
    if not reasons:
        return None
    return "diagnostics are missing: " + "; ".join(reasons)
