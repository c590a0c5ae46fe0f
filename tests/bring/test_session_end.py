"""SessionEnd hooks and the hooks' transcript in a real session
(``build_session``) with real hook commands: SessionEnd runs once when the
host ends a session that ran, with its reason and a ``transcript_path``
whose JSONL holds the run's messages (redacted, tools named as the
protocol names them); a SessionEnd hook over the bound is stopped and
reported; a session that never ran ends without hooks; the transcript
file is appended, and written again when the transcript is not an
extension of what was written."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rein.bring import hooks_adapter
from rein.bring.transcript import TranscriptFile
from rein.config import ReinConfig
from rein.harness.events import Event, HookActivity
from rein.harness.messages import ToolResultMessage, UserMessage
from rein.session import SessionSpec
from rein.session.builder import build_session
from rein.session.ending import end_sessions
from rein.session.session import Session
from tests.fakes.hooks import FakeHookTrust
from tests.fakes.models import FunctionModel, assistant, call
from tests.fakes.session import fake_session_ports

SECRET = "sk-ant-" + "a1B2" * 8

#: A SessionEnd hook: its input and the transcript it reads, in ``marker``.
RECORD = """import json, sys
data = json.load(sys.stdin)
with open(data["transcript_path"]) as f:
    lines = [json.loads(line) for line in f]
json.dump({"input": data, "transcript": lines}, open(sys.argv[1], "w"))
"""


def _read(path: str) -> str:
    return Path(path).read_text()


def _session(tmp_path: Path, hooks: dict[str, Any], model: FunctionModel) -> Session:
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    ports = fake_session_ports(root, model)
    ports.workspace.files.update({"src/a.py": "x = 1\n"})
    ports.hooks = FakeHookTrust(answer=True, transcripts=tmp_path / "state")
    ports.home = tmp_path / "home"
    return build_session(ReinConfig(), ports, SessionSpec())


def _end_hook(command: str) -> dict[str, Any]:
    return {"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]}


async def test_session_end_runs_once_with_the_reason_and_a_redacted_transcript(
    tmp_path: Path,
) -> None:
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    marker = tmp_path / "ended.json"
    turns = iter([assistant("", call("read_file", path="src/a.py"))])
    model = FunctionModel(lambda request: next(turns, assistant("read it")))
    session = _session(tmp_path, _end_hook(f"{sys.executable} {script} {marker}"), model)
    await session.end("other")  # never ran: its hooks were not even read
    assert not marker.exists()

    session = _session(tmp_path / "2", _end_hook(f"{sys.executable} {script} {marker}"), model)
    prompt = f"look at src/a.py with {SECRET}"
    assert (await session.run(lambda: session.agent.prompt(prompt))).status == "completed"
    await end_sessions([session], "prompt_input_exit")
    await end_sessions([session], "other")  # once only
    seen = json.loads(marker.read_text())
    data = seen["input"]
    assert data["hook_event_name"] == "SessionEnd"
    assert data["reason"] == "prompt_input_exit"
    assert data["transcript_path"] == str(
        tmp_path / "2" / "state" / "transcripts" / f"{session.id}.jsonl"
    )
    lines = seen["transcript"]
    kinds = [(line["type"], line["message"]["role"]) for line in lines]
    assert kinds == [
        ("user", "user"),
        ("assistant", "assistant"),
        ("user", "user"),
        ("assistant", "assistant"),
    ]
    first = lines[0]
    assert first["message"]["content"] == "look at src/a.py with [redacted]"
    assert (first["origin"], first["session_id"]) == ("prompt", session.id)
    [use] = lines[1]["message"]["content"]
    assert use["type"] == "tool_use" and use["name"] == "Read"
    assert use["input"] == {"file_path": str(tmp_path / "2" / "ws" / "src" / "a.py")}
    [result] = lines[2]["message"]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == use["id"]
    assert "x = 1" in result["content"] and result["is_error"] is False
    assert lines[3]["message"]["content"] == [{"type": "text", "text": "read it"}]
    assert SECRET not in _read(data["transcript_path"])


async def test_a_session_end_hook_over_the_bound_is_stopped_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hooks_adapter, "SESSION_END_BOUND_S", 0.5)
    model = FunctionModel(lambda request: assistant("ok"))
    session = _session(tmp_path, _end_hook("sleep 30"), model)
    seen: list[HookActivity] = []

    def listen(event: Event) -> None:
        if isinstance(event, HookActivity):
            seen.append(event)

    session.subscribe(listen)
    assert (await session.run(lambda: session.agent.prompt("go"))).status == "completed"
    started = time.monotonic()
    await end_sessions([session], "other")
    assert time.monotonic() - started < 4  # the bound, plus the stopped group's grace
    [failed] = seen
    assert (failed.event, failed.outcome) == ("SessionEnd", "failed")
    # Stopped at the bound: what was left of it when the hook started.
    assert re.fullmatch(r"timed out after 0\.[0-9]+ s \(stopped\)", failed.message), failed


def test_the_transcript_file_appends_and_is_written_again_when_replaced(tmp_path: Path) -> None:
    path = tmp_path / "t" / "s.jsonl"
    file = TranscriptFile(path, "s", tmp_path)
    a, b = UserMessage(content="one"), UserMessage(content="two")
    tool = ToolResultMessage(tool_call_id="c1", tool_name="grep", content="hit", is_error=True)

    def contents() -> list[Any]:
        return [json.loads(line)["message"]["content"] for line in path.read_text().splitlines()]

    file.sync([a])
    file.sync([a, b])
    assert contents() == ["one", "two"]
    file.sync([a, b])  # nothing new: nothing written
    assert contents() == ["one", "two"]
    file.sync([b, tool])  # compacted: written again
    assert contents() == [
        "two",
        [{"type": "tool_result", "tool_use_id": "c1", "content": "hit", "is_error": True}],
    ]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = TranscriptFile(path, "s", tmp_path)  # a resumed session: written anew
    again.sync([a])
    assert contents() == ["one"]
