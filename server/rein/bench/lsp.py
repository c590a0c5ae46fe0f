"""``rein bench lsp``: the server as a client sees it, over stdio.

* cold start: spawning ``rein serve`` to the initialize result, against the
  floor of a bare pygls server (no features) started the same way in the
  same run, and their ratio (the goal: at most 1.2);
* ``rein/steer`` round trip (p50/p99) while a run streams;
* ``rein/event`` notifications per second delivered during a tool-heavy run;
* the server's RSS idle and after a 200-turn run.

``--sessions N --turns T`` (:func:`bench_load`) is the load mode: N sessions
at once against the mock server over real HTTP, about T tool turns each;
every session's events must arrive with gap-free ``seq``; ``rein/steer``
round trips under that load against the same requests to an idle server (the
floor, in the same run); the server's RSS and what it holds after.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.lsp._protocol import plain_dict_converter

__all__ = ["bench_load", "bench_lsp"]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _script(path: Path, turns: list[dict[str, Any]]) -> str:
    path.write_text(yaml.safe_dump({"turns": turns}))
    return str(path)


#: A language server with no features: the floor of ``rein serve``'s start.
BARE_SERVER = "from pygls.lsp.server import LanguageServer; LanguageServer('bare', '0').start_io()"
START_SAMPLES = 7


async def _start_ms(command: list[str], root: Path) -> float:
    """Spawn ``command`` and time it to the initialize result."""
    client = LanguageClient("rein-bench", "0", converter_factory=plain_dict_converter)
    started = time.perf_counter()
    await client.start_io(*command)
    await client.initialize_async(
        lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri())
    )
    elapsed = (time.perf_counter() - started) * 1000
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return elapsed


async def bench_start(root: Path, samples: int = START_SAMPLES) -> dict[str, Any]:
    """Cold start of ``rein serve`` and of a bare pygls server, interleaved
    so both see the same machine; medians and their ratio."""
    rein: list[float] = []
    bare: list[float] = []
    for _ in range(samples):
        bare.append(await _start_ms([sys.executable, "-c", BARE_SERVER], root))
        rein.append(await _start_ms([sys.executable, "-m", "rein", "serve"], root))
    rein_ms = statistics.median(rein)
    bare_ms = statistics.median(bare)
    return {
        "start_ms_p50": round(rein_ms, 1),
        "bare_pygls_start_ms_p50": round(bare_ms, 1),
        "start_ratio": round(rein_ms / bare_ms, 2),
    }


async def _run(tmp: Path) -> dict[str, Any]:
    root = tmp / "ws"
    root.mkdir()
    (root / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n" * 20)
    tool_turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]} for _ in range(200)
    ]
    busy = _script(tmp / "busy.yaml", [*tool_turns, {"text": "done"}])
    client = LanguageClient("rein-bench", "0", converter_factory=plain_dict_converter)
    events = 0
    first_event = last_event = 0.0

    @client.feature("rein/event")
    def on_event(params: Any) -> None:
        nonlocal events, first_event, last_event
        now = time.perf_counter()
        if not events:
            first_event = now
        events += 1
        last_event = now

    @client.feature("rein/diagnostics")
    def diagnostics(params: Any) -> dict[str, Any]:
        return {"items": []}

    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "rein", "serve")
    await client.initialize_async(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            root_uri=root.as_uri(),
            initialization_options={
                "model": {"provider": "replay", "script": busy},
                "gates": {"analyzer": {"enabled": False}},
                "harness": {"maxModelTurnsPerRun": 300},
                "storagePath": str(tmp / "storage"),
            },
        )
    )
    cold_ms = (time.perf_counter() - started) * 1000
    client.initialized(lsp.InitializedParams())
    server = client._server
    assert server is not None
    await asyncio.sleep(0.3)
    idle_rss = _rss_mb(server.pid)

    # A 200-turn tool-heavy run: events per second.
    t0 = time.perf_counter()
    result = await client.protocol.send_request_async("rein/prompt", {"text": "read it 200 times"})
    run_s = time.perf_counter() - t0
    assert result["status"] == "completed", result
    events_per_s = events / max(last_event - first_event, 1e-9)
    after_rss = _rss_mb(server.pid)

    # Steer round trips while a run streams a long answer.
    long_text = "word " * 3_000
    stream = _script(
        tmp / "stream.yaml", [{"text": long_text, "chunk_size": 5, "chunk_delay": 0.001}]
    )
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(
            settings={
                "rein": {
                    "model": {"provider": "replay", "script": stream},
                    "gates": {"analyzer": {"enabled": False}},
                }
            }
        )
    )
    events_before = events
    task = asyncio.ensure_future(
        client.protocol.send_request_async("rein/prompt", {"text": "talk"})
    )
    while events_before == events and not task.done():  # noqa: ASYNC110
        await asyncio.sleep(0.001)
    sessions = (await client.protocol.send_request_async("rein/sessions", {}))["sessions"]
    session_id = sessions[0]["id"]
    rtts: list[float] = []
    for i in range(200):
        if task.done():
            break
        t = time.perf_counter()
        await client.protocol.send_request_async(
            "rein/steer", {"sessionId": session_id, "text": f"note {i}"}
        )
        rtts.append((time.perf_counter() - t) * 1000)
    await task
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    rtts.sort()
    start = await bench_start(root)
    return {
        **start,
        "cold_start_ms": round(cold_ms, 1),
        "steer_rtt_ms_p50": round(statistics.median(rtts), 2) if rtts else None,
        "steer_rtt_ms_p99": round(rtts[int(len(rtts) * 0.99) - 1], 2) if rtts else None,
        "steers": len(rtts),
        "events_per_s": round(events_per_s),
        "run_200_turns_s": round(run_s, 2),
        "rss_idle_mb": round(idle_rss, 1),
        "rss_after_200_turns_mb": round(after_rss, 1),
    }


def bench_lsp() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="rein-bench-lsp-") as tmp:
        return [asyncio.run(_run(Path(tmp)))]


# ------------------------------------------------------------------ load


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(len(ordered) * q) - 1)], 2)


async def _steer_rtts(client: LanguageClient, ids: list[str], count: int, busy: Any) -> list[float]:
    """``count`` steer round trips, round robin over ``ids``, while ``busy()``."""
    rtts: list[float] = []
    for i in range(count):
        if not busy():
            break
        t = time.perf_counter()
        await client.protocol.send_request_async(
            "rein/steer", {"sessionId": ids[i % len(ids)], "text": f"note {i}"}
        )
        rtts.append((time.perf_counter() - t) * 1000)
    return rtts


@asynccontextmanager
async def _mock_server(scenario: str) -> AsyncIterator[str]:
    """``rein mock-server`` in its own process (as a provider would be, so
    its work is not the client's): its URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rein",
        "mock-server",
        "--port",
        "0",
        "--scenario",
        scenario,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        if "listening on " not in line:
            raise RuntimeError(f"rein mock-server did not start: {line!r}")
        yield line.rsplit(" ", 1)[-1].strip()
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)


