"""Which analyzers a workspace gets: the ``gates.analyzer.servers`` presets
and entries (:mod:`rein.harness.analyzer_servers`), each used when the
workspace has files of its language (a bounded scan through the workspace
filter) and, for a preset, when its server can be found.

A server's executable is looked for on PATH, in the project's
``node_modules/.bin``, next to Rein's Python (a virtual environment's
``bin/``) and in Rein's tool cache (:func:`tool_cache`:
``$REIN_TOOL_CACHE``, else ``$XDG_CACHE_HOME/rein/tools``, else
``~/.cache/rein/tools``; its ``node_modules/.bin`` and ``bin``), in that
order. Two presets are fitted to the workspace: ``typescript`` is given the
project's own TypeScript (``tsserver.path``) when it has one, else a
TypeScript 5 next to the server as the fallback; ``clangd`` is given
``--compile-commands-dir`` when a ``compile_commands.json`` exists, else
fallback flags (said in the analyzers line), and from version 14 on
``--use-dirty-headers`` (a header's text as the analyzers were shown it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rein.analysis.reach import CODE_EXTENSIONS
from rein.disk.analyzer_specs import AnalyzerSpec, spec_of
from rein.harness.analyzer_servers import AnalyzerServerConfig
from rein.harness.config import AnalyzerGateConfig
from rein.harness.errors import ToolError
from rein.tools.disk_read import read_text
from rein.tools.ignore import WorkspaceFilter

__all__ = [
    "SCAN_LIMIT",
    "WorkspaceFiles",
    "locate",
    "not_analysed",
    "scan_workspace",
    "search_places",
    "tool_cache",
    "wanted",
    "workspace_specs",
]

#: How many files the language scan looks at, at most.
SCAN_LIMIT = 20_000


def tool_cache() -> Path:
    """Rein's own tool folder (``npm i --prefix <it> ...`` installs there)."""
    if os.environ.get("REIN_TOOL_CACHE"):
        return Path(os.environ["REIN_TOOL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rein" / "tools"


def search_places(root: Path | None, *, own_tools: bool = True) -> list[tuple[str, Path]]:
    """The folders searched after PATH, each with what it is (the project's
    ``node_modules/.bin`` only with ``own_tools``)."""
    places: list[tuple[str, Path]] = []
    if root is not None and own_tools:
        places.append(("the project's node_modules/.bin", root / "node_modules" / ".bin"))
    places.append(("next to Rein's Python", Path(sys.executable).parent))
    cache = tool_cache()
    places += [
        ("Rein's tool cache", cache / "node_modules" / ".bin"),
        ("Rein's tool cache", cache / "bin"),
    ]
    return places


def locate(
    name: str, root: Path | None = None, *, own_tools: bool = True
) -> tuple[str, str] | None:
    """Where ``name`` is (its path, and which place it was found in), or None;
    without ``own_tools`` nothing of the project's own folder is taken."""
    if os.path.isabs(name):
        return (name, "as configured") if os.access(name, os.X_OK) else None
    found = shutil.which(name)
    if found:
        return found, "on PATH"
    for where, folder in search_places(root, own_tools=own_tools):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate), where
    return None


@dataclass
class WorkspaceFiles:
    """What the language scan saw: files per extension (lower case), the
    root's file names, and whether it stopped at its limit."""

    counts: Counter[str] = field(default_factory=Counter)
    root_names: set[str] = field(default_factory=set)
    truncated: bool = False


def _walk(root: Path) -> Iterator[str]:
    """The files the workspace filter keeps, hidden and symlinked folders
    left out, one at a time (the scan stops at its limit)."""
    flt = WorkspaceFilter(root)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = [
            d
            for d in sorted(dirnames)
            if not d.startswith(".")
            and not os.path.islink(os.path.join(dirpath, d))
            and not flt.entry_skipped(f"{rel_dir}/{d}" if rel_dir else d, True)
        ]
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if not flt.entry_skipped(rel, False):
                yield rel


def scan_workspace(root: Path, limit: int = SCAN_LIMIT) -> WorkspaceFiles:
    """Count the workspace's files per extension (what the filter keeps,
    hidden folders left out), at most ``limit`` files."""
    out = WorkspaceFiles()
    try:
        out.root_names = {p.name for p in root.iterdir() if p.is_file()}
    except OSError:
        return out
    for seen, path in enumerate(_walk(root)):
        if seen >= limit:
            out.truncated = True
            break
        name = path.rpartition("/")[2]
        dot = name.rfind(".")
        if dot > 0:
            out.counts[name[dot:].lower()] += 1
    return out


def wanted(server: AnalyzerServerConfig, files: WorkspaceFiles) -> bool:
    """The workspace needs ``server`` (its ``enabled``, and for "auto" its
    language's files and its configuration files)."""
    if server.enabled is False:
        return False
    if server.enabled is True:
        return True
    if server.config_files and not files.root_names.intersection(server.config_files):
        return False
    has_files = any(files.counts[ext.lower()] for ext in server.extensions or {})
    return has_files or bool(files.root_names.intersection(server.project_files or []))


#: The most of TypeScript's package.json read for its version (it is ~4 KB).
_PACKAGE_JSON_BYTES = 256 * 1024


def _typescript_version(tsserver: Path) -> str:
    """`` 5.9.3``: the version in the ``package.json`` of the TypeScript
    ``tsserver`` (``<typescript>/lib/tsserver.js``) belongs to, or "" (the
    language server does not say which TypeScript it runs)."""
    package = tsserver.parent.parent / "package.json"
    try:
        # The workspace's reader: a FIFO there (a hostile checkout) is
        # refused, not waited on, and a huge file is not read.
        text = read_text(package, str(package), limit=_PACKAGE_JSON_BYTES).text
        version = json.loads(text).get("version")
    except (ToolError, ValueError, AttributeError):
        return ""
    return f" {version}" if isinstance(version, str) and version else ""


def _typescript(
    root: Path, executable: str, *, own_tools: bool = True
) -> tuple[dict[str, Any], str | None]:
    """The typescript preset's tsserver: the project's own TypeScript (with
    ``own_tools``), else one next to the server (its npm prefix) as the
    fallback; the note names it with its version."""
    options: dict[str, Any] = {"disableAutomaticTypingAcquisition": True}
    own = root / "node_modules" / "typescript" / "lib" / "tsserver.js"
    if own_tools and own.is_file():
        own_note = f"the project's TypeScript{_typescript_version(own)}"
        return {**options, "tsserver": {"path": str(own)}}, own_note
    where = "next to the server (the project has none)"
    if not own_tools:
        where = "next to the server (the project's own is not run here)"
    note: str | None = None
    if own_tools and (root / "node_modules" / "typescript").is_dir():
        # TypeScript 7 (the native compiler) has no tsserver.js.
        note = "the project's TypeScript has no tsserver.js (TypeScript 7?): the server's used"
    server_dir = Path(os.path.realpath(executable)).parent
    for base in (server_dir, *server_dir.parents[:4]):
        for candidate in (
            base / "node_modules" / "typescript" / "lib" / "tsserver.js",
            base / "typescript" / "lib" / "tsserver.js",
        ):
            if candidate.is_file():
                if note is None:
                    note = f"TypeScript{_typescript_version(candidate)} {where}"
                return {**options, "tsserver": {"fallbackPath": str(candidate)}}, note
    return options, "no TypeScript 5 found (npm i -g typescript@5; 7 has no tsserver.js)"


#: How long ``clangd --version`` may take.
_VERSION_BOUND_S = 5.0
_CLANGD_VERSION = re.compile(r"clangd version (\d+)")


#: (executable, modification time) -> the major version it answered (a
#: reinstalled clangd is asked again). A probe that failed is not kept: a
#: clangd slow under load is asked again by the next workspace.
_CLANGD_MAJORS: dict[tuple[str, int], int] = {}


def _clangd_major(executable: str) -> int | str:
    """The major version ``executable --version`` prints (``Debian clangd
    version 14.0.6`` -> 14), or why there is none (no answer within the
    bound, a text naming no version)."""
    try:
        key = (executable, os.stat(executable).st_mtime_ns)
    except OSError as exc:
        return f"clangd could not be read ({exc.strerror or exc})"
    if key in _CLANGD_MAJORS:
        return _CLANGD_MAJORS[key]
    try:
        done = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=_VERSION_BOUND_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"clangd --version did not answer within {_VERSION_BOUND_S:g} s"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"clangd --version failed ({exc})"
    match = _CLANGD_VERSION.search(done.stdout + done.stderr)
    if match is None:
        return "clangd --version named no version"
    if len(_CLANGD_MAJORS) < 8:
        _CLANGD_MAJORS[key] = int(match.group(1))
    return int(match.group(1))


def _dirty_headers(executable: str) -> str | None:
    """None when this clangd takes ``--use-dirty-headers`` (clangd 14 on),
    else why it is not given it (said in the analyzers line)."""
    major = _clangd_major(executable)
    if isinstance(major, str):
        return f"no --use-dirty-headers: {major}"
    return None if major >= 14 else f"no --use-dirty-headers: clangd {major} lacks it"


def _clangd(
    root: Path, command: tuple[str, ...], *, found: bool = True
) -> tuple[tuple[str, ...], dict[str, Any], str]:
    """clangd with the project's compile_commands.json, or fallback flags.
    A clangd that can (``found``, version 14 on) reads an open header's
    text as the analyzers were shown it, not the disk's
    (``--use-dirty-headers``): the gate shows a changed header's earlier
    text in memory to ask whether its importers' errors are the run's, and
    a clangd reading the disk answered with the run's header: the errors
    it caused looked as if they were there before, and a broken prototype
    passed."""
    without = ""
    if found and "--use-dirty-headers" not in command:
        why = _dirty_headers(command[0])
        if why is None:
            command = (*command, "--use-dirty-headers")
        else:
            without = f"; {why}"
    for folder in (root, root / "build"):
        if (folder / "compile_commands.json").is_file():
            command = (*command, f"--compile-commands-dir={folder}")
            return command, {}, f"compile_commands.json{without}"
    flags = [f"-I{root}", f"-I{root / 'include'}"]
    return command, {"fallbackFlags": flags}, f"fallback flags: no compile_commands.json{without}"


def fitted(server: AnalyzerServerConfig, root: Path, *, own_tools: bool = True) -> AnalyzerSpec:
    """``server`` as the pool's spec, its executable found where it is
    (left as named when it is not: the pool reports it not found); without
    ``own_tools`` neither the project's ``node_modules/.bin`` nor its own
    TypeScript is used (nothing of the project's runs)."""
    spec = spec_of(server)
    place = locate(spec.command[0], root, own_tools=own_tools)
    command = (place[0], *spec.command[1:]) if place else spec.command
    changes: dict[str, Any] = {"command": command}
    if server.name == "typescript" and place is not None:
        options, note = _typescript(root, place[0], own_tools=own_tools)
        changes["initialization_options"] = {**(spec.initialization_options or {}), **options}
        changes["note"] = note
    elif server.name == "clangd":
        command, options, note = _clangd(root, command, found=place is not None)
        changes.update(command=command, note=note)
        changes["initialization_options"] = {**(spec.initialization_options or {}), **options}
    return replace(spec, **changes)


def workspace_specs(
    root: Path,
    config: AnalyzerGateConfig,
    files: WorkspaceFiles | None = None,
    *,
    own_tools: bool = True,
) -> list[AnalyzerSpec]:
    """The analyzers this workspace gets, in the presets' then the
    configuration's order. One whose server is nowhere is kept: the pool
    says it was not found. ``own_tools``: see :func:`fitted`."""
    files = scan_workspace(root) if files is None else files
    return [
        fitted(server, root, own_tools=own_tools)
        for server in config.effective_servers()
        if wanted(server, files)
    ]


def not_analysed(files: WorkspaceFiles, specs: Sequence[AnalyzerSpec]) -> dict[str, int]:
    """The workspace's source extensions no spec covers, with their counts
    (give the running analyzers' specs)."""
    covered = {ext.lower() for spec in specs for ext in spec.extensions}
    return {
        ext: count
        for ext, count in sorted(files.counts.items())
        if ext in CODE_EXTENSIONS and ext not in covered
    }
