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

import stat
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from rein.checkpoints.hunks import compute_hunks, lines_of
from rein.harness.errors import ConfigError, ReinError
from rein.harness.file_updates import PartlyAppliedError
from rein.harness.ports import FileUpdate, MultiFileWorkspace, Workspace
from rein.isolation._git import GIT_SLOW_TIMEOUT_S, git
from rein.isolation.registry import IsolatedRecord
from rein.isolation.three_way import (
    BringBack,
    Conflict,
    clean_hunk,
    hunk_id,
    hunk_tag,
    merge_into,
    whole_hunk,
)
from rein.tools.disk_read import BOM
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "MAX_FILE_BYTES",
    "RunChange",
    "apply_changes",
    "hunk_ids",
    "hunks_json",
    "keep_as_branch",
    "review_changes",
    "run_changes",
    "unknown_hunks",
]


#: A file of the run larger than this is not brought back (a conflict).
MAX_FILE_BYTES = 2 * 1024 * 1024
_BOM_BYTES = BOM.encode("utf-8")


@dataclass(frozen=True, slots=True)
class RunChange:
    """One file the run changed: its bytes at the base and now (None:
    absent), whether it is executable on each side (and in the person's
    folder now: None when it is not a regular file there, or not known),
    and ``problem`` when the run's side cannot be brought back at all (a
    symbolic link, not a regular file, too large): such a change is always
    a conflict."""

    path: str
    base: bytes | None
    run: bytes | None
    problem: str = ""
    base_exec: bool = False
    run_exec: bool = False
    folder_exec: bool | None = None

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


# ------------------------------------------------------------ the run's changes


def run_changes(record: IsolatedRecord) -> list[RunChange]:
    """Every file of the person's folder the run created, changed or
    deleted, relative to the folder, in path order (each with its mode in
    the folder now)."""
    if record.kind == "git":
        changes = _git_changes(record)
    else:
        changes = _copy_changes(Path(record.base), Path(record.tree))
    folder = Path(record.folder)
    return [replace(c, folder_exec=_executable(folder / c.path)) for c in changes]


def _executable(path: Path) -> bool | None:
    """Whether the regular file ``path`` is executable (None: it is not one)."""
    try:
        st = path.lstat()
    except OSError:
        return None
    return bool(st.st_mode & 0o111) if stat.S_ISREG(st.st_mode) else None


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


# ------------------------------------------------------------ the apply


def _text(data: bytes | None) -> str | None:
    """``data`` as the workspace reads it: UTF-8, without its byte order
    mark (the workspace keeps a file's mark when it writes it)."""
    return None if data is None else data.decode("utf-8-sig")


def hunk_ids(changes: Sequence[RunChange]) -> list[str]:
    """Every hunk id of ``changes`` (the folder is not read: an id depends
    on the run only), in order."""
    return [i for change in changes for i in _file_ids(change)]


def _file_ids(change: RunChange) -> list[str]:
    return [hunk_id(change.path, index, tag) for index, tag in _file_hunks(change)]


def _file_hunks(change: RunChange) -> list[tuple[int, str]]:
    """The index and :func:`hunk_tag` of each hunk of ``change``: one (0)
    for a file not merged as text (its bytes' tag) or created or deleted
    by the run (the whole file's)."""
    try:
        base, run = _text(change.base), _text(change.run)
    except UnicodeDecodeError:
        return [(0, hunk_tag(change.base, change.run))] if change.base != change.run else []
    if change.problem:
        return [(0, hunk_tag(change.base, change.run))]
    if base is None or run is None:
        whole = whole_hunk(base, run)
        return [(0, hunk_tag(whole.before, whole.after))]
    return [
        (h.index, hunk_tag(h.before, h.after)) for h in compute_hunks(lines_of(base), lines_of(run))
    ]


def _first_tag(change: RunChange) -> str:
    """The tag of ``change``'s hunk 0 (a conflict of the whole file is it)."""
    hunks = _file_hunks(change)
    return hunks[0][1] if hunks else hunk_tag(change.base, change.run)


