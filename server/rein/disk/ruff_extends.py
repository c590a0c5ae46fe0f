"""The files ruff's settings ``extend``, whatever their names.

ruff reads a project's ``pyproject.toml`` (``[tool.ruff]``), ``ruff.toml``
or ``.ruff.toml``, and then the file its ``extend`` names (relative to the
file naming it; that file may ``extend`` another, read as a ``ruff.toml``
unless it is a ``pyproject.toml``). Any name does: ``extend =
"config/ruff-base"`` or ``"ruff-base.cfg"`` is read as a setting
(checked with ruff 0.17). By their names alone such files look like a
folder (``ruff-base``) or a file no analyzer reads (``ruff-base.cfg``):
a change to one reached nothing, and ruff, whose file watchers want only
its settings' own names, was never told and went on with the old rules.

:class:`RuffExtends` follows every chain from the workspace's ruff
settings files and says which workspace files they name and, for each,
the settings files whose chain names it (a change to it is told to ruff
as a change to those, which it reloads). A file outside the workspace is
left out: no change the run makes is seen there. A settings file that
cannot be read as TOML names nothing (ruff cannot read it either).
"""

from __future__ import annotations

import posixpath
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

__all__ = ["SETTINGS_NAMES", "RuffExtends"]

#: The files ruff reads its settings from, by name.
SETTINGS_NAMES = frozenset({"pyproject.toml", "ruff.toml", ".ruff.toml"})

#: How many files one chain follows (ruff refuses a cycle; a bound all the same).
_CHAIN_BOUND = 32


def _extend_of(path: str, text: str) -> str | None:
    """The ``extend`` of the settings file ``path`` (``[tool.ruff]`` in a
    ``pyproject.toml``, the top level elsewhere); None when none is there
    or the text is no TOML."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    if posixpath.basename(path) == "pyproject.toml":
        tool = data.get("tool")
        ruff = tool.get("ruff") if isinstance(tool, dict) else None
        if not isinstance(ruff, dict):
            return None
        data = ruff
    extend = data.get("extend")
    return extend if isinstance(extend, str) else None


def _in_workspace(root: Path, naming: str, extend: str) -> str | None:
    """``extend`` (named by the file ``naming``) as a path relative to
    ``root``; None when it lies outside."""
    expanded = Path(extend).expanduser()
    target = expanded if expanded.is_absolute() else root / posixpath.dirname(naming) / expanded
    normal = Path(posixpath.normpath(target.as_posix()))
    try:
        relative = normal.relative_to(root).as_posix()
    except ValueError:
        return None
    return relative if relative not in ("", ".") else None


class RuffExtends:
    """Which workspace files ruff's settings extend (:meth:`named`),
    worked out again after a change to a settings file or to one of them
    (:meth:`changed`)."""

    def __init__(
        self, root: Path, read: Callable[[str], str | None], files: Callable[[], Iterable[str]]
    ) -> None:
        self._root = root
        self._read = read
        self._files = files
        self._named: dict[str, tuple[str, ...]] | None = None

    def named(self) -> Mapping[str, tuple[str, ...]]:
        """Each workspace file an ``extend`` chain names -> the ruff
        settings files (``pyproject.toml``, ``ruff.toml``, ``.ruff.toml``)
        whose chains name it."""
        if self._named is None:
            found: dict[str, set[str]] = {}
            starts = [f for f in self._files() if posixpath.basename(f) in SETTINGS_NAMES]
            for start in sorted(starts):
                path = start
                for _ in range(_CHAIN_BOUND):
                    text = self._read(path)
                    extend = _extend_of(path, text) if text is not None else None
                    target = _in_workspace(self._root, path, extend) if extend else None
                    if target is None or start in found.get(target, ()):
                        break
                    found.setdefault(target, set()).add(start)
                    path = target
            self._named = {p: tuple(sorted(s)) for p, s in found.items()}
        return self._named

    def changed(self, paths: Iterable[str]) -> None:
        """``paths`` changed: a settings file or a file a chain names is
        read again at the next question."""
        if self._named is None:
            return
        if any(posixpath.basename(p) in SETTINGS_NAMES or p in self._named for p in paths):
            self._named = None
