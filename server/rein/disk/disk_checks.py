"""The analyzers' command lines over copies of the workspace: what the pool
answers when the analyzer gate asks about a state it cannot show in memory
(:class:`~rein.harness.ports.DiskDiagnostics`; a module the run deleted or
renamed away, :mod:`rein.analysis.on_disk`).

Each overlay is a copy of the workspace (:func:`~rein.testgate.shadow.
open_shadow`: real files copied, environment folders linked, the overlay's
texts written, its None paths left out; the copies made side by side), checked by ``basedpyright`` (the
command line beside the pool's ``basedpyright-langserver``) on the files
asked, in the same order in every copy, the copies side by side. Each
copy is checked as the language server checks the workspace: where the
project sets no pyright configuration, the copy gets the type checking
mode the server is sent (``standard``), as a ``pyrightconfig.json`` of its
own; the interpreter is found as the server finds it (the copy's linked
``.venv``, else ``python`` on the children's PATH). A server sent settings
a copy would not have (``extraPaths``, an interpreter, a configured
``gates.analyzer.servers`` entry's) has no command line here. The command line runs
in the children's environment (no secrets), in a process group of its own
that is ended at its bound or when the question is cancelled. The copies
are deleted afterwards; the workspace is never written.

A copy whose command line did not end within the bound, failed (its exit
status is neither 0 nor 1), printed no report or analysed fewer files than
it was given answers nothing: the gate then keeps its errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rein.harness.ports import Diagnostic, DiskErrors
from rein.process.environment import child_environment
from rein.process.groups import dies_with_us
from rein.testgate.shadow import Shadow, close_shadow, open_shadow

__all__ = ["CommandLine", "command_lines", "errors_on_disk", "parse_report"]

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


def _configured(root: Path) -> bool:
    if any((root / name).exists() for name in _CONFIGURED):
        return True
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(section in text for section in _SECTIONS)


def parse_report(shadow: Shadow, source: str, output: str) -> tuple[list[Diagnostic], int] | None:
    """The errors of ``basedpyright --outputjson`` in ``shadow`` (paths made
    relative to the workspace) and how many files it analysed; None when
    the output is no report."""
    try:
        data = json.loads(output)
        rows = data["generalDiagnostics"]
        analysed = int(data["summary"]["filesAnalyzed"])
    except (ValueError, KeyError, TypeError):
        return None
    out: list[Diagnostic] = []
    for row in rows:
        severity = _SEVERITY.get(str(row.get("severity")), 3)
        path = shadow.relative(str(row.get("file", "")))
        if severity != 1 or path is None:
            continue
        start = row.get("range", {}).get("start", {})
        end = row.get("range", {}).get("end", {})
        out.append(
            Diagnostic(
                path=path,
                line=int(start.get("line", 0)),
                character=int(start.get("character", 0)),
                end_line=end.get("line"),
                end_character=end.get("character"),
                severity=severity,
                code=row.get("rule") or None,
                source=source,
                message=str(row.get("message", "")),
            )
        )
    return out, analysed


async def _check(
    command: CommandLine, shadow: Shadow, paths: Sequence[str], deadline: float
) -> list[Diagnostic] | None:
    argv = dies_with_us([command.program, "--outputjson", *paths])
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=shadow.root,
        env=child_environment(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
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
    if len(paths) != len(overlays):
        return None
    deadline = time.monotonic() + timeout_s
    extra: dict[str, str | None] = {}
    if command.mode is not None and not _configured(root):
        extra["pyrightconfig.json"] = json.dumps({"typeCheckingMode": command.mode})
    built = await asyncio.gather(
        *(open_shadow(root, {**overlay, **extra}) for overlay in overlays), return_exceptions=True
    )
    shadows = [shadow for shadow in built if isinstance(shadow, Shadow)]
    try:
        failed = next((e for e in built if isinstance(e, BaseException)), None)
        if isinstance(failed, OSError):
            log.info("%s: a copy of the workspace could not be made: %s", command.name, failed)
            return None
        if failed is not None:
            raise failed
        found = await asyncio.gather(
            *(_check(command, s, asked, deadline) for s, asked in zip(shadows, paths, strict=True))
        )
    finally:
        for shadow in shadows:
            await close_shadow(shadow)
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
