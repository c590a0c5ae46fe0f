"""``rein sessions``: the stored sessions, newest first, with the bytes their
checkpoints keep (per session and per workspace), as text or JSON lines."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio

from rein.harness.errors import StoreError
from rein.session.results import record_summary
from rein.store import SqliteStore, default_storage_path
from rein.store.checkpoints import SqliteCheckpointStore

__all__ = ["list_sessions"]


def list_sessions(storage: str | None, *, as_json: bool) -> int:
    """Print the sessions stored in ``storage`` (None: the user data dir),
    newest first, with their checkpoints' bytes; the exit code."""
    folder = storage or str(default_storage_path())
    place = Path(folder).expanduser()
    if (not place.exists() or place.is_dir()) and not (place / "sessions.db").is_file():
        # Nothing stored there yet: said without creating a store (a path
        # that is no folder goes on to the store's own error).
        if not as_json:
            print(f"no sessions in {folder}")
        return 0
    try:
        store = SqliteStore.open(folder)
    except StoreError as exc:
        print(f"rein sessions: {exc}", file=sys.stderr)
        return 2
    records = anyio.run(store.list_sessions)
    store.close()
    # Checkpoint bytes per session and per workspace (none without the file).
    per_session: dict[str, int] = {}
    per_workspace: dict[str, int] = {}
    if (Path(folder).expanduser() / "checkpoints.db").exists():
        try:
            checkpoints = SqliteCheckpointStore.open(folder)
        except StoreError as exc:
            print(f"rein sessions: {exc}", file=sys.stderr)
        else:

            async def sizes() -> None:
                for r in records:
                    per_session[r.id] = await checkpoints.session_size(r.id)
                for workspace in {r.workspace for r in records if r.workspace}:
                    per_workspace[workspace] = await checkpoints.size(workspace)

            try:
                anyio.run(sizes)
            finally:
                checkpoints.close()
    if as_json:
        for r in records:
            print(
                json.dumps(
                    {
                        **record_summary(r),
                        "workspace": r.workspace,
                        "checkpointBytes": per_session.get(r.id, 0),
                        "workspaceCheckpointBytes": per_workspace.get(r.workspace, 0),
                    }
                )
            )
        return 0
    if not records:
        print(f"no sessions in {folder}")
        return 0
    for r in records:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.updated_at))
        tokens = sum(int(v) for v in r.usage.values()) if r.usage else 0
        stored = _size(per_session.get(r.id, 0))
        print(
            f"{r.id}  {when}  {r.status:<11} {r.turns:>3} turns {tokens:>8} tokens "
            f"{stored:>9} checkpoints  {r.title}"
        )
    for workspace, total in sorted(per_workspace.items()):
        print(f"checkpoints of {workspace}: {_size(total)}")
    return 0


def _size(n: int) -> str:
    """Bytes as people read them: ``0 B``, ``12.3 KB``, ``4.5 MB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"
