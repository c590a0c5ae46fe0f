"""``rein bench acp``: how fast ``rein acp`` answers ``initialize``, next to
``rein serve`` measured the same way in the same run.

Each sample spawns the command and times it from the spawn to the
``initialize`` result read back from its stdout. Both are driven by the same
few lines of raw JSON-RPC (ACP: one JSON object per line; LSP: a
Content-Length header), so neither pays for a client library the other does
not. Samples alternate between the commands so all see the same machine.
The processes start in a fresh temporary HOME and workspace.

The floor: a bare agent of the ACP SDK (:data:`BARE_AGENT`, ``initialize``
only) started the same way. Importing the SDK's schema is most of it, as
``lsprotocol`` is most of ``rein serve``'s.

Figures go to docs/performance.md.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["SAMPLES", "bench_acp", "initialize_ms"]

#: Samples of each command by default.
SAMPLES = 9
#: The bound on one answer and on one exit (a broken server fails the bench).
BOUND_S = 30.0

Protocol = str  # "acp" | "lsp" | "floor"

#: An ACP agent that answers ``initialize`` and nothing else: the floor.
BARE_AGENT = """
import asyncio
from acp import PROTOCOL_VERSION, run_agent
from acp.schema import InitializeResponse

class Bare:
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kw):
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

asyncio.run(run_agent(Bare()))
"""

_COMMANDS = {
    "acp": ("-m", "rein", "acp"),
    "lsp": ("-m", "rein", "serve"),
    "floor": ("-c", BARE_AGENT),
}


def _p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


async def _read_lsp(stdout: asyncio.StreamReader) -> dict[str, Any]:
    length = None
    while True:
        line = await stdout.readline()
        if not line:
            raise RuntimeError("rein serve closed its stdout before answering initialize")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length is None:
        raise RuntimeError("rein serve sent a message without Content-Length")
    message: dict[str, Any] = json.loads(await stdout.readexactly(length))
    return message


async def _read_acp(stdout: asyncio.StreamReader) -> dict[str, Any]:
    line = await stdout.readline()
    if not line:
        raise RuntimeError("rein acp closed its stdout before answering initialize")
    message: dict[str, Any] = json.loads(line)
    return message


def _lsp_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize(protocol: Protocol, root: Path) -> bytes:
    if protocol != "lsp":
        params: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": {}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        return json.dumps(request).encode() + b"\n"
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    return _lsp_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})


async def initialize_ms(protocol: Protocol, root: Path, env: dict[str, str]) -> float:
    """Spawn ``rein acp``, ``rein serve`` or the bare agent in ``root`` and
    time it to its ``initialize`` result; then end it the protocol's way
    (ACP: stdin closed; LSP: shutdown and exit) and check it exits."""
    command = protocol if protocol != "lsp" else "serve"
    read: Callable[[asyncio.StreamReader], Awaitable[dict[str, Any]]] = (
        _read_lsp if protocol == "lsp" else _read_acp
    )
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *_COMMANDS[protocol],
        cwd=root,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(_initialize(protocol, root))
        await process.stdin.drain()
        async with asyncio.timeout(BOUND_S):
            while True:  # a server may log before it answers
                message = await read(process.stdout)
                if message.get("id") == 1:
                    break
        elapsed = (time.perf_counter() - started) * 1000
        if "result" not in message:
            raise RuntimeError(f"rein {command}: initialize failed: {message.get('error')}")
        if protocol == "lsp":
            process.stdin.write(_lsp_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            process.stdin.write(_lsp_frame({"jsonrpc": "2.0", "method": "exit"}))
            await process.stdin.drain()
        process.stdin.close()
        async with asyncio.timeout(BOUND_S):
            code = await process.wait()
        if code != 0:
            raise RuntimeError(f"rein {command} exited with {code} after initialize")
        return elapsed
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _measure(samples: int, tmp: Path) -> dict[str, Any]:
    root = tmp / "ws"
    root.mkdir()
    env = {
        **os.environ,
        "HOME": str(tmp),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data"),
    }
    times: dict[Protocol, list[float]] = {name: [] for name in _COMMANDS}
    for _ in range(samples):
        for protocol in _COMMANDS:
            times[protocol].append(await initialize_ms(protocol, root, env))
    acp_p50, lsp_p50 = statistics.median(times["acp"]), statistics.median(times["lsp"])
    floor_p50 = statistics.median(times["floor"])
    return {
        "samples": samples,
        "acp_init_ms_p50": round(acp_p50, 1),
        "acp_init_ms_p95": round(_p95(times["acp"]), 1),
        "lsp_init_ms_p50": round(lsp_p50, 1),
        "lsp_init_ms_p95": round(_p95(times["lsp"]), 1),
        "ratio_p50": round(acp_p50 / lsp_p50, 2),
        "sdk_floor_ms_p50": round(floor_p50, 1),
        "ratio_to_floor_p50": round(acp_p50 / floor_p50, 2),
    }


def bench_acp(samples: int = SAMPLES) -> list[dict[str, Any]]:
    """One row: both commands' medians and p95s, the ratio of the medians,
    and ``rein acp`` against the bare SDK agent."""
    if samples < 1:
        raise ValueError(f"rein bench acp: samples must be at least 1, got {samples}")
    with tempfile.TemporaryDirectory(prefix="rein-bench-acp-") as tmp:
        return [asyncio.run(_measure(samples, Path(tmp)))]
