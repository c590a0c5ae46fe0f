"""Runs one hook command: ``bash -c`` in the workspace folder, its JSON on
standard input, in the child environment without secrets
(:func:`rein.process.environment.child_environment`) plus
``CLAUDE_PROJECT_DIR``, within a time limit (its whole process group is
stopped when it is over); inside the OS sandbox when ``sandbox.also`` names
the hooks."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from rein.bring.hook_protocol import MAX_STDOUT_BYTES
from rein.harness.ports import ProcessSandbox
from rein.process.environment import child_environment
from rein.process.groups import dies_with_us, kill_process_group, reaped

__all__ = ["HookRun", "run_hook"]

#: A hook's stderr is kept up to this many characters; its stdout (which
#: may be a JSON answer, read whole or not at all) up to ``MAX_STDOUT_BYTES``.
MAX_OUTPUT_CHARS = 20_000
_GRACE_S = 2.0


@dataclass(frozen=True, slots=True)
class HookRun:
    exit_code: int
    stdout: str
    stderr: str
    #: Why it has no meaningful exit code (timed out, could not start).
    failure: str | None = None
    #: Its stdout was longer than ``MAX_STDOUT_BYTES``: ``stdout`` is a part.
    stdout_cut: bool = False


async def _drain(stream: Any, sink: list[bytes], limit: int) -> None:
    """Read ``stream`` to its end (a hook never blocks on a full pipe),
    keeping its first ``limit`` bytes and one more to tell it was cut."""
    size = 0
    async for chunk in stream:
        if size <= limit:
            sink.append(chunk[: limit + 1 - size])
            size += len(sink[-1])


def _text(chunks: list[bytes], limit: int = MAX_OUTPUT_CHARS) -> str:
    return b"".join(chunks).decode("utf-8", "replace")[:limit]


def _stdout(chunks: list[bytes]) -> tuple[str, bool]:
    data = b"".join(chunks)
    cut = len(data) > MAX_STDOUT_BYTES
    return data[:MAX_STDOUT_BYTES].decode("utf-8", "replace"), cut


async def run_hook(
    command: str,
    payload: dict[str, Any],
    root: Path,
    timeout_s: float,
    pass_env: tuple[str, ...] = (),
    sandbox: ProcessSandbox | None = None,
) -> HookRun:
    """Run ``command`` with ``payload`` as its standard input (in
    ``sandbox`` when given)."""
    shell = shutil.which("bash") or "/bin/sh"
    env = child_environment({"CLAUDE_PROJECT_DIR": str(root)}, pass_env=pass_env, cwd=root)
    argv = [shell, "-c", command]
    if sandbox is not None:
        argv = (await sandbox.start(argv, cwd=str(root), ends=False)).argv
    if argv[:2] == [shell, "-c"]:
        # Not sandboxed: what it leaves in a session of its own (setsid) is
        # ended with it, as the sandbox's pid namespace would.
        argv = reaped(argv)
    try:
        process = await anyio.open_process(
            dies_with_us(argv),
            cwd=str(root),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(-1, "", "", failure=f"could not start: {exc}")
    out: list[bytes] = []
    err: list[bytes] = []
    timed_out = False
    try:
        with anyio.move_on_after(timeout_s) as scope:
            async with anyio.create_task_group() as tasks:
                assert process.stdout is not None and process.stderr is not None
                tasks.start_soon(_drain, process.stdout, out, MAX_STDOUT_BYTES)
                tasks.start_soon(_drain, process.stderr, err, MAX_OUTPUT_CHARS * 4)
                assert process.stdin is not None
                try:
                    await process.stdin.send(json.dumps(payload).encode("utf-8"))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass  # a hook that does not read its input
                finally:
                    await process.stdin.aclose()
                await process.wait()
        timed_out = scope.cancelled_caught
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None or timed_out:
                await kill_process_group(process, _GRACE_S)
            # Its pipes closed now, not left to the garbage collector.
            await process.aclose()
    if timed_out:
        return HookRun(
            -1, _text(out), _text(err), failure=f"timed out after {timeout_s:g} s (stopped)"
        )
    stdout, cut = _stdout(out)
    code = process.returncode if process.returncode is not None else -1
    return HookRun(code, stdout, _text(err), stdout_cut=cut)
