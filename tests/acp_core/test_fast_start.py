"""``initialize`` answered before the SDK is imported: the same JSON as the
agent's own answer, the first line read without taking the next one, and
anything else left to the SDK."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from acp.schema import ClientCapabilities

from rein.acp import fast_start
from rein.acp.agent import ReinAcpAgent
from rein.config import ReinConfig
from tests.forkserver import REAL_REIN


def _config(key_env: str) -> ReinConfig:
    return ReinConfig.model_validate({"model": {"provider": "openai", "apiKeyEnv": key_env}})


@pytest.mark.parametrize("key_set", [True, False], ids=["key", "no-key"])
async def test_the_fast_answer_is_what_the_agent_answers(
    key_set: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_FAST_KEY", "k") if key_set else monkeypatch.delenv(
        "REIN_FAST_KEY", raising=False
    )
    config = _config("REIN_FAST_KEY")
    async with anyio.create_task_group() as tg:
        agent = ReinAcpAgent(config, lambda _c: None, tg, storage=None)  # type: ignore[arg-type,return-value]
        response = await agent.initialize(1, ClientCapabilities())
    sdk = response.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    request = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}
    answered = fast_start.answer_initialize(json.dumps(request).encode() + b"\n", config)
    assert answered is not None
    reply, params = answered
    assert json.loads(reply) == {"jsonrpc": "2.0", "id": 7, "result": sdk}
    assert reply.endswith(b"\n") and params == {"protocolVersion": 1}
    assert bool(sdk["authMethods"]) is not key_set
    from acp import PROTOCOL_VERSION

    assert fast_start.PROTOCOL_VERSION == PROTOCOL_VERSION


@pytest.mark.parametrize(
    "line",
    [
        b"not json\n",
        b'{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}\n',
        b'{"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}}\n',
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1"}}\n',
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, '
        b'"clientCapabilities": 3}}\n',
        b'{"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n',
    ],
    ids=["junk", "other-method", "notification", "bad-version", "bad-capabilities", "no-jsonrpc"],
)
def test_anything_but_a_well_formed_initialize_is_left_to_the_sdk(line: bytes) -> None:
    assert fast_start.answer_initialize(line, ReinConfig()) is None


def test_the_first_line_is_read_without_the_next() -> None:
    read, write = os.pipe()
    try:
        os.write(write, b'{"first": 1}\n{"second": 2}\n')
        assert fast_start.read_first_line(read) == b'{"first": 1}\n'
        assert os.read(read, 100) == b'{"second": 2}\n'
        os.close(write)
        write = -1
        assert fast_start.read_first_line(read) == b""
    finally:
        os.close(read)
        if write != -1:
            os.close(write)


def test_rein_acp_answers_initialize_without_importing_the_sdk(tmp_path: Path) -> None:
    """The answer is on stdout before ``acp`` is imported: a shadow ``acp``
    package that writes a marker when imported has not run by then."""
    shadow = tmp_path / "shadow"
    (shadow / "acp").mkdir(parents=True)
    marker = tmp_path / "sdk-imported"
    (shadow / "acp" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(5)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(shadow), "HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [*REAL_REIN, "acp", "--storage", str(tmp_path / "st")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    assert json.loads(line)["result"]["protocolVersion"] == 1
    proc.stdin.close()
    # Only after the answer does it load the SDK (here the shadow, which exits 5).
    assert proc.wait(timeout=30) == 5
    assert marker.exists()


@pytest.mark.parametrize("version", [-1, 65536], ids=["negative", "past-uint16"])
def test_a_version_outside_uint16_is_invalid_params_naming_the_field(version: int) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "initialize",
        "params": {"protocolVersion": version},
    }
    answered = fast_start.answer_initialize(json.dumps(request).encode() + b"\n", ReinConfig())
    assert answered is not None
    reply, params = answered
    error = json.loads(reply)
    assert error["id"] == 3 and "result" not in error and params is None
    assert error["error"]["code"] == -32602
    assert error["error"]["data"] == {"field": "protocolVersion"}
    assert f"protocolVersion: {version} " in error["error"]["message"]


def test_the_highest_version_is_answered_with_reins() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "initialize",
        "params": {"protocolVersion": 65535},
    }
    answered = fast_start.answer_initialize(json.dumps(request).encode() + b"\n", ReinConfig())
    assert answered is not None
    assert json.loads(answered[0])["result"]["protocolVersion"] == fast_start.PROTOCOL_VERSION
