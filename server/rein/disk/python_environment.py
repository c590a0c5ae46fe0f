"""The Python environment basedpyright resolves imports from, as it finds
it: the folders in the workspace it imports modules from besides the root
and ``src/`` (:meth:`PythonEnvironment.roots`), and whether a command
installed into it (:meth:`PythonEnvironment.changed`).

An editable install (``pip install -e .`` of a project with
``[tool.setuptools] package-dir = {"" = "lib"}``) writes a ``.pth`` file
into the environment's site-packages naming ``<root>/lib``; basedpyright
adds every folder a ``.pth`` file names to its search paths, so
``lib/pkg/mod.py`` is imported as ``pkg.mod``, a name the import scan
(:mod:`rein.python_imports`) did not give it: its importers were left out
of what its change can reach, and a break in them passed. Those folders
are the scan's roots too now (:class:`~rein.disk.importers.ImportIndex`'s
``roots``), with setuptools' own ``package-dir`` (``pyproject.toml``'s
``[tool.setuptools]``, ``setup.cfg``'s ``[options] package_dir``), which
can only add names. Not known (None: every reach is then not known, never
guessed) when the environment's interpreter cannot be asked, a ``.pth``
file cannot be read, or one names a folder in the workspace the workspace
filter skips (setuptools' strict editable mode links the sources from
``build/``: the scan does not read them there).

The environment is the one basedpyright takes: the venv the project's
settings name (``venvPath`` and ``venv`` in ``pyrightconfig.json``, else
``pyproject.toml``'s ``[tool.basedpyright]`` or ``[tool.pyright]``), else
``.venv`` in the root, else ``python3`` (or ``python``) on PATH. Its site
folders are asked of its interpreter with ``-I -S`` (the ``site`` module's
answer: no ``.pth`` file is run, an ``import`` line in one being code),
and the ``.pth`` files in them read as basedpyright reads them (a line
naming a folder, relative to the site folder; comments and ``import``
lines skipped).

A command's ``pip install`` into that environment changes what imports
resolve to: one outside the workspace no watcher sees, and the analyzers
went on saying ``Import "fancylib" could not be resolved``.
:meth:`PythonEnvironment.changed` compares the site folders' modification
times and their ``.pth`` files' with the last look (a few ``stat`` calls,
asked before each wait for the analyzers), so they are told
(:func:`~rein.disk.pool_environment.tell_environment_changed`) before a
verdict.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path

from rein.disk.import_roots import pyright_sections, workspace_folder
from rein.disk.importers import Roots

__all__ = ["PythonEnvironment", "interpreter_of"]

#: How long the interpreter may take to name its site folders.
ASK_BOUND_S = 10.0

#: Asked of the interpreter: its prefix and site folders (``site`` is not
#: run: ``-S``), as JSON.
_ASK = (
    "import json, site, sys; "
    "print(json.dumps([sys.prefix, [*site.getsitepackages(), site.getusersitepackages()]]))"
)

_IMPORT_LINE = re.compile(r"import[ \t]")

Which = Callable[[str], str | None]

#: A site folder or ``.pth`` file and its modification time (-1: none there).
_Stamp = tuple[tuple[str, int], ...]


def _python_in(venv: Path) -> Path | None:
    for candidate in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
        if candidate.exists():
            return candidate
    return None


def interpreter_of(
    root: Path, read: Callable[[str], str | None], which: Which = shutil.which
) -> Path | None:
    """The interpreter basedpyright takes for the workspace at ``root``:
    the settings' venv (``venvPath``, the root when unset, and ``venv``),
    else ``.venv`` in the root, else ``python3`` or ``python`` on PATH."""
    for section in pyright_sections(read) or ():
        venv = section.get("venv")
        if isinstance(venv, str):
            base = section.get("venvPath")
            folder = Path(base).expanduser() if isinstance(base, str) else root
            return _python_in((root / folder / venv).absolute())
    found = _python_in(root / ".venv")
    if found is not None:
        return found
    exe = which("python3") or which("python")
    return Path(exe) if exe else None


def _globbed(venv: Path) -> tuple[Path, ...]:
    """A venv's site folders as basedpyright finds them, by looking:
    ``lib*/python3*/site-packages`` (``lib64`` is often a link to ``lib``)
    and ``Lib/site-packages``."""
    sites = [*sorted(venv.glob("lib*/python3*/site-packages")), venv / "Lib" / "site-packages"]
    found: dict[Path, Path] = {}
    for site in sites:
        if site.is_dir():
            found.setdefault(site.resolve(), site)
    return tuple(found.values())


def _sites_of(python: Path, root: Path) -> tuple[Path, tuple[Path, ...]] | None:
    """The prefix and site folders of the interpreter ``python``: a venv's
    (it has a ``pyvenv.cfg``), or any interpreter's in the workspace at
    ``root``, read from its tree (:func:`_globbed`; an interpreter there is
    never run: a command may have written it, and it would run with the
    server's rights, outside the sandbox); another interpreter's asked of
    it (``-I -S``: with ``-S`` a venv's would name its base interpreter's).
    None when not known (it cannot be asked, or the tree in the workspace
    has no site folder)."""
    venv = python.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        return venv, _globbed(venv)
    if _in_workspace(root, python):
        sites = _globbed(venv)
        return (venv, sites) if sites else None
    return _asked(python)


def _in_workspace(root: Path, python: Path) -> bool:
    """``python``'s path, or where its links lead, lies in ``root``."""
    path = Path(os.path.abspath(python))
    bases = {Path(os.path.abspath(root)), root.resolve()}
    if any(path.is_relative_to(b) for b in bases):
        return True
    try:
        return any(python.resolve().is_relative_to(b) for b in bases)
    except OSError:
        return True  # a link loop: not run


def _asked(python: Path) -> tuple[Path, tuple[Path, ...]] | None:
    """``python``'s prefix and site folders, asked of it in its own session,
    its whole process group killed at :data:`ASK_BOUND_S`."""
    try:
        child = subprocess.Popen(
            [str(python), "-I", "-S", "-c", _ASK],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = child.communicate(timeout=ASK_BOUND_S)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        return None
    finally:
        _kill_group(child)  # what it started and left behind
    if child.returncode != 0:
        return None
    try:
        prefix, sites = json.loads(out)
    except (ValueError, TypeError):
        return None
    if not isinstance(prefix, str) or not isinstance(sites, list):
        return None
    return Path(prefix), tuple(Path(s) for s in dict.fromkeys(sites) if isinstance(s, str))


def _kill_group(child: subprocess.Popen[str]) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    child.wait()


def _inside(root: Path, folder: Path) -> str | None:
    try:
        relative = folder.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None
    return "" if relative == "." else relative


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _pth_files(site: Path) -> list[Path]:
    try:
        return sorted(site / n for n in os.listdir(site) if n.endswith(".pth"))
    except FileNotFoundError:
        return []


class PythonEnvironment:
    """The environment basedpyright resolves imports from, found once
    (:meth:`look`, blocking: run it in a worker thread; the pool starts it
    at start-up without waiting, and what asks waits for it). An
    interpreter that is no venv's is asked in a child process: 0.3 s
    through a pyenv shim on a loaded machine, off the start's path."""

    def __init__(
        self,
        root: Path,
        read: Callable[[str], str | None],
        skipped: Callable[[str], bool],
        which: Which = shutil.which,
    ) -> None:
        self._root = root
        self._read = read
        self._skipped = skipped
        self._which = which
        self._looked = False
        #: The interpreter looked at (None: none found).
        self._python: Path | None = None
        #: The interpreter's prefix and site folders; None: not known.
        self._prefix: Path | None = None
        self._sites: tuple[Path, ...] | None = None
        self._stamp: _Stamp = ()
        #: The roots as last worked out (:meth:`roots`); None: not known.
        self._roots: Roots | None = None
        self._roots_known = False
        #: How many changes :meth:`changed` has found (:meth:`changes`).
        self._changes = 0
        #: One look, change check or root reading at a time (worker threads).
        self._lock = threading.Lock()

    def look(self) -> None:
        """Ask the interpreter for its site folders and note their state
        (once; a call meanwhile, or a :meth:`changed` or :meth:`roots`,
        waits for it)."""
        with self._lock:
            if not self._looked:
                self._look()

    def _look(self) -> None:
        self._looked = True
        python = self._python = interpreter_of(self._root, self._read, self._which)
        if python is None:
            self._sites = ()  # no interpreter: basedpyright has no environment either
            return
        found = _sites_of(python, self._root)
        if found is None:
            self._sites = None
            return
        self._prefix, self._sites = found
        self._stamp = self._state()

    def _state(self) -> _Stamp:
        sites = self._sites or ()
        files = [*sites, *(p for s in sites for p in _pth_files(s))]
        return tuple((str(p), _mtime(p)) for p in files)

    def changed(self) -> list[str]:
        """The site folders (absolute) changed since the last look (a
        package added or removed, a ``.pth`` file written), noted as seen;
        the roots are worked out again at the next :meth:`roots`."""
        with self._lock:
            return self._changed()

    def _changed(self) -> list[str]:
        if not self._looked or not self._sites:
            return []
        before = dict(self._stamp)
        if all(_mtime(Path(p)) == t for p, t in before.items()):
            return []
        self._stamp = self._state()
        self._roots_known = False
        self._changes += 1
        now = dict(self._stamp)
        return [
            str(site)
            for site in self._sites
            if any(now.get(p) != before.get(p) for p in {*now, *before} if p.startswith(str(site)))
        ]

    def watched(self) -> bool:
        """Whether the environment's changes are counted (:meth:`changes`):
        it was looked at, it has site folders, and the interpreter
        basedpyright takes is still the one looked at (a ``.venv`` a
        command made is another environment, not watched). What is counted
        is a package added or removed and a ``.pth`` file written (the site
        folders' and ``.pth`` files' times); an installed module edited in
        place is not (review28; basedpyright is not told of it either).
        Blocking (reads the settings, a few ``stat`` calls)."""
        if not self._looked or not self._sites:
            return False
        return interpreter_of(self._root, self._read, self._which) == self._python

    def changes(self) -> int:
        """How many changes to the environment were seen since the first
        look: those :meth:`changed` found, and one more while a change is
        there that it has not found yet (a few ``stat`` calls, no lock: the
        stamp is replaced whole)."""
        stamp = self._stamp
        pending = bool(stamp) and any(_mtime(Path(p)) != t for p, t in stamp)
        return self._changes + pending

    def roots(self) -> Roots | None:
        """The folders in the workspace modules are imported from besides
        the root and ``src/``, each with the package it is; None when not
        known. Blocking (reads the ``.pth`` files): run it in a worker
        thread."""
        with self._lock:
            if not self._looked:
                self._look()
            if not self._roots_known:
                self._roots = self._work_out()
                self._roots_known = True
            return self._roots

    def _work_out(self) -> Roots | None:
        if self._sites is None:
            return None
        found: set[tuple[str, str]] = set()
        own = [p for p in (self._prefix, *self._sites) if p is not None]
        for site in self._sites:
            for pth in _pth_files(site):
                try:
                    text = pth.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    return None
                for line in text.splitlines():
                    line = line.strip()
                    if not line or line.startswith("#") or _IMPORT_LINE.match(line):
                        continue
                    folder = Path(os.path.normpath(site / line))
                    relative = _inside(self._root, folder)
                    if relative is None or not folder.is_dir() or relative in ("", "src"):
                        continue
                    if any(folder.is_relative_to(p) for p in own):
                        continue  # the environment's own (an egg beside its packages)
                    if self._skipped(f"{relative}/x.py"):
                        return None  # linked from a skipped folder: the scan does not read it
                    found.add((relative, ""))
        packages = _package_dirs(self._read)
        if packages is None:
            return None
        return tuple(sorted(found | packages))


def _package_dirs(read: Callable[[str], str | None]) -> set[tuple[str, str]] | None:
    """setuptools' ``package-dir`` mappings (``pyproject.toml``'s
    ``[tool.setuptools]``, ``setup.cfg``'s ``[options] package_dir``) as
    roots; None when a file cannot be read."""
    mapping: list[tuple[str, object]] = []  # both files': either may be in force
    text = read("pyproject.toml")
    if text is not None:
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return None
        setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
        dirs = setuptools.get("package-dir") if isinstance(setuptools, dict) else None
        if isinstance(dirs, dict):
            mapping.extend(dirs.items())
    text = read("setup.cfg")
    if text is not None:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return None
        for line in parser.get("options", "package_dir", fallback="").splitlines():
            name, _, target = line.partition("=")
            if target:
                mapping.append((name.strip(), target.strip()))
    found: set[tuple[str, str]] = set()
    for name, value in mapping:
        folder = workspace_folder(value)
        if folder is None or (name and not all(p.isidentifier() for p in name.split("."))):
            continue  # outside the workspace, or no package's name
        if name or folder not in ("", "src"):  # the root and src/ are the scan's own
            found.add((folder, name))
    return found