def unknown_hunks(keep: Iterable[str], changes: Sequence[RunChange]) -> str:
    """What is wrong with the kept ids ``keep`` ("" when each is a hunk of
    ``changes``): an id the run no longer has at its place changed since
    it was listed (a new prompt, a hand edit in the copy)."""
    known = set(hunk_ids(changes))
    unknown = sorted(set(keep) - known)
    if not unknown:
        return ""
    places = {i.rsplit("~", 1)[0] for i in known}
    changed = [u for u in unknown if u.rsplit("~", 1)[0] in places]
    if changed:
        shown = ", ".join(repr(u[:120]) for u in changed[:5])
        return f"{shown}: changed since it was listed (list the hunks again)"
    return "no such hunk of the session: " + ", ".join(repr(u[:120]) for u in unknown[:5])


def _settle(out: BringBack, changes: Sequence[RunChange], applied: Container[str]) -> BringBack:
    """``out.left_aside``: every hunk id of ``changes`` not ``applied`` and
    not in the folder already, in order."""
    there = set(out.already_there)
    out.left_aside = [i for i in hunk_ids(changes) if i not in applied and i not in there]
    return out


def hunks_json(changes: Sequence[RunChange], reviewed: BringBack) -> list[dict[str, object]]:
    """:func:`review_changes`' answer per file, in the run's order: its
    ``change``, its ``hunks`` (the review's hunk shape, with an ``id`` and
    ``status`` clean or conflict, a conflict's both sides) and its
    ``notes`` (what is not a hunk: a mode the run changed)."""
    out: list[dict[str, object]] = []
    for change in changes:
        hunks = [h.to_json() for h in reviewed.hunks if h.path == change.path]
        notes = [c.reason for c in reviewed.conflicts if c.path == change.path and c.index is None]
        if hunks or notes:
            out.append({"path": change.path, "change": change.kind, "hunks": hunks, "notes": notes})
    return out


async def _current(workspace: Workspace, path: str) -> str | None:
    if not await workspace.exists(path):
        return None
    return (await workspace.read_text(path)).text


@dataclass(frozen=True, slots=True)
class _PlannedWrite:
    """One file's planned write: ``text`` None deletes it; ``current`` is
    what the folder had when it was computed; ``ids``: its hunks applied."""

    change: RunChange
    text: str | None
    current: str | None
    ids: tuple[str, ...]


async def review_changes(
    changes: Sequence[RunChange], workspace: Workspace, *, can_branch: bool = False
) -> BringBack:
    """Every hunk of ``changes`` against ``workspace`` (the person's folder)
    as it is now, clean or conflicting (``hunks``, ``conflicts``); nothing
    is written."""
    out = BringBack()
    for change in changes:
        await _plan(change, workspace, can_branch, out, None)
    return _settle(out, changes, ())


async def apply_changes(
    changes: Sequence[RunChange],
    workspace: MultiFileWorkspace,
    *,
    can_branch: bool = False,
    keep: Container[str] | None = None,
) -> BringBack:
    """Apply every clean hunk of ``changes`` to ``workspace`` (the person's
    folder) as ONE change (one mutation generation, one checkpoint change
    when a run records it); report the conflicts, which are not applied.
    ``keep``: only the hunks with these ids (:func:`hunk_id`) are applied,
    the others are left aside. Every file is read and merged before
    anything is written, and no error of one file stops the others: a file
    that cannot be read is a conflict, and when the change is refused
    because a file changed in the meantime, the files that changed become
    conflicts and the others are applied (one more try). ``can_branch``:
    the copy is a git worktree (the binary advice says so)."""
    out = BringBack()
    plan: list[_PlannedWrite] = []
    for change in changes:
        planned = await _plan(change, workspace, can_branch, out, keep)
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
                for p in plan:
                    reason = str(exc)
                    if p.change.path in exc.changed:
                        reason = f"left changed by the failed apply: {exc}"
                    _refused(out, p, reason)
                break
            moved = [p for p in plan if not await _still(workspace, p)]
            if attempt == 0 and moved:
                for planned in moved:
                    _refused(out, planned, "the file changed while it was applied")
                plan = [p for p in plan if p not in moved]
                continue
            for p in plan:
                _refused(out, p, str(exc))
            break
        out.applied.extend(p.change.path for p in plan)
        out.hunks_applied += sum(len(p.ids) for p in plan)
        return _settle(out, changes, {i for p in plan for i in p.ids})
    return _settle(out, changes, ())


