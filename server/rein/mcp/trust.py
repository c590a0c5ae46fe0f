"""Which workspace-defined MCP servers the person trusted, remembered in
Rein's storage folder (``mcp-trust.json``, never in the project).

A server is remembered by a hash of the workspace folder, its name, where it
was defined and everything that decides what runs: the command and its
arguments (or the URL), the working folder and the environment as written in
the file (before ``${input:...}`` values are put in, so no secret is hashed
or stored). Change any of them and the person is asked again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["TRUST_FILE", "FileTrustStore", "MemoryTrustStore", "trust_key"]

log = logging.getLogger(__name__)

TRUST_FILE = "mcp-trust.json"


def trust_key(root: Path, name: str, source: str, parts: Iterable[str]) -> str:
    """The hash a trusted server is remembered by."""
    digest = hashlib.sha256()
    for part in (str(root.resolve()), name, source, *parts):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


class MemoryTrustStore:
    """Trust for one process (tests, and hosts with no storage folder)."""

    def __init__(self) -> None:
        self._keys: set[str] = set()

    def is_trusted(self, key: str) -> bool:
        return key in self._keys

    def remember(self, key: str) -> None:
        self._keys.add(key)


class FileTrustStore:
    """Trust remembered in ``<storage folder>/mcp-trust.json``. A file that
    cannot be read is reported in the log and trusts nothing (the person is
    asked again); one that cannot be written keeps the trust for this
    process only, with a log line saying so."""

    def __init__(self, folder: Path, persist: bool = True, file_name: str = TRUST_FILE) -> None:
        #: ``file_name``: another file for another kind of trust (the
        #: workspace's hooks: ``hooks-trust.json``).
        self.path = folder / file_name
        #: False: what is trusted now is not written (``--trust-mcp``).
        self.persist = persist
        self._lock = threading.Lock()
        #: Trusted in this process when the file could not be written.
        self._unsaved: set[str] = set()

    def _read(self) -> set[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set()
        except (OSError, ValueError) as exc:
            log.warning("cannot read %s (%s): no MCP server is trusted from it", self.path, exc)
            return set()
        keys = data.get("trusted") if isinstance(data, dict) else None
        if not isinstance(keys, list):
            log.warning("%s has no 'trusted' list: no MCP server is trusted from it", self.path)
            return set()
        return {k for k in keys if isinstance(k, str)}

    def is_trusted(self, key: str) -> bool:
        with self._lock:
            return key in self._unsaved or key in self._read()

    def remember(self, key: str) -> None:
        with self._lock:
            if not self.persist:
                self._unsaved.add(key)
                return
            keys = self._read() | {key}
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-trust-")
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump({"trusted": sorted(keys)}, out, indent=1)
                os.replace(tmp, self.path)
            except OSError as exc:
                log.warning(
                    "cannot write %s (%s): the trust lasts this process only", self.path, exc
                )
                self._unsaved.add(key)
