"""The vscode-lm provider and the model picker through the real server over
stdio: the editor (the test client) answers ``rein/lm/chat`` with scripted
deltas (tests.fakes.FakeLmHost), lists its models on ``rein/lm/models``,
and the person picks a model with ``rein/setModel``.

The tests that leave the choice for every session and for new sessions as
it was share one server per configured model (``vscode_lm`` and
``replay``, each test its own scripted host and its own sessions); those
that change it, or count the server's sessions, start their own."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.fakes.editor import Editor
from tests.fakes.lm import FakeLmHost, LmReply, wire_lm
from tests.lsp.conftest import WORKSPACE, _settings, running_server, write_script

VSCODE_LM = {"provider": "vscode-lm", "model": "test/scripted"}
NO_ANALYZER = {"gates": {"analyzer": {"enabled": False}}}
EDITOR_MODELS = [
    {"id": "scripted-1", "vendor": "test", "family": "scripted", "name": "Scripted"},
    {"id": "other-2", "vendor": "test", "family": "other", "name": "Other"},
]


#: A test on the module's shared server (its event loop is the module's).
shared = pytest.mark.asyncio(loop_scope="module")


class SwitchedLmHost(FakeLmHost):
    """The editor's models of a shared server: ``rein/lm/chat`` is played by
    the host the running test put in :attr:`host`."""

    def __init__(self) -> None:
        super().__init__([])
        self.host = FakeLmHost([])

    async def chat(
        self, params: dict[str, Any], on_delta: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        return await self.host.chat(params, on_delta)


@dataclass
class Shared:
    """A server shared by a module's tests: its editor (listing
    EDITOR_MODELS), the switch of its chat host, and its tmp_path (where the
    replay model's script.yaml is)."""

    ed: Editor
    lm: SwitchedLmHost
    tmp_path: Path

    def play(self, host: FakeLmHost) -> None:
        self.lm.host = host


async def _shared(
    tmp_path_factory: pytest.TempPathFactory, model: dict[str, Any] | None
) -> AsyncIterator[Shared]:
    tmp_path = tmp_path_factory.mktemp("lm")
    root = tmp_path / "ws"
    shutil.copytree(WORKSPACE, root)
    async with running_server(root, tmp_path, model=model, settings=NO_ANALYZER) as ed:
        lm = SwitchedLmHost()
        wire_lm(ed, lm, models=EDITOR_MODELS)
        yield Shared(ed, lm, tmp_path)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def vscode_lm(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    """The shared server whose configured model is VSCODE_LM."""
    async for shared_server in _shared(tmp_path_factory, VSCODE_LM):
        yield shared_server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def replay(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    """The shared server whose configured model is the replay model."""
    async for shared_server in _shared(tmp_path_factory, None):
        yield shared_server


def edit_call(ident: str) -> dict[str, Any]:
    return {
        "kind": "tool_call",
        "id": ident,
        "name": "edit_file",
        "input": {"path": "app.py", "old_string": "hello {name}", "new_string": "hi {name}"},
    }


async def prompt(editor: Editor, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await asyncio.wait_for(
        editor.client.protocol.send_request_async("rein/prompt", params), 60
    )
    return result


@shared
async def test_a_prompt_through_vscode_lm_edits_a_file(vscode_lm: Shared) -> None:
    host = FakeLmHost(
        [
            LmReply(deltas=[{"kind": "text", "text": "Editing."}, edit_call("call-1")]),
            LmReply(deltas=[{"kind": "text", "text": "Done: "}, {"kind": "text", "text": "hi."}]),
        ]
    )
    vscode_lm.play(host)
    ed = vscode_lm.ed
    ed.open("app.py")
    result = await prompt(ed, text="greet shorter")
    assert result["status"] == "completed", result
    assert result["text"] == "Done: hi."
    assert result["usage"]["estimated"] is True
    assert result["usage"]["inputTokens"] > 0
    assert "hi {name}" in ed.docs["app.py"][1]
    first, second = host.requests
    assert first["model"] == "test/scripted"
    assert first["sessionId"] == result["sessionId"]
    assert first["toolMode"] == "auto"
    assert "edit_file" in [t["name"] for t in first["tools"]]
    assert first["messages"][-1]["role"] == "user"
    assert "greet shorter" in first["messages"][-1]["text"]
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["toolCallId"] == "call-1"
    ends = [
        e["event"]
        for e in ed.events
        if e["sessionId"] == result["sessionId"] and e["event"]["type"] == "turn_end"
    ]
    assert ends and all(e["usage"]["estimated"] for e in ends)


@shared
async def test_without_consent_the_run_fails_with_that_reason(vscode_lm: Shared) -> None:
    vscode_lm.play(FakeLmHost([LmReply(error_code=-32001, error="consent required")]))
    ed = vscode_lm.ed
    result = await prompt(ed, text="hello")
    assert result["status"] == "failed"
    assert "consent required" in result["error"]


async def test_an_editor_without_the_lm_methods_fails_the_run_clearly(
    workspace: Path, tmp_path: Path
) -> None:
    async with running_server(workspace, tmp_path, model=VSCODE_LM, settings=NO_ANALYZER) as ed:
        result = await prompt(ed, text="hello")
        assert result["status"] == "failed"
        assert "needs the Rein extension" in result["error"]


async def test_abort_cancels_the_editors_chat_request(workspace: Path, tmp_path: Path) -> None:
    host = FakeLmHost([LmReply(deltas=[{"kind": "text", "text": "working"}], hang=True)])
    async with running_server(workspace, tmp_path, model=VSCODE_LM, settings=NO_ANALYZER) as ed:
        wire_lm(ed, host)
        running = asyncio.ensure_future(prompt(ed, text="long task"))
        await asyncio.wait_for(host.hanging.wait(), 30)
        (session,) = (await ed.client.protocol.send_request_async("rein/sessions", {}))["sessions"]
        await ed.client.protocol.send_request_async("rein/abort", {"sessionId": session["id"]})
        result = await running
        assert result["status"] == "aborted"
        await asyncio.wait_for(host.cancelled.wait(), 10)  # $/cancelRequest reached the editor


@shared
async def test_models_lists_the_configured_and_the_editors_models(replay: Shared) -> None:
    write_script(replay.tmp_path, [{"text": "ok"}])
    replay.play(FakeLmHost([]))
    ed = replay.ed
    listed = await ed.client.protocol.send_request_async("rein/models", {})
    assert listed["current"] == {"provider": "replay", "model": ""}
    assert listed["models"] == [
        {
            "provider": "replay",
            "model": "",
            "label": "(the provider's default)",
            "source": "config",
        },
        {
            "provider": "vscode-lm",
            "model": "test/scripted",
            "label": "Scripted (test)",
            "source": "vscode-lm",
        },
        {
            "provider": "vscode-lm",
            "model": "test/other",
            "label": "Other (test)",
            "source": "vscode-lm",
        },
    ]
    assert "vscodeLmError" not in listed


async def test_models_without_the_editors_list_says_why(workspace: Path, tmp_path: Path) -> None:
    write_script(tmp_path, [{"text": "ok"}])
    async with running_server(workspace, tmp_path, settings=NO_ANALYZER) as ed:
        listed = await ed.client.protocol.send_request_async("rein/models", {})
        assert [m["source"] for m in listed["models"]] == ["config"]
        assert "rein/lm/models" in listed["vscodeLmError"]


@shared
async def test_set_model_switches_a_sessions_next_turn_without_a_restart(replay: Shared) -> None:
    write_script(replay.tmp_path, [{"text": "from the replay model"}])
    host = FakeLmHost([LmReply(deltas=[{"kind": "text", "text": "from the editor's model"}])])
    replay.play(host)
    ed = replay.ed
    first = await prompt(ed, text="one")
    assert first["text"] == "from the replay model"
    session_id = first["sessionId"]
    answer = await ed.client.protocol.send_request_async(
        "rein/setModel",
        {"sessionId": session_id, "provider": "vscode-lm", "model": "test/other"},
    )
    assert answer == {"ok": True}
    listed = await ed.client.protocol.send_request_async("rein/models", {"sessionId": session_id})
    assert listed["current"] == {"provider": "vscode-lm", "model": "test/other"}
    # Other sessions keep the configured model.
    everywhere = await ed.client.protocol.send_request_async("rein/models", {})
    assert everywhere["current"] == {"provider": "replay", "model": ""}
    second = await prompt(ed, text="two", sessionId=session_id)
    assert second["status"] == "completed", second
    assert second["text"] == "from the editor's model"
    assert host.requests[0]["model"] == "test/other"
    assert host.requests[0]["sessionId"] == session_id


async def test_set_model_for_every_session_applies_to_new_sessions(
    workspace: Path, tmp_path: Path
) -> None:
    host = FakeLmHost([LmReply(deltas=[{"kind": "text", "text": "picked"}])])
    async with running_server(workspace, tmp_path, settings=NO_ANALYZER) as ed:
        wire_lm(ed, host)
        await ed.client.protocol.send_request_async(
            "rein/setModel", {"provider": "vscode-lm", "model": "test/scripted"}
        )
        result = await prompt(ed, text="new session")
        assert result["text"] == "picked"
        assert host.requests[0]["model"] == "test/scripted"


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        pytest.param({"provider": "gemini", "model": "x"}, "provider", id="unknown-provider"),
        pytest.param(
            {"provider": "vscode-lm", "sessionId": "nope"}, "no session 'nope'", id="no-session"
        ),
    ],
)
@shared
async def test_set_model_refuses_bad_input_and_keeps_the_model(
    replay: Shared, params: dict[str, Any], fragment: str
) -> None:
    write_script(replay.tmp_path, [{"text": "still replay"}])
    ed = replay.ed
    with pytest.raises(JsonRpcException, match=fragment):
        await ed.client.protocol.send_request_async("rein/setModel", params)
    result = await prompt(ed, text="go")
    assert result["text"] == "still replay"


@shared
async def test_set_model_refuses_a_choice_that_cannot_be_built(vscode_lm: Shared) -> None:
    vscode_lm.play(FakeLmHost([LmReply(deltas=[{"kind": "text", "text": "still the editor's"}])]))
    ed = vscode_lm.ed
    # Replay from another provider's settings has no script to play.
    with pytest.raises(JsonRpcException, match=r"model\.script"):
        await ed.client.protocol.send_request_async("rein/setModel", {"provider": "replay"})
    result = await prompt(ed, text="go")
    assert result["text"] == "still the editor's"


BROKEN = 'def greet(name: str) -> str:\n    return f"hello {nmae}"\n'


@pytest.mark.e2e
async def test_auto_repair_waits_for_consent_with_vscode_lm(editor: Editor, tmp_path: Path) -> None:
    fix = {
        "kind": "tool_call",
        "id": "fix-1",
        "name": "edit_file",
        "input": {"path": "app.py", "old_string": "{nmae}", "new_string": "{name}"},
    }
    host = FakeLmHost([LmReply(deltas=[fix]), LmReply(deltas=[{"kind": "text", "text": "ok"}])])
    wire_lm(editor, host)
    settings = {**_settings(tmp_path), "autoRepair": "onSave", "model": VSCODE_LM}
    editor.client.set_configuration(settings, section="rein")
    editor.client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"rein": settings})
    )
    editor.open("app.py")
    editor.type("app.py", BROKEN)
    editor.save("app.py")
    skipped = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "skipped"
    )
    assert "no consent yet" in skipped["event"]["reason"]
    assert host.requests == []
    editor.client.protocol.notify("rein/lm/consent", {"granted": True})
    editor.save("app.py")
    finished = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "finished", 60
    )
    assert finished["event"]["status"] == "completed", finished
    assert "{name}" in editor.docs["app.py"][1]
    assert len(host.requests) == 2


