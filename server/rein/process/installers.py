"""The install command a project's own tooling would run for a manifest.

With no ``gates.dependencies.commands`` configured, a change to a manifest
installs with what the project already uses (:func:`detect_install_command`,
asked at the time of the change, so a ``.venv`` or a lock file the run
created counts):

* ``pyproject.toml`` (one with a ``[project]`` table) and
  ``requirements*.txt``: into the project's environment: ``.venv`` (or
  ``venv``) in the workspace root, else the activated one (``VIRTUAL_ENV``).
  With ``uv`` on PATH: ``uv pip install --python <that python> ...``; else
  that environment's own pip (``<python> -m pip install ...``). A
  ``pyproject.toml`` installs its folder editable (``-e``), a requirements
  file with ``-r``. No environment (or neither uv nor its pip): nothing,
  never the interpreter of the system.
* ``package.json``: ``pnpm install`` beside a ``pnpm-lock.yaml``, ``yarn
  install`` beside a ``yarn.lock``, else ``npm install``, in its folder,
  when that tool is on PATH.

Manifests inside environments, ``node_modules`` and hidden folders install
nothing. Every command runs in the workspace root (the gates' runner).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import shlex
import shutil
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["detect_install_command", "install_detector", "python_environment"]

#: Folders whose manifests are not the project's own.
_SKIPPED_PARTS = frozenset({"node_modules", "site-packages", "venv", "env", "__pypackages__"})

#: Lock file -> the tool that wrote it, in order of precedence.
_NODE_LOCKS: tuple[tuple[str, str], ...] = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("package-lock.json", "npm"),
)

Which = Callable[[str], str | None]


def _python_in(venv: Path) -> Path | None:
    for candidate in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
        if candidate.exists():
            return candidate
    return None


def python_environment(root: Path, environ: Mapping[str, str] | None = None) -> Path | None:
    """The interpreter of the project's environment: ``.venv`` or ``venv`` in
    ``root``, else the activated one (``VIRTUAL_ENV``); None without one."""
    for name in (".venv", "venv"):
        found = _python_in(root / name)
        if found is not None:
            return found
    active = (os.environ if environ is None else environ).get("VIRTUAL_ENV")
    return _python_in(Path(active)) if active else None


def _has_pip(python: Path) -> bool:
    bin_dir = python.parent
    return any(bin_dir.glob("pip*"))


def _skipped(path: str) -> bool:
    parts = path.split("/")[:-1]
    return any(p in _SKIPPED_PARTS or p.startswith(".") for p in parts)


def _in_folder(folder: str, command: str) -> str:
    return command if folder in ("", ".") else f"cd {shlex.quote(folder)} && {command}"


def _python_command(root: Path, path: str, name: str, which: Which) -> str | None:
    if name == "pyproject.toml":
        try:
            data = tomllib.loads((root / path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        if "project" not in data:
            return None  # a tools-only pyproject (ruff, pytest, ...): nothing to install
        folder = posixpath.dirname(path) or "."
        args = f"-e {shlex.quote(folder if folder.startswith('.') else './' + folder)}"
    else:
        args = f"-r {shlex.quote(path)}"
    python = python_environment(root)
    if python is None:
        return None
    shown = shlex.quote(
        os.path.relpath(python, root) if python.is_relative_to(root) else str(python)
    )
    if which("uv") is not None:
        return f"uv pip install --python {shown} {args}"
    if _has_pip(python):
        return f"{shown} -m pip install {args}"
    return None


def _node_command(root: Path, path: str, which: Which) -> str | None:
    folder = posixpath.dirname(path)
    tool = "npm"
    for lock, locker in _NODE_LOCKS:
        if (root / folder / lock).exists():
            tool = locker
            break
    if which(tool) is None:
        return None
    return _in_folder(folder, f"{tool} install")


def detect_install_command(root: Path, path: str, *, which: Which = shutil.which) -> str | None:
    """The command that installs what the manifest ``path`` (relative to
    ``root``) declares, with the project's own tooling; None when it is not
    a manifest, or there is nothing to install with."""
    if _skipped(path):
        return None
    name = posixpath.basename(path)
    if name == "pyproject.toml" or fnmatch.fnmatch(name, "requirements*.txt"):
        return _python_command(root, path, name, which)
    if name == "package.json":
        return _node_command(root, path, which)
    return None


def install_detector(root: Path) -> Callable[[str], str | None]:
    """:func:`detect_install_command` for one workspace root."""
    return lambda path: detect_install_command(root, path)
