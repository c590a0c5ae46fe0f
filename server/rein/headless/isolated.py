"""``rein run --isolated`` and ``rein apply``: a headless run in its own
copy of the folder, and its changes brought back (or kept as a branch, or
discarded) afterwards. The parts are in :mod:`rein.isolation`.

``rein apply`` brings the clean hunks (or only the ``--hunks`` kept, ids
as ``--list`` prints them) back as one change of a new session of the
folder (stored: ``rein undo --session S`` reverts the whole apply),
with the folder's analyzers started as ``rein run`` starts them and its
gates judging the applied files against their state before the apply
(:func:`rein.isolation.apply_run.bring_back_as_run`); the verdict is
printed and never undoes the apply."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ConfigError, ModelError, ReinError
from rein.harness.ports import ModelDelta, ModelRequest
from rein.headless.apply_terminated import ApplyArgs, Progress, report_terminated
from rein.headless.terminate import Termination, sigterm_cancels
from rein.hosting.headless import HeadlessSession
from rein.hosting.isolated_apply import bring_back_into
from rein.isolation.apply_run import BroughtBack
from rein.isolation.bring_back import (
    hunks_json,
    keep_as_branch,
    review_changes,
    run_changes,
    unknown_hunks,
)
from rein.isolation.cleanup import remove_isolated, sweep
from rein.isolation.registry import IsolatedRecord, Registry
from rein.isolation.three_way import BringBack, Conflict
from rein.isolation.worktree import create_isolated
from rein.session import new_session_id
from rein.store import SqliteStore

__all__ = [
    "ApplyArgs",
    "abandon_isolated",
    "apply_command",
    "apply_isolated",
    "finish_isolated",
    "start_isolated",
]

#: rein apply's exit codes: 0 all applied; 3 conflicts left; 2 refused.
APPLY_CONFLICTS = 3


async def _stored_sessions(storage: str) -> set[str] | None:
    """The ids the session store under ``storage`` has (None when there is
    no store to ask: then no finished copy is removed for being unstored)."""
    if not (Path(storage) / "sessions.db").is_file():
        return None
    try:
        store = SqliteStore.open(storage)
    except ReinError:
        return None
    try:
        return {record.id for record in await store.list_sessions()}
    except ReinError:
        return None
    finally:
        try:
            store.close()
        except ReinError:
            pass


async def _sweep(registry: Registry, storage: str) -> list[str]:
    """Remove the copies of crashed runs and of stored sessions that are gone."""
    stored = await _stored_sessions(storage)
    exists = None if stored is None else stored.__contains__
    return await anyio.to_thread.run_sync(lambda: sweep(registry, exists))


async def start_isolated(folder: Path, storage: str) -> IsolatedRecord:
    """Clean what crashed runs (and deleted sessions) left, then make this run's copy."""
    registry = Registry(storage)
    for gone in await _sweep(registry, storage):
        print(f"! removed the isolated copy of {gone} (its session was gone)", file=sys.stderr)
    return create_isolated(folder, registry, new_session_id())


def finish_isolated(
    record: IsolatedRecord,
    storage: str,
    status: str,
    as_json: bool,
    touched: Sequence[str] = (),
) -> dict[str, object]:
    """After the run: keep the copy for ``rein apply`` when the run changed
    something, remove it otherwise; say what to do next. ``touched``: the
    files the run's checkpoints say it changed; those still in the copy
    that the bring-back leaves out (git or Rein ignores them) are named,
    ``ignored``, and keep the copy (it removed them unsaid)."""
    registry = Registry(storage)
    changes = run_changes(record)
    known = {c.path for c in changes}
    ignored = sorted(p for p in set(touched) - known if (record.root / p).is_file())
    where = f" --storage {shlex.quote(storage)}"
    info: dict[str, object] = {
        "sessionId": record.session_id,
        "verdict": status,
        "changed": [{"path": c.path, "change": c.kind} for c in changes],
        "ignored": ignored,
        "worktree": str(record.root),
    }
    if not changes and not ignored:
        remove_isolated(registry, record)
        info["worktree"] = None
        if not as_json:
            print(f"Isolated session {record.session_id}: {status}; no changes", file=sys.stderr)
        return info
    registry.finish(record.session_id, status, stored=True)
    if not as_json:
        discard = f"  discard it:       rein apply {record.session_id} --discard{where}"
        if changes:
            listed = ", ".join(f"{c.path} ({c.kind})" for c in changes)
            print(
                f"Isolated session {record.session_id}: {status}; changed {listed}\n"
                f"  apply it with:    rein apply {record.session_id}{where}\n"
                f"  keep as a branch: rein apply {record.session_id} --branch NAME{where}\n"
                f"{discard}",
                file=sys.stderr,
            )
        else:
            print(
                f"Isolated session {record.session_id}: {status}; nothing to apply\n{discard}",
                file=sys.stderr,
            )
        if ignored:
            print(
                f"  not brought back (ignored; copy them by hand before you apply or "
                f"discard): {', '.join(ignored)} in {record.root}",
                file=sys.stderr,
            )
    return info


