"""Modules a project loads by name, for the tests gate's import graph.

A plugin module that no file imports (Python-Markdown's extensions:
``markdown.markdown(text, extensions=["tables"])``) is loaded through an
entry point of the project or ``importlib.import_module`` of a dotted
string; a change to it reaches no test by the imports alone. A file that
holds such a name as a string literal counts as importing the module:

* a dotted name (``"markdown.extensions.tables"``, also with an
  ``:attribute``), whatever it names (one that is no module of the
  project reaches nothing);
* the name of an entry point the project declares (``pyproject.toml``'s
  ``[project.entry-points.GROUP]``, ``setup.cfg``'s
  ``[options.entry_points]``, or an ``entry_points.txt`` of the project's
  own ``*.egg-info`` or ``*.dist-info`` at the root or under ``src/``),
  for the module it points to.

A string is only a name: a test that names a plugin for another reason
is selected too (more tests run, none is missed).
"""

from __future__ import annotations

import configparser
import re
import threading
import tomllib
from collections.abc import Mapping
from pathlib import Path

__all__ = ["entry_points", "named_strings", "string_imports"]

#: A string literal that is an identifier or a dotted name, perhaps with
#: ``:attribute`` (an entry point's form).
_NAME_STRING = re.compile(
    r"""(?<![\w'"])[rRuU]?(['"])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::[A-Za-z_][\w.]*)?\1"""
)
#: What an entry point's value names: ``module`` or ``module:attribute``.
_TARGET = re.compile(r"^\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*(?::.*)?(?:\[.*\])?\s*$")


def named_strings(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The dotted names (without an ``:attribute``) and the identifiers
    ``text`` holds as string literals."""
    found = {match.group(2) for match in _NAME_STRING.finditer(text)}
    dotted = frozenset(s for s in found if "." in s)
    return dotted, frozenset(found - dotted)


def string_imports(
    dotted: frozenset[str], words: frozenset[str], points: Mapping[str, frozenset[str]]
) -> frozenset[tuple[str, str | None, str | None]]:
    """The imports (as :func:`rein.python_imports.import_names` gives them:
    the whole module) that a file holding the ``dotted`` names and the
    identifiers ``words`` as strings makes by name (``points``: the
    project's entry points)."""
    out = {(name, None, name) for name in dotted}
    for word in words.intersection(points) if points else ():
        out.update((module, None, module) for module in points[word])
    return frozenset(out)


def entry_points(root: Path) -> dict[str, frozenset[str]]:
    """The entry points ``root``'s project declares: name -> the modules
    they point to (of any group); kept by the texts declaring them (read at
    every call, parsed when one changed)."""
    sources = [root / "pyproject.toml", root / "setup.cfg"]
    for folder in (root, root / "src"):
        for info in [*folder.glob("*.egg-info"), *folder.glob("*.dist-info")]:
            sources.append(info / "entry_points.txt")
    texts = tuple((str(path), _text(path)) for path in sources)
    with _POINTS_LOCK:
        found = _POINTS.get(texts)
    if found is None:
        found = _entry_points(*(text for _path, text in texts))
        with _POINTS_LOCK:
            _POINTS[texts] = found
            while len(_POINTS) > _MAX_POINTS:
                _POINTS.pop(next(iter(_POINTS)))
    return found


#: The texts declaring a project's entry points (path, text or None) -> them.
_POINTS: dict[tuple[tuple[str, str | None], ...], dict[str, frozenset[str]]] = {}
_MAX_POINTS = 8
_POINTS_LOCK = threading.Lock()


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _entry_points(
    pyproject: str | None, setup_cfg: str | None, *infos: str | None
) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}

    def add(name: object, value: object) -> None:
        if not isinstance(name, str) or not isinstance(value, str):
            return
        target = _TARGET.match(value)
        if target and name.strip():
            found.setdefault(name.strip(), set()).add(target.group(1))

    for group in _pyproject_groups(pyproject):
        for name, value in group.items():
            add(name, value)
    for text in _setup_cfg_groups(setup_cfg):
        for line in text.splitlines():
            name, sep, value = line.partition("=")
            if sep:
                add(name, value)
    for info in infos:
        parser = _ini(info)
        if parser is None:
            continue
        for section in parser.sections():
            for name, value in parser.items(section):
                add(name, value)
    return {name: frozenset(modules) for name, modules in found.items()}


def _pyproject_groups(text: str | None) -> list[Mapping[str, object]]:
    if text is None:
        return []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project")
    groups = project.get("entry-points") if isinstance(project, dict) else None
    if not isinstance(groups, dict):
        return []
    return [group for group in groups.values() if isinstance(group, dict)]


def _setup_cfg_groups(text: str | None) -> list[str]:
    parser = _ini(text)
    if parser is None or not parser.has_section("options.entry_points"):
        return []
    return [value for _name, value in parser.items("options.entry_points")]


def _ini(text: str | None) -> configparser.ConfigParser | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser
