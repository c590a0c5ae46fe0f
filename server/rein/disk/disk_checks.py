"""The analyzers' command lines over copies of the workspace: what the pool
answers when the analyzer gate asks about a state it cannot show in memory
(:class:`~rein.harness.ports.DiskDiagnostics`; a module the run deleted or
renamed away, :mod:`rein.analysis.on_disk`).

Each overlay is a copy of the workspace (:func:`~rein.testgate.shadow.
open_shadow`: real files copied, environment folders linked, the overlay's
texts written, its None paths left out; the copies made side by side),
checked by ``basedpyright`` (the command line beside the pool's
``basedpyright-langserver``) on the files asked, in the same order in every
copy, the copies side by side. Each copy is checked as the language server
checks the workspace: where the project sets no pyright configuration, the
copy gets the type checking mode the server is sent (``standard``), as a
``pyrightconfig.json`` of its own; the interpreter is found as the server
finds it (the copy's linked ``.venv``, else ``python`` on the children's
PATH). The command line runs in the children's environment (no secrets), in
a process group of its own that is ended at the bound or when the question
is cancelled; each file is passed as ``./path`` (never an option). The
copies are deleted afterwards; the workspace is never written. Making them
and checking them share the bound.

No copy is made where it would not resolve imports as the workspace does,
and nothing is answered then: a server sent settings a copy would not have
(``extraPaths``, an interpreter, a configured ``gates.analyzer.servers``
entry's, :func:`command_lines`); a project configuration naming a folder
outside the workspace (``extraPaths = ["../shared"]``, an absolute
``venvPath``: resolved from the copy's folder, :func:`faithful`); an
environment importing folders of the workspace (an editable install's
``.pth``: the pool's :meth:`~rein.disk.python_environment.PythonEnvironment.
roots`); a changed file under a linked folder of the copy. Nor does a copy
whose command line did not end within the bound, failed (its exit status
is neither 0 nor 1, or it did not start), printed no report or analysed
fewer files than it was given: the gate then keeps its errors (review67).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rein.harness.ports import Diagnostic, DiskErrors
from rein.process.environment import child_environment
from rein.process.groups import dies_with_us
from rein.testgate.shadow import Shadow, close_shadow, open_shadow

__all__ = ["CommandLine", "command_lines", "errors_on_disk", "faithful", "parse_report"]

log = logging.getLogger(__name__)

#: The files that configure basedpyright: a project with one keeps it.
_CONFIGURED = ("pyrightconfig.json",)
_SECTIONS = ("[tool.pyright]", "[tool.basedpyright]")
_SEVERITY = {"error": 1, "warning": 2, "information": 3}


@dataclass(frozen=True, slots=True)
class CommandLine:
    """One analyzer's command line: ``basedpyright`` beside its server."""

    #: The analyzer's name (the diagnostics' source).
    name: str
    program: str
    #: The type checking mode the language server is sent.
    mode: str | None


#: The language servers whose command line is known: the server's program
#: -> the command line's, beside it.
_PROGRAMS = {"basedpyright-langserver": "basedpyright"}


def command_lines(
    analyzers: Iterable[tuple[str, str, bool, Mapping[str, Any]]],
) -> list[CommandLine]:
    """The command lines of the live ``analyzers`` (name, executable, alive,
    settings sent) whose program has one beside it."""
    out: list[CommandLine] = []
    for name, executable, alive, settings in analyzers:
        program = _PROGRAMS.get(Path(executable).name)
        beside = Path(executable).parent / program if program else None
        if not alive or beside is None or not beside.exists():
            continue
        mode = _mirrored_mode(settings)
        if mode is not False:
            out.append(CommandLine(name, str(beside), mode))
    return out


#: The settings the command line has as the server is sent them (the
#: diagnostic mode and the excludes do not change a file asked by name).
_MIRRORED = frozenset({"typeCheckingMode", "diagnosticMode", "autoSearchPaths", "exclude"})


