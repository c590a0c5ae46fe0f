"""The folders basedpyright resolves imports from that Rein's import scan
does not model.

The scan (:mod:`rein.python_imports`) names a module by its path from the
workspace root or ``src/``. basedpyright also resolves an import through
its ``stubPath`` (``typings`` unless set: ``import fastlib`` may be
``typings/fastlib.pyi``), the ``extraPaths`` and each execution
environment's ``root`` and ``extraPaths``, read from ``pyrightconfig.json``
and ``pyproject.toml``'s ``[tool.basedpyright]`` or ``[tool.pyright]``.
A module under one of them is imported by a name the scan does not know:
the scan finds no importer of it (nor of a stub-only package's module in
its ``*-stubs`` folder), and what its change can reach is not
known (:func:`~rein.disk.file_checks.importer_closure` answers None, so
the verdict waits for the whole-workspace analysis).

Both files are read (either may be in force: the json one wins when it
exists, and a root named in either is kept, which can only ask for more).
``pyrightconfig.json``'s comments are dropped; a settings file that still
cannot be read as TOML or JSON (a trailing comma) makes every module's
reach not known.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

__all__ = ["outside_the_scan", "pyright_sections", "unmodelled_roots", "workspace_folder"]

#: basedpyright's ``stubPath`` when none is set.
DEFAULT_STUB_PATH = "typings"

#: The roots the scan names modules from.
_MODELLED = frozenset({"", "src"})


#: A JSON string, or a comment (``//`` to the line's end, ``/* */``).
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _without_comments(text: str) -> str:
    return _STRING_OR_COMMENT.sub(lambda m: m[0] if m[0].startswith('"') else " ", text)


def workspace_folder(value: object) -> str | None:
    """A setting's folder relative to the workspace root ("" for the root);
    None for no string or one outside the workspace (nothing the run
    changes is there)."""
    if not isinstance(value, str):
        return None
    parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
    if value.startswith(("/", "~")) or ".." in parts:
        return None
    return "/".join(parts)


def _roots_of(section: dict[str, Any]) -> list[str]:
    found: list[object] = [section.get("stubPath", DEFAULT_STUB_PATH)]
    found.extend(section.get("extraPaths") or ())
    for env in section.get("executionEnvironments") or ():
        if isinstance(env, dict):
            found.append(env.get("root"))
            found.extend(env.get("extraPaths") or ())
    return [f for f in map(workspace_folder, found) if f is not None]


def pyright_sections(read: Callable[[str], str | None]) -> list[dict[str, Any]] | None:
    """basedpyright's settings: ``pyrightconfig.json``'s, then
    ``pyproject.toml``'s ``[tool.basedpyright]`` and ``[tool.pyright]``
    (those there); None when a settings file cannot be read. ``read``
    returns a workspace file's text, None when there is none."""
    sections: list[dict[str, Any]] = []
    text = read("pyrightconfig.json")
    if text is not None:
        try:
            data = json.loads(_without_comments(text))
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        sections.append(data)
    text = read("pyproject.toml")
    if text is not None:
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return None
        for name in ("basedpyright", "pyright"):
            section = tool.get(name) if isinstance(tool, dict) else None
            if isinstance(section, dict):
                sections.append(section)
    return sections


def unmodelled_roots(read: Callable[[str], str | None]) -> tuple[str, ...] | None:
    """The folders (relative to the workspace root) basedpyright resolves
    imports from and the scan does not model; None when a settings file
    cannot be read (every module's reach is then not known). ``read``
    returns a workspace file's text, None when there is none."""
    sections = pyright_sections(read)
    if sections is None:
        return None
    if not sections:
        sections.append({})  # the default stubPath
    roots = {root for section in sections for root in _roots_of(section)}
    return tuple(sorted(roots - _MODELLED))


def outside_the_scan(path: str, roots: tuple[str, ...] | None) -> bool:
    """The module ``path`` lies under one of ``roots``
    (:func:`unmodelled_roots`), or they are not known, or in a stub-only
    package's ``*-stubs`` folder (PEP 561: ``foo-stubs/`` is imported as
    ``foo``, a name the scan does not give it)."""
    if roots is None or any(path.startswith(f"{root}/") for root in roots):
        return True
    return any(folder.endswith("-stubs") for folder in path.split("/")[:-1])
