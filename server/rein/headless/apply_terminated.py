"""``rein apply`` stopped by SIGTERM (a CI job's cancel, ``timeout``,
``docker stop``): what it had done, said and recorded, exit 143.

The apply (:mod:`rein.headless.isolated`) holds the signal off the write of
the person's files and what records it (:meth:`Termination.held
<rein.headless.terminate.Termination.held>`; the write is bounded), so it
stops at one of two places:

* **before the write**: nothing of the folder was changed; the isolated
  copy and its record stay as they were, and ``rein apply`` again applies it;
* **after the write** (while the folder's analyzers and gates judged it,
  or once they had): every clean hunk is applied and the apply's session
  is stored with its checkpoint (so ``rein undo --session`` reverts it),
  now marked ``aborted`` in the session store. The copy stays: ``rein
  apply`` again finds the run's text in the folder already, applies
  nothing, and removes it.

A step that cannot stop halfway and has no await inside (``--discard``,
``--branch``) finishes first; the signal is then reported after it.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass

from rein.config import ReinConfig
from rein.harness.errors import ReinError
from rein.headless.terminate import EXIT_TERMINATED
from rein.isolation.apply_run import BroughtBack
from rein.isolation.registry import IsolatedRecord
from rein.store import SqliteStore

__all__ = ["ApplyArgs", "Progress", "report_terminated"]


@dataclass(frozen=True, slots=True)
class ApplyArgs:
    session_id: str
    storage: str
    branch: str | None = None
    discard: bool = False
    as_json: bool = False
    #: The folder's configuration (its gates); None: the defaults.
    config: ReinConfig | None = None
    #: List the hunks (ids, clean or conflict); apply nothing.
    list_only: bool = False
    #: Apply only these hunks (ids as ``--list`` prints them); None: every clean one.
    hunks: tuple[str, ...] | None = None


@dataclass(slots=True)
class Progress:
    """How far a ``rein apply`` got."""

    #: The isolated session it works on, once found.
    record: IsolatedRecord | None = None
    #: Set once the files are written (and the apply's session stored).
    brought: BroughtBack | None = None
    #: What a step that finished did ("discarded ...", "applied").
    done: str = ""


async def _mark_aborted(storage: str, session_id: str) -> str:
    """The apply's session marked ``aborted`` in the store; "" or why not."""
    try:
        store = SqliteStore.open(storage)
    except ReinError as exc:
        return str(exc)
    try:
        await store.set_status(session_id, "aborted")
    except ReinError as exc:
        return str(exc)
    finally:
        store.close()
    return ""


async def report_terminated(args: ApplyArgs, progress: Progress) -> int:
    """Say (and record) where the SIGTERM stopped the apply; 143."""
    where = f"--storage {shlex.quote(args.storage)}"
    again = f"rein apply {args.session_id} {where}"
    brought, record = progress.brought, progress.record
    payload: dict[str, object] = {"terminated": True, "sessionId": args.session_id}
    if progress.done:
        text = f"terminated (SIGTERM) after it finished: {progress.done}"
        payload["done"] = progress.done
    elif brought is None:
        text = "terminated (SIGTERM) before anything was applied: the folder is as it was" + (
            f"; the isolated copy stays: apply it with {again}" if record is not None else ""
        )
        payload["applied"] = []
    else:
        applied = brought.result.applied
        unsaid = await _mark_aborted(args.storage, brought.session_id or "")
        folder = shlex.quote(record.folder) if record is not None else "."
        undo = f"rein undo {folder} --session {brought.session_id} --run {brought.run_id} {where}"
        stored = (
            f"recorded as session {brought.session_id}, aborted"
            if not unsaid
            else f"session {brought.session_id} (not marked aborted: {unsaid})"
        )
        judged = (
            f"{brought.verdict.line()}"
            if brought.verdict is not None
            else "before the folder's gates gave a verdict"
        )
        text = (
            f"terminated (SIGTERM) after the files were applied ({', '.join(applied)}), "
            f"{judged}; {stored}; undo it with: {undo}; "
            f"run it again to finish (it finds the files applied and removes the copy): {again}"
        )
        payload.update(
            applied=list(applied), applySessionId=brought.session_id, runId=brought.run_id
        )
    if args.as_json:
        print(json.dumps(payload))
    print(f"rein apply: {text}", file=sys.stderr)
    return EXIT_TERMINATED