@shared
async def test_the_configured_vscode_lm_model_is_listed_once_with_the_editors_name(
    vscode_lm: Shared,
) -> None:
    vscode_lm.play(FakeLmHost([]))
    ed = vscode_lm.ed
    listed = await ed.client.protocol.send_request_async("rein/models", {})
    assert listed["current"] == VSCODE_LM
    assert [(m["model"], m["label"], m["source"]) for m in listed["models"]] == [
        ("test/scripted", "Scripted (test)", "config"),
        ("test/other", "Other (test)", "vscode-lm"),
    ]


async def test_a_sessions_own_choice_wins_over_the_choice_for_every_session(
    workspace: Path, tmp_path: Path
) -> None:
    host = FakeLmHost(
        [
            LmReply(deltas=[{"kind": "text", "text": "one"}]),
            LmReply(deltas=[{"kind": "text", "text": "two"}]),
        ]
    )
    async with running_server(workspace, tmp_path, settings=NO_ANALYZER) as ed:
        wire_lm(ed, host)
        send = ed.client.protocol.send_request_async
        await send("rein/setModel", {"provider": "vscode-lm", "model": "test/scripted"})
        first = await prompt(ed, text="one")
        session_id = first["sessionId"]
        await send(
            "rein/setModel",
            {"sessionId": session_id, "provider": "vscode-lm", "model": "test/other"},
        )
        second = await prompt(ed, text="two", sessionId=session_id)
        assert second["text"] == "two"
        assert [r["model"] for r in host.requests] == ["test/scripted", "test/other"]
        mine = await send("rein/models", {"sessionId": session_id})
        assert mine["current"] == {"provider": "vscode-lm", "model": "test/other"}
        everyone = await send("rein/models", {})
        assert everyone["current"] == {"provider": "vscode-lm", "model": "test/scripted"}