async def _load(
    tmp: Path,
    sessions: int,
    turns: int,
    steers: int = 200,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """The load row; ``command`` starts the server (default ``rein serve``;
    another build of it, to compare)."""
    from pygls.exceptions import JsonRpcException

    root = tmp / "ws"
    root.mkdir()
    (root / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}]}
    seqs: dict[str, list[int]] = {}
    ends: dict[str, int] = {}
    all_started = asyncio.Event()
    # One scenario for all: every session asks for the next turn, so each
    # runs about ``turns`` tool turns before an answer ends it (a steer that
    # arrives with the answer asks for one more).
    scenario = _script(
        tmp / "load.yaml", [read] * (sessions * turns) + [{"text": "done"}] * (sessions + steers)
    )
    async with _mock_server(scenario) as mock_url:
        client = LanguageClient("rein-bench", "0", converter_factory=plain_dict_converter)

        @client.feature("rein/event")
        def on_event(params: Any) -> None:
            sid = params["sessionId"]
            seqs.setdefault(sid, []).append(params["seq"])
            if params["event"]["type"] == "run_end":
                ends[sid] = ends.get(sid, 0) + 1
            if len(seqs) == sessions:
                all_started.set()

        @client.feature("rein/diagnostics")
        def diagnostics(params: Any) -> dict[str, Any]:
            return {"items": []}

        await client.start_io(*(command or [sys.executable, "-m", "rein", "serve"]))
        await client.initialize_async(
            lsp.InitializeParams(
                capabilities=lsp.ClientCapabilities(),
                root_uri=root.as_uri(),
                initialization_options={
                    "model": {
                        "provider": "openai",
                        "baseUrl": mock_url + "/v1",
                        "model": "mock",
                        "apiKeyEnv": "",
                    },
                    "gates": {"analyzer": {"enabled": False}},
                    "harness": {"maxModelTurnsPerRun": sessions * turns + sessions + 10},
                    "storagePath": str(tmp / "storage"),
                },
            )
        )
        client.initialized(lsp.InitializedParams())
        server = client._server
        assert server is not None
        await client.protocol.send_request_async("rein/sessions", {})  # configured
        idle_rss = _rss_mb(server.pid)
        started = time.perf_counter()
        tasks = [
            asyncio.ensure_future(
                client.protocol.send_request_async("rein/prompt", {"text": f"session {i}"})
            )
            for i in range(sessions)
        ]
        await asyncio.wait_for(all_started.wait(), 60)
        ids = sorted(seqs)
        loaded = await _steer_rtts(client, ids, steers, lambda: not all(t.done() for t in tasks))
        results = await asyncio.gather(*tasks)
        run_s = time.perf_counter() - started
        after_rss = _rss_mb(server.pid)
        try:
            held = await client.protocol.send_request_async("rein/serverState", {})
        except JsonRpcException:  # a build without it
            held = {}
        # The floor: the same steers to the same (now idle) sessions.
        floor = await _steer_rtts(client, ids, max(len(loaded), 20), lambda: True)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    events = sum(len(v) for v in seqs.values())
    gap_free = all(v == list(range(1, len(v) + 1)) for v in seqs.values())
    loaded_p99 = _percentile(loaded, 0.99)
    floor_p99 = _percentile(floor, 0.99)
    return {
        "sessions": sessions,
        "completed": sum(1 for r in results if r["status"] == "completed"),
        "error": next((r.get("error") for r in results if r.get("error")), None),
        "turns_total": sum(int(r["turns"]) for r in results),
        "turns_min": min(int(r["turns"]) for r in results),
        "turns_max": max(int(r["turns"]) for r in results),
        "run_s": round(run_s, 2),
        "events": events,
        "events_per_s": round(events / max(run_s, 1e-9)),
        "seq_gap_free": gap_free and len(seqs) == sessions and len(ends) == sessions,
        "steers": len(loaded),
        "steer_rtt_ms_p50": _percentile(loaded, 0.5),
        "steer_rtt_ms_p99": loaded_p99,
        "idle_steer_rtt_ms_p99": floor_p99,
        "steer_p99_ratio": round(loaded_p99 / floor_p99, 1) if loaded_p99 and floor_p99 else None,
        "rss_idle_mb": round(idle_rss, 1),
        "rss_after_mb": round(after_rss, 1),
        "sessions_in_memory": len(held["sessionsInMemory"]) if held else None,
        "http_clients": held.get("httpClients"),
        "progress_tokens": held.get("progressTokens"),
    }


def bench_load(sessions: int = 10, turns: int = 200, steers: int = 200) -> list[dict[str, Any]]:
    """``rein bench lsp --sessions N --turns T``: one row."""
    with tempfile.TemporaryDirectory(prefix="rein-bench-load-") as tmp:
        return [asyncio.run(_load(Path(tmp), sessions, turns, steers))]
