"""The events of a real `rein serve` run with a subagent, its model the
mock server over HTTP, as the panel gets them: the run is checked here (usage per turn, the run total, the child's
tokens in the parent's turn) and written, normalised, to
vscode-client/test/fixtures/real-subagent-run.jsonl, which the extension's
reducer test (test/unit/usageCounter.test.ts) feeds to the panel.

The committed fixture must be what the server produces: this test fails when
they differ. ``REIN_WRITE_FIXTURES=1 pytest tests/lsp/test_event_fixture.py``
rewrites it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rein.providers.mock_server import MockServer
from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "vscode-client"
    / "test"
    / "fixtures"
    / "real-subagent-run.jsonl"
)

#: Each turn's usage is scripted, so the totals are known.
SCRIPT: list[dict[str, Any]] = [
    {
        "tool_calls": [{"name": "read_file", "arguments": {"path": "app.py"}}],
        "usage": {"input_tokens": 1200, "output_tokens": 40, "cache_read_tokens": 1000},
    },
    {
        "tool_calls": [
            {
                "name": "task",
                "arguments": {"description": "list the files", "prompt": "List the files."},
            }
        ],
        "usage": {"input_tokens": 1500, "output_tokens": 60, "cache_read_tokens": 1100},
    },
    # The subagent's two turns (the parent and the child share the script).
    {
        "tool_calls": [{"name": "list_dir", "arguments": {}}],
        "usage": {"input_tokens": 700, "output_tokens": 20},
    },
    {"text": "app.py and notes.txt", "usage": {"input_tokens": 800, "output_tokens": 15}},
    {
        "text": "The project has app.py and notes.txt.",
        "usage": {"input_tokens": 1900, "output_tokens": 30, "cache_read_tokens": 1400},
    },
]

USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in USAGE_KEYS}


def total(turns: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for turn in turns:
        out = add(out, turn["usage"])
    return out


class _Names:
    """Stable stand-ins for the ids a run draws at random."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, value: str, prefix: str) -> str:
        if value not in self.seen:
            self.seen[value] = (
                f"{prefix}_{sum(1 for v in self.seen.values() if v.startswith(prefix)) + 1}"
            )
        return self.seen[value]


def normalised(envelopes: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """The envelopes without what differs between two runs: ids, durations,
    the workspace's path."""
    names = _Names()

    def scrub(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: scrub(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if key == "duration_ms":
            return 0
        if key in ("sessionId", "session_id"):
            return names(value, "ses")
        if key in ("runId", "run_id"):
            return names(value, "run")
        if key == "child_id":
            return names(value, "task")
        if isinstance(value, str):
            return value.replace(root.as_uri(), "file:///ws").replace(str(root), "/ws")
        return value

    return [scrub(envelope) for envelope in envelopes]


def fixture_text(envelopes: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, sort_keys=True) + "\n" for e in envelopes)


async def record_run(root: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """The run over real HTTP: the server's OpenAI provider against the mock
    server playing SCRIPT (the usage comes back parsed from the stream)."""
    editor: Editor
    async with (
        MockServer(SCRIPT) as mock,
        running_server(
            root,
            tmp_path,
            model={
                "provider": "openai",
                "baseUrl": mock.url + "/v1",
                "model": "mock-model",
                "apiKeyEnv": "",
            },
        ) as editor,
    ):
        result = await editor.client.protocol.send_request_async(
            "rein/prompt", {"text": "what is in the project?"}
        )
        assert result["status"] == "completed", result.get("error")
        await editor.wait_event(lambda e: e["event"]["type"] == "agent_end")
        session = await editor.client.protocol.send_request_async(
            "rein/session", {"sessionId": result["sessionId"]}
        )
        # What a reloaded panel shows: the session's total, the subagent's
        # tokens included (the transcript alone cannot give them).
        expected = total(SCRIPT)
        camel = {
            "inputTokens": expected["input_tokens"],
            "outputTokens": expected["output_tokens"],
            "cacheReadTokens": expected["cache_read_tokens"],
            "cacheWriteTokens": expected["cache_write_tokens"],
        }
        assert result["usage"] == camel
        assert session["usage"] == camel
        return [e for e in editor.events if e["sessionId"] == result["sessionId"]]


async def test_a_real_run_with_a_subagent_reports_each_turns_usage_once(
    workspace: Path, tmp_path: Path
) -> None:
    envelopes = await record_run(workspace, tmp_path)
    events = [e["event"] for e in envelopes]
    assert [e["seq"] for e in envelopes] == list(range(1, len(envelopes) + 1))

    turn_ends = [e for e in events if e["type"] == "turn_end"]
    parent, child = SCRIPT[:2] + SCRIPT[4:], SCRIPT[2:4]
    # The subagent's tokens count in the parent turn that called it.
    expected = [
        total(parent[:1]),
        add(total(parent[1:2]), total(child)),
        total(parent[2:]),
    ]
    assert [e["usage"] for e in turn_ends] == expected
    running: dict[str, int] = {}
    for turn in turn_ends:
        running = add(running, turn["usage"])
        assert turn["run_usage"] == running
    (run_end,) = [e for e in events if e["type"] == "run_end"]
    assert run_end["usage"] == running == add(total(parent), total(child))

    inner = [e["event"] for e in events if e["type"] == "subagent_activity"]
    child_turns = [e["usage"] for e in inner if e["type"] == "turn_end"]
    assert child_turns == [total(child[:1]), total(child[1:])]
    assert [e["usage"] for e in inner if e["type"] == "run_end"] == [total(child)]

    text = fixture_text(normalised(envelopes, workspace))
    if os.environ.get("REIN_WRITE_FIXTURES") == "1":
        FIXTURE.write_text(text, encoding="utf-8")
    assert FIXTURE.exists(), f"{FIXTURE} is missing: run with REIN_WRITE_FIXTURES=1"
    assert FIXTURE.read_text(encoding="utf-8") == text, (
        f"{FIXTURE.name} is not what the server produces: rerun this test with "
        "REIN_WRITE_FIXTURES=1 and commit the fixture"
    )