def said(text: str) -> LmReply:
    return LmReply(deltas=[{"kind": "text", "text": text}])


@shared
@pytest.mark.parametrize(
    ("extra", "new_session_model"),
    [
        pytest.param({}, "test/scripted", id="this-session-only"),
        pytest.param({"newSessions": False}, "test/scripted", id="new-sessions-false"),
    ],
)
async def test_set_model_for_one_session_leaves_the_others_and_new_ones_when_asked(
    vscode_lm: Shared, extra: dict[str, Any], new_session_model: str
) -> None:
    host = FakeLmHost([said(f"reply {n}") for n in range(5)])
    vscode_lm.play(host)
    await one_sessions_choice(vscode_lm.ed, host, extra, new_session_model)


async def test_set_model_for_one_session_and_new_ones_leaves_the_others(
    workspace: Path, tmp_path: Path
) -> None:
    # Its own server: the choice for new sessions stays after it.
    host = FakeLmHost([said(f"reply {n}") for n in range(5)])
    async with running_server(workspace, tmp_path, model=VSCODE_LM, settings=NO_ANALYZER) as ed:
        wire_lm(ed, host, models=EDITOR_MODELS)
        await one_sessions_choice(ed, host, {"newSessions": True}, "test/other")


async def one_sessions_choice(
    ed: Editor, host: FakeLmHost, extra: dict[str, Any], new_session_model: str
) -> None:
    send = ed.client.protocol.send_request_async
    first = (await prompt(ed, text="a"))["sessionId"]
    second = (await prompt(ed, text="b"))["sessionId"]
    answer = await send(
        "rein/setModel",
        {"sessionId": first, "provider": "vscode-lm", "model": "test/other", **extra},
    )
    assert answer == {"ok": True}
    await prompt(ed, text="a again", sessionId=first)
    await prompt(ed, text="b again", sessionId=second)
    third = (await prompt(ed, text="c"))["sessionId"]
    asked = [(r["sessionId"], r["model"]) for r in host.requests]
    assert asked == [
        (first, "test/scripted"),
        (second, "test/scripted"),
        (first, "test/other"),
        (second, "test/scripted"),
        (third, new_session_model),
    ]
    models = {
        sid: (await send("rein/models", {"sessionId": sid}))["current"]["model"]
        for sid in (first, second, third)
    }
    assert models == {
        first: "test/other",
        second: "test/scripted",
        third: new_session_model,
    }
    # Without a session: the model a new session starts with.
    fresh = await send("rein/models", {})
    assert fresh["current"]["model"] == new_session_model


