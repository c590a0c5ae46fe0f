"""``rein bench providers``: SSE chunks parsed per second, end to end.

The mock server runs in its own process (so its encoding does not share a
core with the parser) and streams one turn of N small text chunks; the
measured span is the provider's whole ``stream()``: request, SSE decoding,
JSON parsing, delta assembly, the final message. Goal: >= 50,000 chunks/s.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx

from rein.harness.messages import UserMessage
from rein.harness.ports import ModelRequest, TextDelta, TurnDone
from rein.providers._http import HttpModel
from rein.providers.anthropic import AnthropicModel
from rein.providers.config import ModelConfig
from rein.providers.openai import OpenAIModel

__all__ = ["GOAL_CHUNKS_PER_S", "bench_providers"]

GOAL_CHUNKS_PER_S = 50_000
_WORD = "tok, "


async def _measure(model: HttpModel, chunks: int) -> tuple[float, int]:
    request = ModelRequest("bench", [UserMessage(content="go")], [])
    deltas = 0
    text_length = 0
    started = time.perf_counter()
    async for delta in model.stream(request):
        if isinstance(delta, TextDelta):
            deltas += 1
        elif isinstance(delta, TurnDone):
            text_length = len(delta.message.text)
    elapsed = time.perf_counter() - started
    if deltas != chunks or text_length != chunks * len(_WORD):
        raise RuntimeError(f"benchmark stream incomplete: {deltas} of {chunks} chunks")
    return elapsed, deltas


async def _bench(url: str, chunks: int, repeats: int) -> list[dict[str, Any]]:
    turn = {"text": _WORD * chunks, "chunk_size": len(_WORD)}
    rows: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=url) as control:
        for provider, cls, base in (
            ("openai", OpenAIModel, url + "/v1"),
            ("anthropic", AnthropicModel, url),
        ):
            reply = await control.post("/mock/scenario", json={"turns": [turn] * (repeats + 1)})
            reply.raise_for_status()
            config = ModelConfig.model_validate(
                {"provider": provider, "baseUrl": base, "model": "bench"}
            )
            model = cls(config)
            try:
                await _measure(model, chunks)  # warm-up
                times = [(await _measure(model, chunks))[0] for _ in range(repeats)]
            finally:
                await model.aclose()
            best, median = min(times), statistics.median(times)
            rows.append(
                {
                    "provider": provider,
                    "chunks": chunks,
                    "best_s": round(best, 4),
                    "median_s": round(median, 4),
                    "chunks_per_s": round(chunks / median),
                    "goal": GOAL_CHUNKS_PER_S,
                    "ok": chunks / median >= GOAL_CHUNKS_PER_S,
                }
            )
    return rows


def bench_providers(
    json_out: bool = False, *, chunks: int = 20_000, repeats: int = 5
) -> list[dict[str, Any]]:
    """Measure both providers; print the rows (JSON lines when ``json_out``)
    and return them."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rein.providers.mock_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("rein mock server listening on "):
            raise RuntimeError(f"the mock server did not start: {line!r}")
        url = line.rsplit(" ", 1)[1].strip()
        rows = anyio.run(_bench, url, chunks, repeats)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if json_out:
        for row in rows:
            print(json.dumps(row))
    else:
        print("providers: SSE text chunks parsed per second, end to end (mock server)")
        for row in rows:
            verdict = "ok" if row["ok"] else f"below the goal of {row['goal']:,}"
            print(
                f"  {row['provider']:<10} {row['chunks_per_s']:>9,} chunks/s  "
                f"({row['chunks']:,} chunks in {row['median_s']:.3f} s median; {verdict})"
            )
    return rows


if __name__ == "__main__":
    bench_providers("--json" in sys.argv)
