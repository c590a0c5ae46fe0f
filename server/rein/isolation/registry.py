"""Where isolated workspaces live, and the record of each.

Under Rein's state folder (the session store's folder), never inside the
person's folder: ``<storage>/isolated/<session id>.json`` is the record and
``<storage>/isolated/<session id>/`` holds the copy (``tree/``: the
session's folder; ``base/``: the folder as it was at the start, for a
folder that is not a git repository). A record names the process that owns
a running session, so the next start can tell a crash from a run still
going (:mod:`rein.isolation.cleanup`).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from rein.harness.errors import ConfigError
from rein.process.identity import alive

__all__ = ["IsolatedRecord", "Registry", "Status"]

Status = Literal["running", "finished"]

#: What a session id may be (``ses_`` and hex from :func:`rein.session.new_session_id`,
#: or an editor's own id): never a path, never empty, never ``.`` or ``..``.
_SESSION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")


@dataclass(frozen=True, slots=True)
class IsolatedRecord:
    """One isolated session.

    ``folder``: the person's folder; ``kind``: ``"git"`` (a worktree of the
    repository at ``top``, the folder being ``prefix`` inside it) or
    ``"copy"``; ``tree``: the copy's top (the session's folder is
    :attr:`root`); ``base``: the commit the run started from (git) or the
    folder holding the start's copy; ``pid``: the owning process while
    ``running``.
    """

    session_id: str
    folder: str
    kind: Literal["git", "copy"]
    top: str
    prefix: str
    tree: str
    base: str
    pid: int
    status: Status = "running"
    created: float = 0.0
    verdict: str = ""
    #: The session is in the session store (a ``rein run``): the next start
    #: removes the finished copy once the store no longer has it.
    stored: bool = False
    #: When the owning process started (:func:`rein.process.identity.process_start`), so a pid the
    #: system gave to another process since is not taken for the run.
    pid_start: str = ""

    def to_json(self) -> dict[str, object]:
        """What ``rein/isolatedSessions`` lists of it."""
        return {
            "sessionId": self.session_id,
            "status": self.status,
            "verdict": self.verdict,
            "folder": self.folder,
            "worktree": str(self.root),
            "kind": self.kind,
            "created": self.created,
        }

    @property
    def root(self) -> Path:
        """The isolated session's workspace root (the folder's place in the copy)."""
        return Path(self.tree) / self.prefix if self.prefix else Path(self.tree)


class Registry:
    """The records under ``<storage>/isolated``."""

    def __init__(self, storage: str | Path) -> None:
        # Absolute: a relative storage folder (``--storage store``) would
        # name the copy relative to the process's folder here and relative
        # to the repository's in ``git -C top worktree add``: the worktree
        # would land inside the person's repository, and cleanup miss it.
        self.dir = Path(storage).expanduser().absolute() / "isolated"

    @staticmethod
    def check_id(session_id: object) -> str:
        """``session_id`` when it is one (letters, digits, ``_`` and ``-``),
        else a :class:`ConfigError`: an id names a folder under :attr:`dir`
        and must never reach outside it."""
        if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
            raise ConfigError(f"not a session id: {session_id!r}")
        return session_id

    def place(self, session_id: str) -> Path:
        """The folder an isolated session's copies go in (always inside :attr:`dir`)."""
        return self.dir / self.check_id(session_id)

    def _file(self, session_id: str) -> Path:
        return self.dir / f"{self.check_id(session_id)}.json"

    def _checked(self, stem: str, data: object) -> IsolatedRecord:
        """The record of ``stem`` when the file's values are the ones Rein
        writes for it: its own id, its copies inside :meth:`place`. A record
        naming any other folder is refused (cleanup removes what a record
        names, so a crafted or damaged one must never point it elsewhere)."""
        if not isinstance(data, dict):
            raise ConfigError("not an object")
        record = IsolatedRecord(**data)
        if record.session_id != stem:
            raise ConfigError(f"it names the session {record.session_id!r}")
        place = self.place(stem)
        if record.kind not in ("git", "copy"):
            raise ConfigError(f"unknown kind {record.kind!r}")
        if Path(record.tree) != place / "tree":
            raise ConfigError(f"its copy {record.tree!r} is not {place / 'tree'}")
        if record.kind == "copy" and Path(record.base) != place / "base":
            raise ConfigError(f"its base {record.base!r} is not {place / 'base'}")
        prefix = Path(record.prefix)
        if prefix.is_absolute() or ".." in prefix.parts:
            raise ConfigError(f"its prefix {record.prefix!r} leaves the copy")
        return record

    def save(self, record: IsolatedRecord) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self._file(record.session_id)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(record), indent=1))
        os.replace(tmp, path)

    def get(self, session_id: str) -> IsolatedRecord | None:
        path = self._file(session_id)
        try:
            data = json.loads(path.read_text())
            return self._checked(session_id, data)
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, ConfigError) as exc:
            raise ConfigError(f"the isolated session record {path} is unreadable: {exc}") from exc

    def all(self) -> list[IsolatedRecord]:
        if not self.dir.is_dir():
            return []
        out: list[IsolatedRecord] = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                found = self.get(path.stem)
            except ConfigError:
                continue
            if found is not None:
                out.append(found)
        return sorted(out, key=lambda r: r.created)

    def finish(
        self, session_id: str, verdict: str, *, stored: bool = False
    ) -> IsolatedRecord | None:
        """Mark a session finished (kept until applied or discarded);
        ``stored``: its session is in the session store."""
        record = self.get(session_id)
        if record is None:
            return None
        done = replace(
            record, status="finished", pid=0, pid_start="", verdict=verdict, stored=stored
        )
        self.save(done)
        return done

    def forget(self, session_id: str) -> None:
        self._file(session_id).unlink(missing_ok=True)

    @staticmethod
    def crashed(record: IsolatedRecord) -> bool:
        """A running record whose process is gone: a crash or a kill."""
        return record.status == "running" and not alive(record.pid, record.pid_start)

    @staticmethod
    def now() -> float:
        return time.time()
