"""Bring an isolated run's changes back into the person's folder.

The run's changes are its files' versions against the base it started
from (:func:`run_changes`). Each changed text file is cut into hunks
(:func:`~rein.checkpoints.hunks.compute_hunks`, as the review does), and
each hunk is found in the folder's file as it is NOW with
:func:`~rein.checkpoints.hunks.locate`, the review's own test: a hunk whose
lines the folder still has exactly as at the base applies cleanly; one whose
lines the folder changed since (or a file created, deleted or binary on
both sides differently) is a conflict, reported with the three versions
(base, ours: the folder's, theirs: the run's) and never applied. No
conflict markers and no ``.rej`` files are written anywhere.

The clean hunks go through the session's
:class:`~rein.harness.ports.Workspace` (the editor's ``applyEdit``, the
disk headless), one write per file carrying the text it was computed from,
so a keystroke in between refuses that file instead of losing it. The
person's index and staged changes are not touched: nothing here runs git
in their folder.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rein.checkpoints.hunks import apply_regions, compute_hunks, lines_of, locate
from rein.harness.errors import ConfigError, ToolError
from rein.harness.ports import Workspace
from rein.isolation._git import git
from rein.isolation.registry import IsolatedRecord
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "BringBack",
    "Conflict",
    "RunChange",
    "apply_changes",
    "keep_as_branch",
    "merge_text",
    "run_changes",
]


@dataclass(frozen=True, slots=True)
class RunChange:
    """One file the run changed: its bytes at the base and now (None: absent)."""

    path: str
    base: bytes | None
    run: bytes | None

    @property
    def kind(self) -> str:
        return "created" if self.base is None else "deleted" if self.run is None else "modified"


@dataclass(frozen=True, slots=True)
class Conflict:
    """A place the run and the folder both changed: never applied."""

    path: str
    base: str
    ours: str
    theirs: str
    reason: str = "the folder changed these lines since the run started"

    def to_json(self) -> dict[str, str]:
        return {
            "path": self.path,
            "base": self.base,
            "ours": self.ours,
            "theirs": self.theirs,
            "reason": self.reason,
        }


@dataclass(slots=True)
class BringBack:
    """What an apply did: the files written (``applied``), the hunks it
    applied, and the conflicts it left alone."""

    applied: list[str] = field(default_factory=list)
    hunks_applied: int = 0
    conflicts: list[Conflict] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "hunksApplied": self.hunks_applied,
            "conflicts": [c.to_json() for c in self.conflicts],
        }


# ------------------------------------------------------------ the run's changes


def run_changes(record: IsolatedRecord) -> list[RunChange]:
    """Every file of the person's folder the run created, changed or
    deleted, relative to the folder, in path order."""
    if record.kind == "git":
        return _git_changes(record)
    return _copy_changes(Path(record.base), Path(record.tree))


def _git_changes(record: IsolatedRecord) -> list[RunChange]:
    tree = Path(record.tree)
    git(tree, "add", "-A")  # the worktree's own index, not the person's
    scope = record.prefix or "."
    listed = git(
        tree, "diff", "--cached", "--name-only", "--no-renames", "-z", record.base, "--", scope
    ).stdout.decode(errors="surrogateescape")
    out: list[RunChange] = []
    for top_rel in sorted(filter(None, listed.split("\0"))):
        shown = git(tree, "cat-file", "blob", f"{record.base}:{top_rel}", check=False)
        base = shown.stdout if shown.returncode == 0 else None
        now = tree / top_rel
        run = now.read_bytes() if now.is_file() else None
        rel = top_rel[len(record.prefix) + 1 :] if record.prefix else top_rel
        out.append(RunChange(rel, base, run))
    return out


def _copy_changes(base: Path, tree: Path) -> list[RunChange]:
    paths = set(WorkspaceFilter(base).walk_files()) | set(WorkspaceFilter(tree).walk_files())
    out: list[RunChange] = []
    for rel in sorted(paths):
        before = (base / rel).read_bytes() if (base / rel).is_file() else None
        after = (tree / rel).read_bytes() if (tree / rel).is_file() else None
        if before != after:
            out.append(RunChange(rel, before, after))
    return out


# ------------------------------------------------------------ three-way, by hunk


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def _ours(base: Sequence[str], current: Sequence[str], region: tuple[int, int]) -> str:
    """The folder's lines where ``region`` of the base went (widened to
    every changed block that touches it)."""
    start, end = region
    lo: int | None = None
    hi: int | None = None
    matcher = difflib.SequenceMatcher(None, list(base), list(current), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 < start or i1 > end:
            continue
        if tag == "equal":
            a, b = max(i1, start), min(i2, end)
            if a > b:
                continue
            s, e = j1 + (a - i1), j1 + (b - i1)
        else:
            s, e = j1, j2
        lo = s if lo is None else min(lo, s)
        hi = e if hi is None else max(hi, e)
    if lo is None or hi is None:
        return ""
    return "".join(current[lo:hi])


def merge_text(path: str, base: str, run: str, current: str) -> tuple[str, int, list[Conflict]]:
    """``current`` with every hunk of base -> run that applies cleanly
    applied; the number applied and the conflicts."""
    base_l, run_l, cur_l = lines_of(base), lines_of(run), lines_of(current)
    clean: list[tuple[tuple[int, int], Sequence[str]]] = []
    conflicts: list[Conflict] = []
    for hunk in compute_hunks(base_l, run_l):
        where = locate(base_l, cur_l, hunk.old)
        if where is None and locate(run_l, cur_l, hunk.new) is not None:
            continue  # the folder has the run's lines there already (applied before)
        if where is None:
            conflicts.append(
                Conflict(
                    path, "".join(hunk.before), _ours(base_l, cur_l, hunk.old), "".join(hunk.after)
                )
            )
        else:
            clean.append((where, hunk.after))
    return "".join(apply_regions(cur_l, clean)), len(clean), conflicts


async def _current(workspace: Workspace, path: str) -> str | None:
    if not await workspace.exists(path):
        return None
    return (await workspace.read_text(path)).text


async def apply_changes(changes: Sequence[RunChange], workspace: Workspace) -> BringBack:
    """Apply every clean hunk of ``changes`` to ``workspace`` (the person's
    folder); report the conflicts, which are not applied."""
    out = BringBack()
    for change in changes:
        current = await _current(workspace, change.path)
        try:
            base, run = _text(change.base), _text(change.run)
        except UnicodeDecodeError:
            out.conflicts.append(
                Conflict(change.path, "", current or "", "", "a binary file: keep it as a branch")
            )
            continue
        if run == current:
            continue  # the folder has the run's version already
        if base is None or run is None or current is None:
            if current != base:
                reason = f"{change.kind} by the run, and the folder changed it since"
                out.conflicts.append(
                    Conflict(change.path, base or "", current or "", run or "", reason)
                )
                continue
            if await _write(workspace, change, run, current, out):
                out.hunks_applied += 1
            continue
        merged, applied, conflicts = merge_text(change.path, base, run, current)
        out.conflicts.extend(conflicts)
        if applied and merged != current and await _write(workspace, change, merged, current, out):
            out.hunks_applied += applied
    return out


async def _write(
    workspace: Workspace, change: RunChange, text: str | None, current: str | None, out: BringBack
) -> bool:
    """One file written (or deleted); a refused write (the file changed
    meanwhile, the editor said no) is reported as a conflict of the file."""
    try:
        if text is None:
            await workspace.delete(change.path)
        else:
            await workspace.write_text(change.path, text, expected_text=current)
    except ToolError as exc:
        base = _text(change.base) or ""
        out.conflicts.append(Conflict(change.path, base, current or "", text or "", str(exc)))
        return False
    out.applied.append(change.path)
    return True


# ------------------------------------------------------------------ a branch


def keep_as_branch(record: IsolatedRecord, name: str) -> str:
    """Commit the run's changes in its worktree and name the commit
    ``name`` (a new branch from the run's base: the commit the folder was
    at, then the folder's uncommitted changes at the start when there were
    any). Nothing is applied to the folder. Returns the commit."""
    if record.kind != "git":
        raise ConfigError(f"{record.folder} is not a git repository: it cannot keep a branch")
    tree = Path(record.tree)
    if git(tree, "check-ref-format", "--branch", name, check=False).returncode != 0:
        raise ConfigError(f"not a valid branch name: {name!r}")
    if git(tree, "rev-parse", "--verify", "-q", f"refs/heads/{name}", check=False).returncode == 0:
        raise ConfigError(f"the branch {name!r} exists already; nothing was changed")
    git(tree, "add", "-A")
    if git(tree, "diff", "--cached", "--quiet", check=False).returncode != 0:
        message = f"rein: isolated session {record.session_id}"
        git(tree, "commit", "-q", "--no-verify", "-m", message)
    git(tree, "branch", name, "HEAD")
    return git(tree, "rev-parse", "HEAD").stdout.decode().strip()
