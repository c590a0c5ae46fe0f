"""The file watchers a language server registers
(``client/registerCapability`` for ``workspace/didChangeWatchedFiles``) and
whether a path is one of them: the LSP's glob syntax (``*`` and ``?``
within a path segment, ``**`` across segments, ``{a,b}`` alternatives,
``[...]`` and ``[!...]`` ranges), a pattern either a string or a
``RelativePattern`` (``baseUri`` and ``pattern``), and the kinds each
watcher wants (created 1, changed 2, deleted 4; all when it says none).

What the real servers register (2026-12-06): ruff ``**/.ruff.toml``,
``**/ruff.toml``, ``**/pyproject.toml``; basedpyright
``**/pyrightconfig.json`` and ``**``; gopls ``**/*.{go,mod,sum,work}``;
clangd and typescript-language-server none."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

__all__ = ["Watcher", "glob_regex", "watchers_of"]

_ALL_KINDS = 7
#: A change's bit in a watcher's ``kind`` (WatchKind: 1, 2, 4; the
#: change types are numbered 1, 2, 3).
_WATCH_KIND = {
    lsp.FileChangeType.Created: lsp.WatchKind.Create.value,
    lsp.FileChangeType.Changed: lsp.WatchKind.Change.value,
    lsp.FileChangeType.Deleted: lsp.WatchKind.Delete.value,
}


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The LSP glob ``pattern`` as a regular expression matching whole paths
    (``/``-separated)."""
    return re.compile(_translate(pattern) + r"\Z")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "{" and (end := _closing(pattern, i)) > 0:
            parts = _split_top(pattern[i + 1 : end])
            out.append("(?:" + "|".join(_translate(p) for p in parts) + ")")
            i = end + 1
        elif c == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = re.escape(body[1:] if negate else body).replace(r"\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _closing(pattern: str, start: int) -> int:
    """The index of the ``}`` closing the ``{`` at ``start`` (-1: none)."""
    depth = 0
    for i in range(start, len(pattern)):
        if pattern[i] == "{":
            depth += 1
        elif pattern[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top(body: str) -> list[str]:
    """``body`` split at its commas outside nested braces."""
    parts, depth, current = [], 0, ""
    for c in body:
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        current += c
    return [*parts, current]


@dataclass(frozen=True)
class Watcher:
    """One registered watcher: its glob, the folder a relative pattern is
    under (None: matched against the path under the root and the absolute
    path), and the kinds of change it wants."""

    regex: re.Pattern[str]
    base: Path | None
    kind: int

    def wants(self, root: Path, path: str, kind: lsp.FileChangeType) -> bool:
        """Whether ``path`` (under ``root``) changing so is watched."""
        if not self.kind & _WATCH_KIND[kind]:
            return False
        absolute = (root / path).as_posix()
        if self.base is not None:
            base = self.base.as_posix().rstrip("/") + "/"
            return absolute.startswith(base) and bool(self.regex.match(absolute.removeprefix(base)))
        return bool(self.regex.match(path) or self.regex.match(absolute))


def _uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _watcher(raw: Mapping[str, Any]) -> Watcher | None:
    glob = raw.get("globPattern")
    kind = raw.get("kind") or _ALL_KINDS
    if isinstance(glob, str):
        return Watcher(glob_regex(glob), None, int(kind))
    if isinstance(glob, Mapping) and isinstance(glob.get("pattern"), str):
        base_uri = glob.get("baseUri")
        uri = base_uri.get("uri") if isinstance(base_uri, Mapping) else base_uri
        base = _uri_path(uri) if isinstance(uri, str) else None
        if base is None:
            return None  # a base that is no file: nothing under the root
        return Watcher(glob_regex(glob["pattern"]), base, int(kind))
    return None


def watchers_of(options: object) -> list[Watcher]:
    """The watchers in a registration's ``registerOptions`` (as the client
    received them: a mapping; an unreadable watcher is left out)."""
    raw: list[Mapping[str, Any]]
    if isinstance(options, lsp.DidChangeWatchedFilesRegistrationOptions):
        raw = [
            {"globPattern": w.glob_pattern, "kind": w.kind}
            if isinstance(w.glob_pattern, str)
            else {
                "globPattern": {
                    "baseUri": w.glob_pattern.base_uri
                    if isinstance(w.glob_pattern.base_uri, str)
                    else w.glob_pattern.base_uri.uri,
                    "pattern": w.glob_pattern.pattern,
                },
                "kind": w.kind,
            }
            for w in options.watchers
        ]
    elif isinstance(options, Mapping) and isinstance(options.get("watchers"), list):
        raw = [w for w in options["watchers"] if isinstance(w, Mapping)]
    else:
        return []
    return [w for w in map(_watcher, raw) if w is not None]
