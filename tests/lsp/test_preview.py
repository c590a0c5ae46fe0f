"""``rein/preview`` and the preview's life in a real `rein serve`: started by
a run's gates (events on that session's stream) or by request (events with
``sessionId: null``), and gone once the server is."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from rein.process.groups import group_alive
from tests.fakes.editor import Editor
from tests.lsp.conftest import _settings, running_server, write_script
from tests.preview_programs import DEVSERVER

pytestmark = pytest.mark.e2e

PREVIEWAPP = Path(__file__).resolve().parents[1] / "workspaces" / "previewapp"


@pytest.fixture
def previewapp(tmp_path: Path) -> Path:
    root = tmp_path / "previewapp"
    shutil.copytree(PREVIEWAPP, root)
    return root


def configure(editor: Editor, tmp_path: Path, **preview: Any) -> None:
    settings: dict[str, Any] = _settings(tmp_path)
    settings["gates"] = {
        # No analyzer in this editor: do not wait for its diagnostics.
        "analyzer": {"enabled": False, "maxWaitMs": 200},
        "preview": {
            "command": f"{shlex.quote(sys.executable)} app.py",
            "readiness": {"line": "^ready$"},
            "observationWindowMs": 300,
            **preview,
        },
    }
    # Also what a (late) pull of the configuration answers.
    editor.client.set_configuration(settings, section="rein")
    editor.client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"rein": settings})
    )


async def request(editor: Editor, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(editor.client.protocol.send_request_async(method, params), 30)


async def test_rein_preview_start_status_stop_and_nothing_left_after_shutdown(
    previewapp: Path, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "settings.py",
                            "old_string": "THRESHOLD = 3",
                            "new_string": "THRESHOLD = 4",
                        },
                    }
                ]
            },
            {"text": "raised it to 4"},
        ],
    )
    async with running_server(previewapp, tmp_path) as editor:
        configure(editor, tmp_path)
        status = await request(editor, "rein/preview", {"action": "status"})
        assert status["state"] == "stopped" and "pid" not in status

        # A run that changed code starts the preview; its events are the session's.
        result = await request(editor, "rein/prompt", {"text": "raise the threshold"})
        assert result["status"] == "completed", result.get("error")
        started = await editor.wait_event(lambda e: e["event"]["type"] == "preview_started")
        assert started["sessionId"] == result["sessionId"]
        status = await request(editor, "rein/preview", {"action": "status"})
        assert status["state"] == "running" and status["pid"] == started["event"]["pid"]
        assert "threshold is 4" in status["lines"]
        first = status["pid"]
        assert group_alive(first)

        stopped = await editor.client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="rein.preview.stop")
        )
        assert stopped["state"] == "stopped" and "pid" not in stopped
        assert not group_alive(first)

        # Started by request: its events belong to no session.
        again = await request(editor, "rein/preview", {"action": "start"})
        assert again["state"] == "running" and again["pid"] != first
        event = await editor.wait_event(
            lambda e: e["event"]["type"] == "preview_started" and e["event"]["pid"] == again["pid"]
        )
        assert event["sessionId"] is None
        second = again["pid"]

        with pytest.raises(JsonRpcInvalidParams, match="rein/preview: invalid params: action"):
            await request(editor, "rein/preview", {"action": "jump"})
    assert not group_alive(second), "the preview outlived the server"


async def test_no_preview_outlives_a_terminated_server(previewapp: Path, tmp_path: Path) -> None:
    async with running_server(previewapp, tmp_path) as editor:
        configure(editor, tmp_path)
        started = await request(editor, "rein/preview", {"action": "start"})
        assert started["state"] == "running", started
        pid = started["pid"]
        server = editor.client._server
        assert server is not None
        os.kill(server.pid, signal.SIGTERM)
        await asyncio.wait_for(server.wait(), 10)
    assert not group_alive(pid), "the preview outlived a terminated server"


async def test_no_preview_outlives_a_killed_server(previewapp: Path, tmp_path: Path) -> None:
    async with running_server(previewapp, tmp_path) as editor:
        configure(editor, tmp_path)
        started = await request(editor, "rein/preview", {"action": "start"})
        assert started["state"] == "running", started
        pid = started["pid"]
        server = editor.client._server
        assert server is not None
        os.kill(server.pid, signal.SIGKILL)  # no handler, no atexit: only the kernel can help
        await asyncio.wait_for(server.wait(), 10)
        with anyio.fail_after(5):
            while group_alive(pid):  # noqa: ASYNC110  (the kernel's signal is asynchronous)
                await anyio.sleep(0.02)
    assert not group_alive(pid), "the preview outlived a killed server"


def edit(old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "settings.py", "old_string": old, "new_string": new},
            }
        ],
    }


BAD_VALUE = "ValueError: threshold must not be negative, got -1"


async def test_a_program_that_reloads_itself_is_observed_from_the_edit(
    previewapp: Path, tmp_path: Path
) -> None:
    """reload "self" in the editor: the server hears of each edit, so the
    program's traceback after the edit blocks (the script checks the repair
    prompt has it) and the fix's "ready" after the edit counts."""
    (previewapp / "devserver.py").write_text(DEVSERVER)
    write_script(
        tmp_path,
        [
            edit("THRESHOLD = 3", "THRESHOLD = -1"),
            {"text": "done"},
            edit("THRESHOLD = -1", "THRESHOLD = 5", expect={"last_message_contains": BAD_VALUE}),
            {"text": "the threshold is 5 now"},
        ],
    )
    async with running_server(previewapp, tmp_path) as editor:
        configure(
            editor,
            tmp_path,
            command=f"{shlex.quote(sys.executable)} devserver.py",
            reload="self",
            readiness={"line": "^ready$", "timeoutMs": 3000},
        )
        started = await request(editor, "rein/preview", {"action": "start"})
        assert started["state"] == "running", started
        result = await request(editor, "rein/prompt", {"text": "make the threshold negative"})
        assert result["status"] == "completed", result.get("error")
        gates = [
            (e["event"]["gate"], e["event"]["passed"])
            for e in editor.events
            if e["event"]["type"] == "gate_result" and e["event"]["gate"] != "analyzer"
        ]
        assert gates == [
            ("preview_load", True),
            ("runtime_observation", False),
            ("preview_load", True),
            ("runtime_observation", True),
            ("preview_start", True),
        ]
        status = await request(editor, "rein/preview", {"action": "status"})
        assert status["pid"] == started["pid"] and "threshold is 5" in status["lines"]


