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

The clean hunks go through the session's workspace as ONE multi-file change
(:meth:`~rein.harness.ports.MultiFileWorkspace.apply_changes`: the editor's
one ``applyEdit``, the ACP client's buffers, the disk headless; one
mutation generation), each file carrying the text it was computed from, so
a keystroke in between refuses that file (a conflict) instead of losing it. The
person's index and staged changes are not touched: nothing here runs git
in their folder.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rein.checkpoints.hunks import apply_regions, compute_hunks, lines_of, locate
from rein.harness.errors import ConfigError, ReinError
from rein.harness.file_updates import PartlyAppliedError
from rein.harness.ports import FileUpdate, MultiFileWorkspace, Workspace
from rein.isolation._git import GIT_SLOW_TIMEOUT_S, git
from rein.isolation.registry import IsolatedRecord
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "MAX_FILE_BYTES",
    "BringBack",
    "Conflict",
    "RunChange",
    "apply_changes",
    "keep_as_branch",
    "merge_text",
    "run_changes",
]


#: A file of the run larger than this is not brought back (a conflict).
MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class RunChange:
    """One file the run changed: its bytes at the base and now (None:
    absent), whether it is executable on each side, and ``problem`` when
    the run's side cannot be brought back at all (a symbolic link, not a
    regular file, too large): such a change is always a conflict."""

    path: str
    base: bytes | None
    run: bytes | None
    problem: str = ""
    base_exec: bool = False
    run_exec: bool = False

    @property
    def kind(self) -> str:
        return "created" if self.base is None else "deleted" if self.run is None else "modified"


def _read_side(path: Path) -> tuple[bytes | None, bool, str]:
    """A file of a copy without following a link: (bytes or None when
    absent, executable, the problem that keeps it from being brought back)."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None, False, ""
    if stat.S_ISLNK(st.st_mode):
        return None, False, "a symbolic link made by the run: never brought back"
    if not stat.S_ISREG(st.st_mode):
        return None, False, "not a regular file: never brought back"
    executable = bool(st.st_mode & 0o111)
    if st.st_size > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES // (1024 * 1024)
        return None, executable, f"larger than {limit} MB: apply it by hand from the copy"
    try:
        return path.read_bytes(), executable, ""
    except OSError as exc:
        return None, executable, f"the run's file cannot be read: {exc.strerror or exc}"


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
    git(tree, "add", "-A", timeout=GIT_SLOW_TIMEOUT_S)  # the worktree's own index
    scope = record.prefix or "."
    raw = git(
        tree,
        "diff",
        "--cached",
        "--raw",
        "--no-renames",
        "-z",
        "--no-abbrev",
        record.base,
        "--",
        scope,
    ).stdout.decode(errors="surrogateescape")
    fields = raw.split("\0")
    out: list[RunChange] = []
    for meta, top_rel in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        old_mode = meta[1:].split(" ", 1)[0]
        base: bytes | None = None
        if old_mode != "000000":
            # --filters: the base as the working tree has it (eol, smudge),
            # the form the run's file is compared with.
            shown = git(tree, "cat-file", "--filters", f"{record.base}:{top_rel}", check=False)
            base = shown.stdout if shown.returncode == 0 else None
        run, run_exec, problem = _read_side(tree / top_rel)
        rel = top_rel[len(record.prefix) + 1 :] if record.prefix else top_rel
        out.append(RunChange(rel, base, run, problem, old_mode == "100755", run_exec))
    return sorted(out, key=lambda c: c.path)


def _copy_changes(base: Path, tree: Path) -> list[RunChange]:
    paths = set(WorkspaceFilter(base).walk_files()) | set(WorkspaceFilter(tree).walk_files())
    out: list[RunChange] = []
    for rel in sorted(paths):
        before, before_exec, _ = _read_side(base / rel)
        after, after_exec, problem = _read_side(tree / rel)
        if before != after or before_exec != after_exec or problem:
            out.append(RunChange(rel, before, after, problem, before_exec, after_exec))
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


@dataclass(frozen=True, slots=True)
class _PlannedWrite:
    """One file's planned write: ``text`` None deletes it; ``current`` is
    what the folder had when it was computed."""

    change: RunChange
    text: str | None
    current: str | None
    hunks: int


async def apply_changes(
    changes: Sequence[RunChange], workspace: MultiFileWorkspace, *, can_branch: bool = False
) -> BringBack:
    """Apply every clean hunk of ``changes`` to ``workspace`` (the person's
    folder) as ONE change (one mutation generation, one checkpoint change
    when a run records it); report the conflicts, which are not applied.
    Every file is read and merged before anything is written, and no error
    of one file stops the others: a file that cannot be read is a
    conflict, and when the change is refused because a file changed in the
    meantime, the files that changed become conflicts and the others are
    applied (one more try). ``can_branch``: the copy is a git worktree (the
    binary advice says so)."""
    out = BringBack()
    plan: list[_PlannedWrite] = []
    for change in changes:
        planned = await _plan(change, workspace, can_branch, out)
        if planned is not None:
            plan.append(planned)
    for attempt in range(2):
        if not plan:
            break
        try:
            await workspace.apply_changes(
                [FileUpdate(p.change.path, p.text, p.current) for p in plan],
                label="Rein: bring back an isolated run",
            )
        except (ReinError, OSError) as exc:
            if isinstance(exc, PartlyAppliedError):
                # Some files stay written (they changed again, so they were
                # not put back): the apply's own doing, not a file that
                # moved, and not retried.
                out.conflicts.extend(
                    _refused(p, f"left changed by the failed apply: {exc}")
                    if p.change.path in exc.changed
                    else _refused(p, str(exc))
                    for p in plan
                )
                break
            moved = [p for p in plan if not await _still(workspace, p)]
            if attempt == 0 and moved:
                for planned in moved:
                    out.conflicts.append(_refused(planned, "the file changed while it was applied"))
                plan = [p for p in plan if p not in moved]
                continue
            out.conflicts.extend(_refused(p, str(exc)) for p in plan)
            break
        out.applied.extend(p.change.path for p in plan)
        out.hunks_applied += sum(p.hunks for p in plan)
        break
    return out


async def _still(workspace: Workspace, planned: _PlannedWrite) -> bool:
    """The folder's file still holds what the plan was computed from."""
    try:
        return await _current(workspace, planned.change.path) == planned.current
    except (ReinError, OSError):
        return False