def abandon_isolated(record: IsolatedRecord, storage: str) -> bool:
    """After an error or an abort: remove the copy while its run is still
    recorded as running (nothing to bring back). Once :func:`finish_isolated`
    kept it (and printed how to apply it), an error after that (a closed
    pipe, an interrupt) leaves it for ``rein apply``. True when removed."""
    registry = Registry(storage)
    try:
        stored = registry.get(record.session_id)
    except ConfigError:
        return False
    if stored is None or stored.status != "running":
        return False
    remove_isolated(registry, stored)
    return True


def apply_command(
    session_id: str,
    storage: str | None,
    config_file: str | None,
    branch: str | None,
    discard: bool,
    list_only: bool,
    hunks: str | None,
    *,
    as_json: bool,
) -> int:
    """``rein apply`` from its command line (``hunks``: ids, comma separated)."""
    from rein.config_file import build_config
    from rein.store import default_storage_path

    try:
        config = build_config(config_file, {})
    except ConfigError as exc:
        print(f"rein apply: {exc}", file=sys.stderr)
        return 2
    kept = tuple(h for h in hunks.split(",") if h) if hunks is not None else None
    where = str(
        Path(storage or config.storage_path or default_storage_path()).expanduser().absolute()
    )
    # The folder's gates' sandbox hides the storage folder.
    config = config.model_copy(update={"storage_path": where})
    return apply_isolated(
        ApplyArgs(session_id, where, branch, discard, as_json, config, list_only, kept)
    )


def _show(result: BringBack) -> None:
    for path in result.applied:
        print(f"applied   {path}")
    for conflict in result.conflicts:
        print(f"conflict  {conflict.path}: {conflict.reason}")
        _sides(conflict)
    aside = [i for i in result.left_aside if i not in {c.hunk for c in result.conflicts}]
    if aside:
        print(f"left aside (not applied): {', '.join(aside)}")
    if result.already_there:
        print(f"in the folder already: {', '.join(result.already_there)}")


def _sides(conflict: Conflict) -> None:
    if not (conflict.base or conflict.ours or conflict.theirs):
        return  # a note on the whole file (a mode, a link, a binary file): its reason says it
    for label, text in (
        ("base", conflict.base),
        ("ours (the folder)", conflict.ours),
        ("theirs (the run)", conflict.theirs),
    ):
        print(f"  {label}:")
        for line in text.splitlines() or ["(nothing)"]:
            print(f"    | {line}")


def apply_isolated(args: ApplyArgs) -> int:
    """``rein apply``: 0 all applied, 3 conflicts left (the other hunks
    applied, the copy kept), 2 refused, 143 stopped by SIGTERM
    (:mod:`rein.headless.apply_terminated`)."""
    return anyio.run(_terminable, args)


async def _terminable(args: ApplyArgs) -> int:
    """:func:`_apply_isolated`, a SIGTERM stopping it where it is safe to:
    held off the write of the files (so the folder is as before or fully
    applied), then reported and recorded (exit 143)."""
    progress = Progress()
    with sigterm_cancels(_heard) as terminated:
        try:
            code = await _apply_isolated(args, progress, terminated)
        except asyncio.CancelledError:
            if not terminated():
                raise
            return await report_terminated(args, progress)
    if terminated():  # it came during a last step that could not stop
        return await report_terminated(args, progress)
    return code


def _heard() -> None:
    print(
        "rein apply: SIGTERM: stopping (a write of the folder's files that began is finished first)",
        file=sys.stderr,
        flush=True,
    )