async def test_a_readme_change_does_not_start_the_preview(previewapp: Path, tmp_path: Path) -> None:
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "README.md", "content": "# previewapp\n"},
                    }
                ]
            },
            {"text": "documented"},
        ],
    )
    async with running_server(previewapp, tmp_path) as editor:
        configure(editor, tmp_path)
        result = await request(editor, "rein/prompt", {"text": "write a readme"})
        assert result["status"] == "completed", result.get("error")
        start = [
            e["event"]
            for e in editor.events
            if e["event"]["type"] == "gate_result" and e["event"]["gate"] == "preview_start"
        ]
        assert [(e["passed"], e["detail"]) for e in start] == [
            (True, "the run changed no code; the preview is not started")
        ]
        status = await request(editor, "rein/preview", {"action": "status"})
        assert status["state"] == "stopped" and "pid" not in status


CRASHES_AFTER_2_S = """\
import time

print("serving on :8000", flush=True)
time.sleep(2)
raise RuntimeError("lost the database")
"""


async def test_a_start_from_the_editor_is_watched_and_reports_a_crash_after_2_s(
    previewapp: Path, tmp_path: Path
) -> None:
    """Default readiness and observation: a program that crashes 2 s after
    it starts is reported by the start as not up, with its error line and
    exit code; fixed, a restart reports it up and by which rule."""
    (previewapp / "crashes.py").write_text(CRASHES_AFTER_2_S)
    async with running_server(previewapp, tmp_path) as editor:
        configure(
            editor,
            tmp_path,
            command=f"{shlex.quote(sys.executable)} crashes.py",
            readiness={},
            observationWindowMs=1000,
        )
        started = await request(editor, "rein/preview", {"action": "start"})
        assert started["up"] is False, started
        assert started["readyBy"] in ("quiet", "error output")  # the crash races the quiet rule
        assert "RuntimeError: lost the database" in started["runtimeErrors"]
        assert started["exitCode"] == 1 and started["state"] == "exited" and "pid" not in started
        assert "RuntimeError: lost the database" in started["error"]
        assert "the preview exited with code 1" in started["error"]

        (previewapp / "crashes.py").write_text('import time\nprint("serving")\ntime.sleep(60)\n')
        restarted = await request(editor, "rein/preview", {"action": "restart"})
        assert restarted["up"] is True and restarted["readyBy"] == "quiet", restarted
        assert restarted["runtimeErrors"] == [] and "error" not in restarted
        assert restarted["state"] == "running" and "exitCode" not in restarted

        status = await request(editor, "rein/preview", {"action": "status"})
        assert "up" not in status and "error" not in status


async def test_a_start_cancelled_before_the_program_is_up_stops_it(
    previewapp: Path, tmp_path: Path
) -> None:
    (previewapp / "slow.py").write_text(
        'import time\nprint("booting", flush=True)\ntime.sleep(60)\nprint("ready")\n'
    )
    async with running_server(previewapp, tmp_path) as editor:
        configure(
            editor,
            tmp_path,
            command=f"{shlex.quote(sys.executable)} slow.py",
            readiness={"line": "^ready$", "timeoutMs": 60_000},
        )
        pending = editor.client.protocol.send_request(
            "rein/preview", {"action": "start"}, msg_id="start-1"
        )
        await editor.wait_event(
            lambda e: e["event"]["type"] == "preview_output" and "booting" in e["event"]["text"]
        )
        status = await request(editor, "rein/preview", {"action": "status"})
        assert status["state"] == "starting", status
        pid = status["pid"]
        editor.client.protocol.notify("$/cancelRequest", lsp.CancelParams(id="start-1"))
        stopped = await editor.wait_event(lambda e: e["event"]["type"] == "preview_stopped")
        assert stopped["event"]["reason"] == "the start was cancelled"
        assert not group_alive(pid)
        status = await request(editor, "rein/preview", {"action": "status"})
        assert status["state"] == "stopped" and "pid" not in status
        pending.cancel()