@shared
async def test_set_model_refuses_new_sessions_false_without_a_session(vscode_lm: Shared) -> None:
    vscode_lm.play(FakeLmHost([]))
    ed = vscode_lm.ed
    for params, field in [
        ({"provider": "vscode-lm", "model": "test/other", "newSessions": False}, "newSessions"),
        ({"provider": "vscode-lm", "newSessions": "yes"}, "newSessions"),
    ]:
        with pytest.raises(JsonRpcException, match=field):
            await ed.client.protocol.send_request_async("rein/setModel", params)
    listed = await ed.client.protocol.send_request_async("rein/models", {})
    assert listed["current"] == VSCODE_LM


@shared
async def test_a_subagent_started_after_a_model_change_uses_the_new_model(
    vscode_lm: Shared,
) -> None:
    task = {
        "kind": "tool_call",
        "id": "task-1",
        "name": "task",
        "input": {"description": "look around", "prompt": "list the files"},
    }
    host = FakeLmHost(
        [said("first"), LmReply(deltas=[task]), said("child done"), said("parent done")]
    )
    vscode_lm.play(host)
    ed = vscode_lm.ed
    session_id = (await prompt(ed, text="hello"))["sessionId"]
    await ed.client.protocol.send_request_async(
        "rein/setModel",
        {"sessionId": session_id, "provider": "vscode-lm", "model": "test/other"},
    )
    result = await prompt(ed, text="delegate", sessionId=session_id)
    assert result["status"] == "completed", result
    assert result["text"] == "parent done"
    # parent (before), parent (task call), the child, parent (after the child)
    assert [r["model"] for r in host.requests] == [
        "test/scripted",
        "test/other",
        "test/other",
        "test/other",
    ]
