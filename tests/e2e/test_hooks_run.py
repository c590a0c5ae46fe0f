"""Claude Code hooks through the real ``rein run``: a repository's
``.claude/settings.json`` with bash and Python hook scripts blocks ``rm -rf``
(exit 2, the model reads stderr), adds context to the prompt, keeps the run
going once on Stop, denies a write outside ``src/`` (JSON
``permissionDecision: deny``) and, when the run is over, its SessionEnd hook
reads the person's prompt from ``transcript_path``, with ``--allow-hooks``;
without it and with no terminal to ask on, none of the workspace's hooks runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.bring.hook_workspace import (
    CONTEXT,
    DENY_REASON,
    STOP_REASON,
    TURNS,
    ended,
    ended_marker,
    hook_repo,
)
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e


def _rein_run(
    tmp_path: Path, ws: Path, turns: list[dict[str, Any]], *extra: str
) -> list[dict[str, Any]]:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"turns": turns}))
    config = tmp_path / "rein.json"
    config.write_text(json.dumps({"rein": {"gates": {"analyzer": {"enabled": False}}}}))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    args = [
        "run", "tidy up", "-w", str(ws), "--provider", "replay", "--script", str(script),
        "--config", str(config), "--storage", str(tmp_path / "store"), "--yes", "--json", *extra,
    ]  # fmt: skip
    out = subprocess.run(
        [*REIN, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(home)},
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_a_claude_code_repository_s_hooks_work_unchanged_in_rein_run(tmp_path: Path) -> None:
    ws = hook_repo(tmp_path / "ws", sys.executable)
    lines = _rein_run(tmp_path, ws, TURNS, "--allow-hooks")
    assert lines[-1]["result"]["status"] == "completed", lines[-1]
    hooks = [(e["event"], e["outcome"], e.get("tool")) for e in lines[:-1] if e["type"] == "hook"]
    assert hooks == [
        ("UserPromptSubmit", "context", None),
        ("PreToolUse", "blocked", "Bash"),
        ("PreToolUse", "blocked", "Write"),
        ("Stop", "continued", None),
    ]
    messages = {e["event"]: e["message"] for e in lines[:-1] if e["type"] == "hook"}
    assert CONTEXT in messages["UserPromptSubmit"]
    assert messages["PreToolUse"] == DENY_REASON
    assert messages["Stop"] == STOP_REASON
    # The scripted model's turns check that it read each reason (RM_REASON,
    # DENY_REASON, STOP_REASON) and the context: else the run would fail.
    ends = [e for e in lines[:-1] if e["type"] == "tool_call_end"]
    assert [e["is_error"] for e in ends] == [True, True]
    assert (ws / "build" / "keep.txt").exists()  # rm -rf never ran
    assert not (ws / "README.md").exists()  # the write outside src/ never happened
    # The run is over: SessionEnd ("other") read the prompt from the transcript.
    assert ended(ws) == [{"event": "SessionEnd", "reason": "other", "prompts": ["tidy up"]}]
    transcripts = list((tmp_path / "store" / "transcripts").iterdir())
    assert [t.name for t in transcripts] == [f"{lines[-1]['result']['sessionId']}.jsonl"]
    ended_marker(ws).unlink()

    # Without --allow-hooks and no terminal: nothing of the workspace runs.
    (tmp_path / "store").rename(tmp_path / "store-1")
    plain = [{"expect": {"messages_exclude": [CONTEXT]}, "text": "done"}]
    lines = _rein_run(tmp_path, ws, plain)
    assert lines[-1]["result"]["status"] == "completed", lines[-1]
    [skipped] = [e for e in lines[:-1] if e["type"] == "hook"]
    assert skipped["outcome"] == "skipped"
    assert "--allow-hooks" in skipped["message"]
    assert not ended_marker(ws).exists()
