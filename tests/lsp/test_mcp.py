"""MCP tool servers through the real `rein serve` over stdio: the replay
model (a script that follows its turns whatever the prompt says, with
``expect`` checking what it was offered) calls real stdio MCP servers (the
tests' toolbox, and mcp-server-time from PyPI)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.fakes.editor import Editor
from tests.lsp.conftest import running_server, write_script
from tests.mcp.conftest import TOOLBOX

pytestmark = pytest.mark.e2e


#: These tests need no analyzer: without it the gate would wait its bound
#: for diagnostics nobody sends.
NO_ANALYZER_GATE: dict[str, Any] = {"gates": {"analyzer": {"enabled": False}}}


def _servers(**box: Any) -> dict[str, Any]:
    return {
        "servers": {
            "box": {"command": sys.executable, "args": [str(TOOLBOX)], **box},
            "time": {
                "command": sys.executable,
                "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
            },
        }
    }


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def _prompt(editor: Editor, text: str = "use the tools") -> dict[str, Any]:
    result: dict[str, Any] = await editor.client.protocol.send_request_async(
        "rein/prompt", {"text": text}
    )
    return result


async def _tool_results(editor: Editor, session_id: str) -> list[dict[str, Any]]:
    session = await editor.client.protocol.send_request_async(
        "rein/session", {"sessionId": session_id}
    )
    return [m for m in session["messages"] if m["role"] == "tool"]


async def test_mcp_tools_are_offered_named_called_and_in_the_transcript(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tools_include": ["mcp__box__echo", "mcp__time__get_current_time"],
                    "system_contains": "`mcp__time__get_current_time` (MCP server time)",
                },
                "tool_calls": [
                    {"name": "mcp__box__echo", "arguments": {"text": "hi"}},
                    {"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}},
                ],
            },
            {"text": "done"},
        ],
    )
    settings = {"mcp": _servers(), "approval": {"mcp": "allow"}, **NO_ANALYZER_GATE}
    async with running_server(root, tmp_path, settings=settings) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        results = await _tool_results(editor, result["sessionId"])
        assert [r["content"] for r in results][0] == "echo: hi"
        assert '"timezone": "UTC"' in results[1]["content"]
        assert not any(r.get("is_error") for r in results)
        starts = {
            e["event"]["name"]: e["event"]
            for e in editor.events
            if e["event"]["type"] == "tool_call_start"
        }
        assert starts["mcp__box__echo"]["details"] == {"mcpServer": "box", "mcpTool": "echo"}
        states = [
            (e["event"]["server"], e["event"]["state"])
            for e in editor.events
            if e["event"]["type"] == "mcp_server_state"
        ]
        assert ("box", "running") in states and ("time", "running") in states
        listing = await editor.client.protocol.send_request_async("rein/mcpServers", {})
        by_name = {s["name"]: s for s in listing["servers"]}
        assert by_name["box"]["state"] == "running"
        assert "echo" in by_name["box"]["tools"]
        assert by_name["time"]["source"] == "settings"


async def test_a_crash_a_hang_and_an_error_are_results_the_model_reads(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(
        tmp_path,
        [
            _call("mcp__box__fail", reason="no"),
            {
                "expect": {"last_message_contains": "failed on purpose: no"},
                **_call("mcp__box__hang"),
            },
            {"expect": {"last_message_contains": "timeout of 1 s"}, **_call("mcp__box__crash")},
            {"expect": {"last_message_contains": "stopped while running crash"}, "text": "done"},
        ],
    )
    settings = {"mcp": _servers(timeout=1), "approval": {"mcp": "allow"}, **NO_ANALYZER_GATE}
    async with running_server(root, tmp_path, settings=settings) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        results = await _tool_results(editor, result["sessionId"])
        assert [r.get("is_error") for r in results] == [True, True, True]
        assert "timeout of 1 s" in results[1]["content"]
        # The crash was reported, and the server restarted.
        await editor.wait_event(
            lambda e: (
                e["event"]["type"] == "mcp_server_state"
                and e["event"]["server"] == "box"
                and e["event"]["state"] == "failed"
            )
        )


async def test_an_allow_rule_skips_the_question_another_tool_is_asked_about_and_denied(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(
        tmp_path,
        [
            _call("mcp__box__echo", text="x"),
            _call("mcp__box__fail", reason="secret plan"),
            {"expect": {"last_message_contains": "declined"}, "text": "ok"},
        ],
    )
    settings = {"mcp": _servers(), "approval": {"mcpAllow": ["box/echo"]}, **NO_ANALYZER_GATE}
    async with running_server(root, tmp_path, settings=settings) as editor:
        editor.confirm_answer = False
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        # box/echo is allowed by the rule: only fail is asked about.
        assert len(editor.confirms) == 1
        asked = str(editor.confirms[0])
        assert "box" in asked and "fail" in asked and "secret plan" in asked
        assert "echo" not in asked
        results = await _tool_results(editor, result["sessionId"])
        assert results[0]["content"] == "echo: x"
        assert results[1]["is_error"]


async def test_list_changed_is_offered_at_the_next_turn(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(
        tmp_path,
        [
            {"expect": {"tools_exclude": ["mcp__box__late_tool"]}, **_call("mcp__box__grow")},
            {"expect": {"tools_include": ["mcp__box__late_tool"]}, **_call("mcp__box__late_tool")},
            {"expect": {"last_message_contains": "late"}, "text": "done"},
        ],
    )
    settings = {"mcp": _servers(), "approval": {"mcp": "allow"}, **NO_ANALYZER_GATE}
    async with running_server(root, tmp_path, settings=settings) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result


async def test_abort_cancels_a_hanging_call_and_the_run_ends_aborted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(tmp_path, [_call("mcp__box__hang"), {"text": "never"}])
    settings = {"mcp": _servers(timeout=600), "approval": {"mcp": "allow"}, **NO_ANALYZER_GATE}
    async with running_server(root, tmp_path, settings=settings) as editor:
        import asyncio

        prompt = asyncio.ensure_future(_prompt(editor))
        start = await editor.wait_event(
            lambda e: (
                e["event"]["type"] == "tool_call_start" and e["event"]["name"] == "mcp__box__hang"
            )
        )
        aborted = await editor.client.protocol.send_request_async(
            "rein/abort", {"sessionId": start["sessionId"]}
        )
        assert aborted["aborted"]
        result = await asyncio.wait_for(prompt, 10)
        assert result["status"] == "aborted", result


async def test_abort_while_a_server_starts_ends_the_prompt_and_the_next_run_starts_it_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(tmp_path, [{"text": "never"}, {"text": "second"}])
    # A server that never answers initialize: its start waits for the 30 s bound.
    silent = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    settings = {"mcp": {"servers": {"silent": silent}}, **NO_ANALYZER_GATE}
    async with running_server(root, tmp_path, settings=settings) as editor:
        import asyncio

        prompt = asyncio.ensure_future(_prompt(editor))
        starting = await editor.wait_event(
            lambda e: e["event"]["type"] == "mcp_server_state" and e["event"]["state"] == "starting"
        )
        aborted = await editor.client.protocol.send_request_async(
            "rein/abort", {"sessionId": starting["sessionId"]}
        )
        assert aborted["aborted"]
        result = await asyncio.wait_for(prompt, 10)
        assert result["status"] == "aborted", result
        assert "before the run started" in result["error"]
        stopped = await editor.wait_event(
            lambda e: e["event"]["type"] == "mcp_server_state" and e["event"]["state"] == "stopped"
        )
        assert "cancelled" in stopped["event"]["error"]
        # The next prompt of the session tries the server again.
        mark = len(editor.events)
        second = asyncio.ensure_future(
            editor.client.protocol.send_request_async(
                "rein/prompt", {"text": "again", "sessionId": starting["sessionId"]}
            )
        )
        await editor.wait_event(
            lambda e: (
                e["event"]["type"] == "mcp_server_state" and e["event"]["state"] == "starting"
            ),
            after=mark,
        )
        await editor.client.protocol.send_request_async(
            "rein/abort", {"sessionId": starting["sessionId"]}
        )
        assert (await asyncio.wait_for(second, 10))["status"] == "aborted"


def _shadow_mcp(tmp_path: Path) -> tuple[Path, Path]:
    """A directory with an ``mcp`` package that writes a marker when imported."""
    shadow = tmp_path / "shadow"
    (shadow / "mcp").mkdir(parents=True)
    marker = tmp_path / "mcp-imported"
    (shadow / "mcp" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    return shadow, marker


async def test_rein_serve_without_mcp_servers_never_imports_the_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow, marker = _shadow_mcp(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(shadow), *sys.path]))
    # The shadow package works: importing mcp with this path writes the marker.
    await anyio.run_process([sys.executable, "-c", "import mcp"])
    assert marker.exists()
    marker.unlink()
    root = tmp_path / "ws"
    root.mkdir()
    write_script(tmp_path, [{"text": "hello"}])
    async with running_server(root, tmp_path) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        listing = await editor.client.protocol.send_request_async("rein/mcpServers", {})
        assert listing == {"servers": [], "skipped": []}
    assert not marker.exists()


async def test_lazy_tools_offer_the_search_tool_which_enables_tools(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    search = {
        "name": "mcp_search_tools",
        "arguments": {"query": "echo", "enable": ["mcp__box__echo"]},
    }
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tools_include": ["mcp_search_tools"],
                    "tools_exclude": ["mcp__box__echo", "mcp__time__get_current_time"],
                },
                "tool_calls": [search],
            },
            {
                "expect": {
                    "last_message_contains": "Enabled from the next turn on: mcp__box__echo",
                    "tools_include": ["mcp__box__echo"],
                    "system_contains": "`mcp__box__echo` (MCP server box)",
                },
                **_call("mcp__box__echo", text="found"),
            },
            {"expect": {"last_message_contains": "echo: found"}, "text": "done"},
        ],
    )
    settings = {
        "mcp": {**_servers(), "lazyTools": True},
        "approval": {"mcp": "allow"},
        **NO_ANALYZER_GATE,
    }
    async with running_server(root, tmp_path, settings=settings) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result


async def test_over_the_budget_only_include_tools_servers_are_offered(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write_script(
        tmp_path,
        [
            {
                "expect": {
                    "tools_include": ["mcp__box__echo"],
                    "tools_exclude": ["mcp__box__hang", "mcp__time__get_current_time"],
                },
                "text": "ok",
            }
        ],
    )
    mcp = {**_servers(includeTools=["echo"]), "maxToolShare": 0.0001}
    async with running_server(root, tmp_path, settings={"mcp": mcp, **NO_ANALYZER_GATE}) as editor:
        result = await _prompt(editor)
        assert result["status"] == "completed", result
        [warning] = [
            e["event"] for e in editor.events if e["event"]["type"] == "mcp_budget_warning"
        ]
        assert warning["offered"] == 1 and warning["total"] > 1