def _mirrored_mode(settings: Mapping[str, Any]) -> str | Literal[False] | None:
    """The type checking mode to give the copies (None: the project's or
    the command line's own), or False when the server is sent a setting a
    copy would not have (``extraPaths``, ``python.pythonPath``,
    ``autoSearchPaths`` off: a configured server): its errors would not be
    the copies'."""
    node = settings.get("basedpyright", {})
    analysis = node.get("analysis", {}) if isinstance(node, Mapping) else None
    if (
        set(settings) - {"basedpyright"}
        or not isinstance(node, Mapping)
        or set(node) - {"analysis"}
    ):
        return False
    if not isinstance(analysis, Mapping) or set(analysis) - _MIRRORED:
        return False
    if analysis.get("autoSearchPaths", True) is not True:
        return False
    mode = analysis.get("typeCheckingMode")
    return mode if isinstance(mode, str) else None


def _made(command: CommandLine, building: Sequence[asyncio.Future[Shadow]]) -> list[Shadow]:
    """The copies made, or none when one failed or could not hold its
    overlay (a path under a linked folder: the copy would read the real
    one there, the gone module still gone)."""
    made: list[Shadow] = []
    for task in building:
        failed = task.exception()
        if isinstance(failed, OSError):
            log.info("%s: a copy of the workspace could not be made: %s", command.name, failed)
            return []
        if failed is not None:
            log.warning("%s: a copy of the workspace failed", command.name, exc_info=failed)
            return []
        made.append(task.result())
    if any(shadow.unreachable for shadow in made):
        log.info("%s: a changed file lies under a linked folder of the copy", command.name)
        return []
    return made


#: The project settings naming folders basedpyright resolves imports from.
_PATH_SETTINGS = ("extraPaths", "venvPath", "venv", "stubPath", "typeshedPath", "root")


def _paths_in(config: object) -> list[str]:
    """The folder paths a pyright configuration names (its own, and its
    execution environments')."""
    if not isinstance(config, dict):
        return []
    out: list[str] = []
    for key in _PATH_SETTINGS:
        value = config.get(key)
        values = value if isinstance(value, list) else [value]
        out += [v for v in values if isinstance(v, str)]
    for environment in config.get("executionEnvironments") or []:
        out += _paths_in(environment)
    return out


def faithful(root: Path) -> bool:
    """A copy of ``root`` resolves imports as ``root`` does: the project's
    pyright configuration names no folder outside the workspace (a path is
    resolved from the configuration's folder: the copy's ``../shared`` is
    not the workspace's), and it can be read."""
    configs: list[object] = []
    try:
        if (root / "pyrightconfig.json").exists():
            configs.append(json.loads((root / "pyrightconfig.json").read_text(encoding="utf-8")))
        if (root / "pyproject.toml").exists():
            text = (root / "pyproject.toml").read_text(encoding="utf-8")
            tool = tomllib.loads(text).get("tool", {})
            configs += (
                [tool.get(n) for n in ("pyright", "basedpyright")] if isinstance(tool, dict) else []
            )
    except (OSError, ValueError):
        return False  # JSON with comments, a broken file: not known
    for path in (p for config in configs for p in _paths_in(config)):
        normal = os.path.normpath(path)
        if os.path.isabs(normal) or normal == ".." or normal.startswith("../"):
            return False
    return True


def _configured(root: Path) -> bool:
    if any((root / name).exists() for name in _CONFIGURED):
        return True
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(section in text for section in _SECTIONS)


def _relative(shadow: Shadow, file: str) -> str | None:
    """A path the command line reported (resolved: a temporary folder
    reached through a link, ``/var`` -> ``/private/var``) as a path of the
    workspace, or None outside the copy."""
    if not file:
        return None
    try:
        resolved = Path(file).resolve()
        return resolved.relative_to(shadow.root.resolve()).as_posix()
    except (ValueError, OSError):
        return shadow.relative(file)


