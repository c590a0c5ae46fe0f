"""``rein acp`` says what the analyzer gate covers: the analyzers line (the
servers that run for which languages, the source files nothing analyses)
is the first update of a session's first prompt, a thought, said once
(issue 35 item 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import helpers

from tests.acp_core.conftest import config_for

ANSWER = [{"text": "Hello."}]


async def test_the_first_prompt_starts_with_the_analyzers_line(
    connect: Callable[..., Any], workspace: Path, mock_server: Any
) -> None:
    (workspace / "lib.rs").write_text("fn main() {}\n")
    config = config_for(mock_server, gates={"analyzer": {"enabled": True}})
    async with connect(config=config) as c:
        c.server.load(ANSWER + ANSWER)
        session_id = await c.new()
        for text in ("hi", "again"):
            await c.conn.prompt(session_id=session_id, prompt=[helpers.text_block(text)])
        kinds = [u.session_update for _, u in c.client.updates]
        thoughts = [u.content.text for u in c.client.of("agent_thought_chunk")]
    assert kinds[0] == "agent_thought_chunk"
    # The conftest starts no analyzer: none runs, and both files are named.
    assert thoughts == [
        "analyzers: none (no analyzer is configured; the analyzer gate is unverified); "
        "not analysed: .py (1 file), .rs (1 file)\n"
    ]