def _refused(planned: _PlannedWrite, reason: str) -> Conflict:
    """A planned file that was not written, as a conflict of the file."""
    base = _text(planned.change.base) or ""
    return Conflict(planned.change.path, base, planned.current or "", planned.text or "", reason)


async def _plan(
    change: RunChange, workspace: Workspace, can_branch: bool, out: BringBack
) -> _PlannedWrite | None:
    """What to write for ``change`` (None: nothing), conflicts noted in ``out``."""
    if change.problem:
        out.conflicts.append(Conflict(change.path, "", "", "", change.problem))
        return None
    try:
        current = await _current(workspace, change.path)
    except (ReinError, OSError) as exc:
        reason = f"the folder's file cannot be read: {exc}"
        out.conflicts.append(Conflict(change.path, "", "", "", reason))
        return None
    if change.run is not None and change.base_exec != change.run_exec:
        made = "executable" if change.run_exec else "not executable"
        reason = f"the run made it {made}: Rein brings back contents only, set the mode by hand"
        out.conflicts.append(Conflict(change.path, "", "", "", reason))
    try:
        base, run = _text(change.base), _text(change.run)
    except UnicodeDecodeError:
        advice = "keep it as a branch or copy it by hand" if can_branch else "copy it by hand"
        reason = f"a binary file: not merged ({advice} from {change.path})"
        out.conflicts.append(Conflict(change.path, "", current or "", "", reason))
        return None
    if run == current or base == run:
        return None  # the folder has the run's version already / only the mode changed
    if base is None or run is None or current is None:
        if current != base:
            reason = f"{change.kind} by the run, and the folder changed it since"
            out.conflicts.append(
                Conflict(change.path, base or "", current or "", run or "", reason)
            )
            return None
        return _PlannedWrite(change, run, current, 1)
    merged, applied, conflicts = merge_text(change.path, base, run, current)
    out.conflicts.extend(conflicts)
    if applied and merged != current:
        return _PlannedWrite(change, merged, current, applied)
    return None


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
