"""``rein run`` tells the person that the model's request is being retried:
a line per retry in the text output (provider, reason, attempt n of max,
the wait), a ``model_retry`` event in the ``--json`` events; the session's
store keeps the run's retries. A real
``rein run`` process, the real OpenAI-compatible provider over HTTP to the
mock server, which answers 429 with a short ``Retry-After`` first."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from rein.providers.mock_server import MockServer
from rein.store import SqliteStore
from tests.forkserver import REIN

SCENARIO = [{"fault": {"status": 429, "retry_after": 0.05}}, {"text": "done after waiting"}]


async def _run(tmp_path: Path, *extra: str) -> tuple[str, str, str]:
    """``rein run``'s stdout and stderr, and the mock server's URL."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    async with MockServer(scenario=SCENARIO) as mock:
        config = tmp_path / "rein.yaml"
        config.write_text(
            "gates: {analyzer: {enabled: false}}\n"
            f"model: {{provider: openai, baseUrl: '{mock.url}/v1', model: m, apiKeyEnv: ''}}\n"
        )
        with anyio.fail_after(120):
            done = await anyio.run_process(
                [*REIN, "run", "task", "-w", str(ws), "--config",
                 str(config), "--storage", str(tmp_path / "store"), "--yes", *extra],
                check=False,
            )  # fmt: skip
        assert [r.outcome for r in mock.requests] == ["fault:status", "completed"]
        url = mock.url
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, stdout + stderr
    return stdout, stderr, url


async def test_the_text_output_has_a_line_for_each_retry(tmp_path: Path) -> None:
    stdout, _, url = await _run(tmp_path)
    [line] = [line for line in stdout.splitlines() if "model retry" in line]
    assert line.startswith(
        f"  ↻ model retry 1 of 4 in 0.05 s: openai ({url}/v1) rate limit (HTTP 429)"
    ), line
    assert "done after waiting" in stdout.split(line, 1)[1]
    # Stored with the session: the run's retries, as the event said them.
    store = SqliteStore.open(tmp_path / "store")
    try:
        [session] = await store.list_sessions()
        [stored] = await store.model_retries(session.id)
    finally:
        store.close()
    assert stored["run_id"].startswith("run_") and stored["type"] == "model_retry"
    assert (stored["attempt"], stored["max_attempts"], stored["wait_s"]) == (1, 4, 0.05)
    assert stored["reason"].startswith(f"openai ({url}/v1) rate limit (HTTP 429)")


async def test_the_json_events_hold_the_retry(tmp_path: Path) -> None:
    stdout, _, url = await _run(tmp_path, "--json")
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    [retry] = [e for e in events if e.get("type") == "model_retry"]
    assert retry["provider"] == f"openai ({url}/v1)"
    assert (retry["attempt"], retry["max_attempts"], retry["wait_s"]) == (1, 4, 0.05)
    assert "HTTP 429" in retry["reason"]
    types = [e.get("type") for e in events]
    assert types.index("model_retry") < types.index("message_start", types.index("turn_start"))


def test_a_subagents_retry_is_printed_under_its_name() -> None:
    import io

    from rein.harness.events import ModelRetry, SubagentActivity
    from rein.render import EventPrinter

    child = ModelRetry(
        provider="openai (http://x/v1)",
        reason="openai (http://x/v1) server error (HTTP 503)",
        attempt=2,
        max_attempts=4,
        wait_s=1.5,
    )
    out = io.StringIO()
    EventPrinter(out)(
        SubagentActivity(
            child_id="c1", name="task", tool_call_id="t1", event=child.model_dump(mode="json")
        )
    )
    assert out.getvalue() == (
        "  ↳ [task] model retry 2 of 4 in 1.5 s: openai (http://x/v1) server error (HTTP 503)\n"
    )
