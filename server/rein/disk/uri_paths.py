"""An analyzer's URI -> the workspace path it names, remembered: resolving
it asks the file system, and a large project publishes thousands."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["MAX_REMEMBERED_URIS", "UriPaths"]

#: How many URIs :class:`UriPaths` remembers.
MAX_REMEMBERED_URIS = 100_000
_UNKNOWN = object()


class UriPaths:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._known: dict[str, str | None] = {}

    def relative(self, uri: str) -> str | None:
        """The workspace path of ``uri`` (None: not a file in the root)."""
        known = self._known.get(uri, _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        parsed = urlparse(uri)
        path: str | None = None
        if parsed.scheme == "file":
            try:
                path = Path(unquote(parsed.path)).resolve().relative_to(self.root).as_posix()
            except ValueError:
                path = None
        if len(self._known) < MAX_REMEMBERED_URIS:
            self._known[uri] = path
        return path
