"""``rein run`` with a command that prints 20 MB without a newline (issue
30, item 6): the output streams in bounded events, the client gets at most
the per-call bound of it, the model and the store get head and tail, and
the run completes."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
import yaml

from rein.harness.calls.tool_updates import MAX_STREAMED_CHARS, MAX_UPDATE_CHARS
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

SIZE = 20_000_000


async def test_twenty_megabytes_without_a_newline_reach_the_client_bounded(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.yaml"
    command = f"head -c {SIZE} /dev/zero | tr '\\0' x; echo; echo after"
    script.write_text(
        yaml.safe_dump(
            {
                "turns": [
                    {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                    {"text": "done"},
                ]
            }
        )
    )
    argv = [*REIN, "run", "print it", "-w", str(workspace)]
    argv += ["--provider", "replay", "--script", str(script), "--yes", "--json"]
    argv += ["--storage", str(tmp_path / "store")]
    with anyio.fail_after(120):
        done = await anyio.run_process(argv, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    events = [line.get("event", line) for line in lines]
    updates = [e for e in events if e.get("type") == "tool_call_update"]
    output = [u["text"] for u in updates if u["kind"] == "output"]
    assert max(map(len, output)) <= MAX_UPDATE_CHARS
    assert sum(map(len, output)) == MAX_STREAMED_CHARS
    assert len(output) <= MAX_STREAMED_CHARS // 4096 + 2
    assert any(u["kind"] == "status" and "not streamed" in u["text"] for u in updates)
    [end] = [e for e in events if e.get("type") == "tool_call_end"]
    assert end["details"]["output_chars"] == SIZE + len("\nafter\n")
    assert len(end["content"]) <= 16_000 and end["content"].endswith("after\n[exit code 0]")
    assert lines[-1]["result"]["status"] == "completed"
    assert len(done.stdout) < 3 * MAX_STREAMED_CHARS
