"""Claude Code hooks through the real ``rein serve``: the workspace's hooks
run after the person allowed them in the editor (``rein/confirm``, tool
"hooks"); then its PreToolUse hook blocks ``rm -rf`` (the model reads the
reason), its prompt hook adds context, its Stop hook keeps the run going
once and a write outside ``src/`` is denied; each is a ``hook`` event. Its
SessionEnd hook reads the person's prompt from ``transcript_path`` when the
editor closes the session (``rein/closeSession``, "clear") and when it shuts
the server down (``prompt_input_exit``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.bring.hook_workspace import TURNS, ended, hook_repo
from tests.lsp.conftest import running_server, write_script

pytestmark = pytest.mark.e2e


async def test_the_workspace_s_hooks_run_once_allowed_in_the_editor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no hooks of the machine's person
    root = hook_repo(tmp_path / "ws", sys.executable)
    # A second session: the Stop hook keeps it going once.
    write_script(tmp_path, [*TURNS, {"text": "hello"}, {"text": "bye"}])
    settings = {"gates": {"analyzer": {"enabled": False}}, "approval": {"command": "allow"}}
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = True
        result = await editor.client.protocol.send_request_async("rein/prompt", {"text": "tidy up"})
        assert result["status"] == "completed", result
        [question] = [c for c in editor.confirms if c.get("tool") == "hooks"]
        assert "no_rm.sh" in question["detail"] and ".claude/settings.json" in question["detail"]
        hooks = [e["event"] for e in editor.events if e["event"]["type"] == "hook"]
        send = editor.client.protocol.send_request_async
        closing = {"sessionId": result["sessionId"], "reason": "clear"}
        assert await send("rein/closeSession", closing) == {"closed": True}
        again = await send("rein/closeSession", closing)  # closed: it is only in the store
        assert again["closed"] is False and "not open" in again["reason"]
        second = await send("rein/prompt", {"text": "say hello"})
        assert second["status"] == "completed", second
    assert [(h["event"], h["outcome"], h.get("tool")) for h in hooks] == [
        ("UserPromptSubmit", "context", None),
        ("PreToolUse", "blocked", "Bash"),
        ("PreToolUse", "blocked", "Write"),
        ("Stop", "continued", None),
    ]
    assert (root / "build" / "keep.txt").exists()
    assert not (root / "README.md").exists()
    # Closed by the editor ("clear"), then the second at the server's shutdown.
    assert ended(root) == [
        {"event": "SessionEnd", "reason": "clear", "prompts": ["tidy up"]},
        {"event": "SessionEnd", "reason": "prompt_input_exit", "prompts": ["say hello"]},
    ]