async def _still(workspace: Workspace, planned: _PlannedWrite) -> bool:
    """The folder's file still holds what the plan was computed from."""
    try:
        return await _current(workspace, planned.change.path) == planned.current
    except (ReinError, OSError):
        return False


def _refused(out: BringBack, planned: _PlannedWrite, reason: str) -> None:
    """A planned file that was not written: a conflict of the file, its
    hunks left aside."""
    base = _text(planned.change.base) or ""
    path = planned.change.path
    out.conflicts.append(Conflict(path, base, planned.current or "", planned.text or "", reason))


async def _plan(
    change: RunChange,
    workspace: Workspace,
    can_branch: bool,
    out: BringBack,
    keep: Container[str] | None,
) -> _PlannedWrite | None:
    """What to write for ``change`` (None: nothing), its hunks and
    conflicts noted in ``out``."""
    path = change.path
    if change.problem:
        out.conflict(Conflict(path, "", "", "", change.problem, index=0, tag=_first_tag(change)))
        return None
    if change.run is not None and change.run_exec not in (change.base_exec, change.folder_exec):
        made = "executable" if change.run_exec else "not executable"
        reason = f"the run made it {made}: Rein brings back contents only, set the mode by hand"
        out.conflict(Conflict(path, "", "", "", reason))
    try:
        base, run = _text(change.base), _text(change.run)
    except UnicodeDecodeError:
        # Before the folder's file is read: a binary file there (the usual
        # case) is not "a file that cannot be read", it is one not merged.
        if change.base == change.run:
            return None  # only the mode changed
        advice = "keep it as a branch or copy it by hand" if can_branch else "copy it by hand"
        reason = f"a binary file: not merged ({advice} from {path})"
        out.conflict(Conflict(path, "", "", "", reason, index=0, tag=_first_tag(change)))
        return None
    try:
        current = await _current(workspace, path)
    except (ReinError, OSError) as exc:
        reason = f"the folder's file cannot be read: {exc}"
        out.conflict(Conflict(path, "", "", "", reason, index=0, tag=_first_tag(change)))
        return None
    if base == run:
        return None  # only the mode changed
    if run == current:
        out.already_there.extend(_file_ids(change))  # the folder has the run's version
        return None
    if base is None or run is None or current is None:
        whole = whole_hunk(base, run)
        if current != base:
            reason = f"{change.kind} by the run, and the folder changed it since"
            tag = _first_tag(change)
            conflict = Conflict(
                path, base or "", current or "", run or "", reason, index=0, tag=tag
            )
            out.conflict(conflict, whole.header, whole.diff_lines())
            return None
        state = clean_hunk(path, whole)
        out.hunks.append(state)
        if keep is not None and state.id not in keep:
            out.left_aside.append(state.id)
            return None
        text = run
        if current is None and change.run is not None and change.run.startswith(_BOM_BYTES):
            text = BOM + (run or "")  # a file the run created with a mark keeps it
        return _PlannedWrite(change, text, current, (state.id,))
    before = len(out.hunks)
    merged, _ = merge_into(path, base, run, current, keep, out)
    ids = tuple(
        h.id for h in out.hunks[before:] if h.status == "clean" and h.id not in out.left_aside
    )
    if ids and merged != current:
        return _PlannedWrite(change, merged, current, ids)
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
