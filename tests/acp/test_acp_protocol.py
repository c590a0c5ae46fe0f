"""``rein acp`` at the protocol level: what ``initialize`` offers, the key
missing, and requests that are wrong (malformed params, an unknown session,
a cancel of nothing). The real ``rein acp`` over stdio; the model, when a
test needs one, the mock server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import RequestError
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    Home,
    assert_used_up,
    load_scenario,
    rein_config,
    running_agent,
    started,
    write_config,
)
from tests.fakes.acp_client import FakeAcpClient

pytestmark = pytest.mark.e2e

KEY_VAR = "REIN_ACP_TEST_KEY"


def said(error: RequestError) -> str:
    """All an error says: its message and its data."""
    return f"{error} {json.dumps(error.data)}"


async def refused(request: Any) -> RequestError:
    with pytest.raises(RequestError) as info:
        with anyio.fail_after(REQUEST_S):
            await request
    return info.value


async def test_initialize_answers_version_1_and_what_rein_offers(pyproj: Path, home: Home) -> None:
    async with running_agent(FakeAcpClient(pyproj, run_commands=True), home) as agent:
        answer = await agent.initialize()
        # A client asking for a later version is answered with the one Rein speaks.
        later = await agent.raw("initialize", {"protocolVersion": 7, "clientCapabilities": {}})

    assert answer.protocol_version == 1
    assert later["protocolVersion"] == 1
    caps = answer.agent_capabilities
    assert caps is not None and caps.load_session is True
    prompt = caps.prompt_capabilities
    assert prompt is not None
    assert (prompt.image, prompt.audio, prompt.embedded_context) == (False, False, True)
    sessions = caps.session_capabilities
    assert sessions is not None and sessions.list is not None and sessions.close is not None
    assert answer.agent_info is not None
    assert (answer.agent_info.name, answer.agent_info.title) == ("rein", "Rein")
    assert answer.auth_methods == []  # the mock needs no key (apiKeyEnv "")


async def test_without_the_key_initialize_offers_the_env_method_and_sessions_need_it(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    config = rein_config(home.path, mock.url)
    config["model"]["apiKeyEnv"] = KEY_VAR
    write_config(home.config_file, config)

    async with running_agent(FakeAcpClient(pyproj, run_commands=True), home) as agent:
        answer = await agent.initialize()
        no_session = await refused(agent.conn.new_session(cwd=str(pyproj), mcp_servers=[]))
        still_no_key = await refused(agent.conn.authenticate(method_id=f"env:{KEY_VAR}"))
        not_offered = await refused(agent.conn.authenticate(method_id="oauth"))

    [method] = answer.auth_methods
    offered = method.model_dump(by_alias=True, exclude_none=True)
    assert offered["id"] == f"env:{KEY_VAR}"
    assert offered["name"] == f"Set {KEY_VAR}"
    assert KEY_VAR in offered["description"]
    assert no_session.code == -32000 and KEY_VAR in said(no_session)
    assert still_no_key.code == -32000 and KEY_VAR in said(still_no_key)
    assert not_offered.code == -32602 and not_offered.data == {"field": "methodId"}
    assert f"env:{KEY_VAR}" in said(not_offered)

    # The editor restarts Rein with the key set: nothing to authenticate.
    async with running_agent(
        FakeAcpClient(pyproj, run_commands=True), home, env={KEY_VAR: "sk-test"}, name="with-key"
    ) as agent:
        answer = await agent.initialize()
        session = await agent.new_session(pyproj)
    assert answer.auth_methods == []
    assert session.session_id


#: Malformed requests, each with the field its error must name.
MALFORMED = {
    "new-without-cwd": ("session/new", {"mcpServers": []}, "cwd"),
    "new-relative-cwd": ("session/new", {"cwd": "relative/dir", "mcpServers": []}, "cwd"),
    "new-no-folder": ("session/new", {"cwd": "/no/such/folder", "mcpServers": []}, "cwd"),
    "prompt-missing": ("session/prompt", {"sessionId": "{sid}"}, "prompt"),
    "prompt-image": (
        "session/prompt",
        {
            "sessionId": "{sid}",
            "prompt": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
        },
        "prompt[0]",
    ),
    "bad-mode": ("session/set_mode", {"sessionId": "{sid}", "modeId": "yolo"}, "modeId"),
}


async def test_wrong_requests_are_errors_naming_what_is_wrong_and_the_server_goes_on(
    pyproj: Path, home: Home, mock: MockServer
) -> None:
    """In one server (one start for all): each malformed request in turn,
    requests for unknown sessions, and cancels of nothing."""
    await load_scenario(mock, "hello", [{"text": "hello there"}])
    answers: dict[str, tuple[RequestError, str]] = {}
    async with started(pyproj, home) as (agent, sid):
        for case, (method, params, _field) in MALFORMED.items():
            filled = {k: (sid if v == "{sid}" else v) for k, v in params.items()}
            error = await refused(agent.raw(method, filled))
            # The server goes on: the next good request is answered.
            again = await agent.new_session(pyproj)
            answers[case] = (error, again.session_id)

        # An unknown session is an error naming it.
        unknown_prompt = await refused(agent.conn.prompt(session_id="no-such-session", prompt=[]))
        unknown_mode = await refused(
            agent.conn.set_session_mode(session_id="gone-too", mode_id="plan")
        )

        # A cancel of nothing is ignored.
        await agent.conn.cancel(session_id=sid)  # no run
        await agent.conn.cancel(session_id="no-such-session")
        with anyio.fail_after(REQUEST_S):
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
        assert agent.process.returncode is None
    for case, (_method, _params, field) in MALFORMED.items():
        error, again_id = answers[case]
        assert error.code == -32602, f"{case}: {said(error)}"
        assert field in said(error), f"{case}: {said(error)}"
        assert again_id != sid, case
    # Each good request after a bad one made a session of its own.
    assert len({again_id for _error, again_id in answers.values()}) == len(MALFORMED)

    assert unknown_prompt.code == -32002 and "no-such-session" in said(unknown_prompt), said(
        unknown_prompt
    )
    assert unknown_mode.code == -32002 and "gone-too" in said(unknown_mode), said(unknown_mode)

    assert answer.stop_reason == "end_turn"
    assert agent.editor.said(sid) == "hello there"
    await assert_used_up(mock)
