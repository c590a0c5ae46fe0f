"""Configuration that fails safe, over the real `rein serve` (issue 17).

The person configured a local model server (the mock server, over real
HTTP) but wrote an invalid provider, "openai-compatible". The public
endpoint is stood in for by a second mock server that the server's
environment names as OPENAI_BASE_URL: the default endpoint the old
configuration handling fell back to. The prompt fails with the reason, no
request reaches either host, the editor is told the key and the allowed
values, and every other setting stays applied. Once the provider is fixed,
the same local server answers.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from rein.providers.mock_server import MockServer
from tests.fakes.editor import Editor, make_client, wire
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

ALLOWED = "'openai', 'anthropic', 'replay' or 'vscode-lm'"


async def test_an_invalid_provider_fails_the_prompt_and_sends_nothing_anywhere(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("local only\n")
    async with (
        MockServer(scenario=[{"text": "answered locally"}]) as local,
        MockServer(scenario=[{"text": "answered by the public endpoint"}]) as public,
    ):
        model: dict[str, Any] = {
            "provider": "openai-compatible",
            "baseUrl": f"{local.url}/v1",
            "model": "local-model",
            "apiKeyEnv": "",
            "maxRetries": 4,
        }
        settings: dict[str, Any] = {
            "storagePath": str(tmp_path / "storage"),
            "model": model,
            "approval": {"command": "allow"},
            "harness": {"maxRepairAttempts": 0},
        }
        env = {
            **os.environ,
            "OPENAI_BASE_URL": f"{public.url}/v1",
            "ANTHROPIC_BASE_URL": public.url,
            "OPENAI_API_KEY": "sk-not-for-this-workspace",
        }
        client = make_client()
        ed = Editor(client, root)
        wire(ed)
        client.set_configuration(settings, section="rein")
        await client.start_io(*REIN, "serve", env=env)
        try:
            await client.initialize_session(
                lsp.InitializeParams(
                    capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
                    root_uri=root.as_uri(),
                )
            )
            with pytest.raises(JsonRpcException) as refused:
                await client.protocol.send_request_async(
                    "rein/prompt", {"text": "summarise notes.txt"}
                )
            sessions_after_refusal = await client.protocol.send_request_async("rein/sessions", {})
            requests_while_invalid = len(local.requests) + len(public.requests)
            # The person fixes the provider; the local server answers.
            fixed = {**settings, "model": {**model, "provider": "openai"}}
            client.set_configuration(fixed, section="rein")
            client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings={"rein": fixed})
            )
            result = await client.protocol.send_request_async("rein/prompt", {"text": "again"})
            await asyncio.wait_for(client.shutdown_async(None), 10)
            client.exit(None)
        finally:
            await asyncio.wait_for(client.stop(), 10)

    # The prompt failed with the reason: the key, the allowed values, no request.
    error = str(refused.value)
    assert refused.value.code == -32803, error
    assert refused.value.data is None  # the reason, not a traceback
    assert "rein.model.provider" in error and ALLOWED in error and "'openai-compatible'" in error
    assert "No model request is sent" in error
    assert sessions_after_refusal == {"sessions": []}  # a refused prompt creates nothing
    # No request reached any host: not the configured one, not the default one.
    assert requests_while_invalid == 0
    assert public.requests == []
    # The editor was told once, naming the key and the allowed values.
    shown = [m.message for m in client.messages if "rein.model.provider" in m.message]
    assert len(shown) == 1, [m.message for m in client.messages]
    assert ALLOWED in shown[0] and "runs fail with this reason" in shown[0]
    # The other settings were applied all along (and the fix went where configured).
    assert result["status"] == "completed" and result["text"] == "answered locally", result
    assert [r.path for r in local.requests] == ["/v1/chat/completions"]
    assert local.requests[0].body["model"] == "local-model"
    assert "authorization" not in local.requests[0].headers  # apiKeyEnv "" kept: no key sent


BROKEN = 'def greet(name: str) -> str:\n    return f"hello {nmae}"\n'


async def test_fix_and_auto_repair_start_nothing_while_the_provider_is_invalid(
    editor: Editor, tmp_path: Path
) -> None:
    from tests.lsp.conftest import _settings

    settings = {
        **_settings(tmp_path),
        "autoRepair": "onSave",
        "model": {"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1"},
    }
    editor.client.set_configuration(settings, section="rein")
    editor.client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"rein": settings})
    )
    editor.open("app.py")
    with pytest.raises(JsonRpcException) as refused:
        await editor.client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="rein.fix", arguments=[{"uri": editor.uri("app.py")}])
        )
    assert refused.value.code == -32803 and "rein.model.provider" in str(refused.value)
    # autoRepair is on (the rest of the settings applied): the save is seen, the run skipped.
    editor.type("app.py", BROKEN)
    editor.save("app.py")
    skipped = await editor.wait_event(
        lambda e: e["event"]["type"] == "auto_repair" and e["event"]["phase"] == "skipped"
    )
    assert "rein.model.provider" in skipped["event"]["reason"]
    assert ALLOWED in skipped["event"]["reason"]
    sessions = await editor.client.protocol.send_request_async("rein/sessions", {})
    assert sessions == {"sessions": []}