async def _apply_isolated(args: ApplyArgs, progress: Progress, terminated: Termination) -> int:
    registry = Registry(args.storage)
    try:
        await _sweep(registry, args.storage)
        record = registry.get(args.session_id)
        if record is None:
            raise ConfigError(
                f"no isolated session {args.session_id!r} in {registry.dir} "
                "(applied or discarded already, or another --storage)"
            )
        if record.status == "running" and not Registry.crashed(record):
            raise ConfigError(f"the isolated session {args.session_id} is still running")
        progress.record = record
        if not args.as_json:
            print(_verdict_line(record), file=sys.stderr)
        if not args.discard and not await anyio.Path(record.folder).is_dir():
            raise ConfigError(
                f"the folder {record.folder} is gone (moved or deleted): nothing to apply to "
                f"(discard the copy with rein apply {record.session_id} --discard "
                f"--storage {shlex.quote(args.storage)})"
            )
        if args.discard:
            remove_isolated(registry, record)
            progress.done = f"discarded {record.session_id}"
            _say(args, {"discarded": record.session_id}, progress.done)
            return 0
        if args.list_only:
            return await _list(record, args)
        if args.hunks is not None:
            if not args.hunks:
                raise ConfigError("--hunks: no hunk id given (to keep nothing, use --discard)")
            wrong = unknown_hunks(args.hunks, run_changes(record))
            if wrong:
                raise ConfigError(f"--hunks: {wrong}")
        if args.branch is not None:
            commit = keep_as_branch(record, args.branch)
            remove_isolated(registry, record)
            progress.done = f"kept as branch {args.branch} ({commit[:12]}); nothing applied"
            _say(args, {"branch": args.branch, "commit": commit}, progress.done)
            return 0
        brought = await _apply(record, args, progress, terminated)
    except ReinError as exc:
        print(f"rein apply: {exc}", file=sys.stderr)
        return 2
    result = brought.result
    if not result.conflicts:
        remove_isolated(registry, record)
    progress.done = "applied"
    if args.as_json:
        print(json.dumps({**brought.to_json(), "verdict": record.verdict}))
    else:
        _show(result)
        if brought.verdict is not None:
            print(brought.verdict.line())
            print(
                f"undo this apply with: rein undo {shlex.quote(record.folder)} --session "
                f"{brought.session_id} --run {brought.run_id} --storage {shlex.quote(args.storage)}",
                file=sys.stderr,
            )
        if result.conflicts:
            print(
                f"{len(result.conflicts)} conflict(s) not applied; the isolated copy stays at "
                f"{record.root} (discard it with rein apply {record.session_id} --discard "
                f"--storage {shlex.quote(args.storage)})",
                file=sys.stderr,
            )
    return APPLY_CONFLICTS if result.conflicts else 0


async def _list(record: IsolatedRecord, args: ApplyArgs) -> int:
    """``rein apply SESSION_ID --list``: each hunk against the folder on the
    disk now, with its id, clean or conflict (both sides); nothing applied."""
    changes = run_changes(record)
    reviewed = await review_changes(
        changes, DiskWorkspace(record.folder), can_branch=record.kind == "git"
    )
    files = hunks_json(changes, reviewed)
    if args.as_json:
        print(json.dumps({"sessionId": record.session_id, "files": files}))
        return 0
    for hunk in reviewed.hunks:
        print(f"{hunk.id}  {hunk.status:<8}  {hunk.header}".rstrip())
        for line in hunk.lines:
            print(f"    {line}")
        if hunk.conflict is not None:
            _sides(hunk.conflict)
    for conflict in reviewed.conflicts:
        if conflict.index is None:
            print(f"note  {conflict.path}: {conflict.reason}")
    print(
        f"apply some with: rein apply {record.session_id} --hunks ID,... "
        f"--storage {shlex.quote(args.storage)}  (conflicts never apply)",
        file=sys.stderr,
    )
    return 0


def _verdict_line(record: IsolatedRecord) -> str:
    """The run's verdict as stored when it finished (its gates' word on
    the copy; the folder's gates judge the applied result afterwards)."""
    verdict = record.verdict or "unknown (the run did not finish)"
    line = f"isolated session {record.session_id}: the run's verdict: {verdict}"
    if record.verdict != "completed":
        line += " (its changes did not pass the run's gates: review them before applying)"
    return line


class _NoModel:
    """The apply's session asks no model (nothing is repaired)."""

    name = "none"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        raise ModelError("rein apply's session has no model")
        yield  # pragma: no cover  (an async generator)


async def _apply(
    record: IsolatedRecord, args: ApplyArgs, progress: Progress, terminated: Termination
) -> BroughtBack:
    """The clean hunks applied as one change of a new stored session of the
    folder, its analyzers started and its gates judging the result. When no
    hunk would be applied (all conflicts, or none kept), no session is
    made and no analyzer started: the review says what is left. A SIGTERM
    is held off the write (``progress.brought`` says it was done)."""

    async def applied(brought: BroughtBack) -> None:
        progress.brought = brought

    changes = await anyio.to_thread.run_sync(run_changes, record)
    can_branch = record.kind == "git"
    reviewed = await review_changes(changes, DiskWorkspace(record.folder), can_branch=can_branch)
    if not any(
        h.status == "clean" and (args.hunks is None or h.id in args.hunks) for h in reviewed.hunks
    ):
        return BroughtBack(reviewed, run_id="")
    async with HeadlessSession(
        record.folder, _NoModel(), args.config, storage=args.storage, watch=False
    ) as host:
        await host.analyzers_started()
        brought = await bring_back_into(
            host.session,
            host.workspace,
            changes,
            title=f"rein apply {record.session_id}",
            can_branch=can_branch,
            keep=args.hunks,
            atomic=terminated.held,
            on_applied=applied,
        )
        terminated.check()  # a SIGTERM during the gates: reported, the copy kept
        return brought


def _say(args: ApplyArgs, payload: dict[str, object], text: str) -> None:
    print(json.dumps(payload) if args.as_json else text)