def parse_report(shadow: Shadow, source: str, output: str) -> tuple[list[Diagnostic], int] | None:
    """The findings of ``basedpyright --outputjson`` in ``shadow`` (paths
    made relative to the workspace; every severity: a project can make a
    rule a warning, and the gate block on warnings) and how many files it
    analysed; None when the output is no report."""
    try:
        data = json.loads(output)
        rows = data["generalDiagnostics"]
        analysed = int(data["summary"]["filesAnalyzed"])
    except (ValueError, KeyError, TypeError):
        return None
    out: list[Diagnostic] = []
    for row in rows if isinstance(rows, list) else ():
        if not isinstance(row, dict):
            continue
        path = _relative(shadow, str(row.get("file", "")))
        span = row.get("range")
        start = span.get("start") if isinstance(span, dict) else None
        end = span.get("end") if isinstance(span, dict) else None
        if path is None or not isinstance(start, dict):
            continue
        try:
            out.append(
                Diagnostic(
                    path=path,
                    line=int(start.get("line", 0)),
                    character=int(start.get("character", 0)),
                    end_line=end.get("line") if isinstance(end, dict) else None,
                    end_character=end.get("character") if isinstance(end, dict) else None,
                    severity=_SEVERITY.get(str(row.get("severity")), 3),
                    code=str(row.get("rule") or "") or None,
                    source=source,
                    message=str(row.get("message", "")),
                )
            )
        except (ValueError, TypeError):
            return None  # not basedpyright's report
    return out, analysed


async def _check(
    command: CommandLine, shadow: Shadow, paths: Sequence[str], deadline: float
) -> list[Diagnostic] | None:
    # "./": a file named like an option (``--pythonpath=x.py``) stays a file.
    argv = dies_with_us([command.program, "--outputjson", *(f"./{p}" for p in paths)])
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=shadow.root,
            env=child_environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        log.info("%s on a copy of the workspace did not start: %s", command.name, exc)
        return None
    try:
        output, _ = await asyncio.wait_for(
            process.communicate(), max(deadline - time.monotonic(), 0.0)
        )
    except TimeoutError:
        log.info("%s on a copy of the workspace: no report within its bound", command.name)
        return None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    if process.returncode not in (0, 1):
        log.info("%s on a copy of the workspace exited %s", command.name, process.returncode)
        return None
    report = parse_report(shadow, command.name, output.decode("utf-8", errors="replace"))
    if report is None or report[1] < len(paths):
        return None
    return report[0]


async def errors_on_disk(
    root: Path,
    command: CommandLine,
    overlays: Sequence[Mapping[str, str | None]],
    paths: Sequence[Sequence[str]],
    timeout_s: float,
) -> DiskErrors | None:
    """``command`` on each overlay's ``paths`` in a copy of ``root`` per
    overlay, side by side; None when one copy answered nothing (see the
    module)."""
    if not overlays or len(paths) != len(overlays) or not faithful(root):
        return None
    deadline = time.monotonic() + timeout_s
    extra: dict[str, str | None] = {}
    if command.mode is not None and not _configured(root):
        extra["pyrightconfig.json"] = json.dumps({"typeCheckingMode": command.mode})
    building = [
        asyncio.ensure_future(open_shadow(root, {**overlay, **extra})) for overlay in overlays
    ]
    found: list[list[Diagnostic] | None] = [None]
    try:
        _done, pending = await asyncio.wait(building, timeout=timeout_s)
        if pending:
            log.info("%s: the copies of the workspace took longer than the bound", command.name)
        elif made := _made(command, building):
            found = list(
                await asyncio.gather(
                    *(
                        _check(command, shadow, asked, deadline)
                        for shadow, asked in zip(made, paths, strict=True)
                    )
                )
            )
    finally:
        for task in building:
            task.cancel()  # one still being made deletes what it made (open_shadow)
        for task in building:
            if task.done() and not task.cancelled() and task.exception() is None:
                await close_shadow(task.result())
    log.info(
        "%s on %s files of %d copies of the workspace: %s in %.1f s",
        command.name,
        "/".join(str(len(asked)) for asked in paths),
        len(overlays),
        "no answer" if any(errors is None for errors in found) else "answered",
        timeout_s - (deadline - time.monotonic()),
    )
    if any(errors is None for errors in found):
        return None
    return DiskErrors(tuple(tuple(errors or ()) for errors in found))
