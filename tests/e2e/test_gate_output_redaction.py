"""A gate's text passes the redactor tool results pass (secrets never
leave): a test the run broke prints the provider key Rein holds in its
failure, and neither the repair prompt the model gets, the events nor the
store hold it. The real ``rein run`` with the real tests gate (pytest, in
its sandbox) against the mock provider over real HTTP."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from rein.providers.mock_server import MockServer
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

#: No key shape: only the value Rein holds (``model.apiKeyEnv``) redacts it.
KEY = "plainSEEDEDvalue0123456789abcdef"


async def test_a_failing_tests_text_reaches_the_repair_prompt_redacted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text("VALUE = 1\n")
    (root / "tests" / "test_app.py").write_text(
        "from app import VALUE\n\n"
        f"TOKEN = {KEY!r}\n\n\n"
        "def test_value():\n"
        '    assert VALUE == 1, f"deploy with {TOKEN}"\n'
    )
    storage = tmp_path / "storage"
    scenario = [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "app.py", "content": "VALUE = 2\n"}}
            ]
        },
        {"text": "done"},
        {"text": "done again"},
    ]
    async with MockServer(scenario=scenario) as mock:
        config = tmp_path / "rein.json"
        section = {
            "model": {
                "provider": "openai",
                "baseUrl": f"{mock.url}/v1",
                "model": "m",
                "apiKeyEnv": "REIN_TEST_KEY",
                "maxRetries": 0,
            },
            "gates": {"analyzer": {"enabled": False}, "tests": {"enabled": True}},
            "harness": {"maxRepairAttempts": 1},
        }
        config.write_text(json.dumps({"rein": section}))
        command = [*REIN, "run", "set VALUE to 2", "-w", str(root)]
        command += ["--config", str(config), "--storage", str(storage), "--yes", "--json"]
        env = {**os.environ, "REIN_TEST_KEY": KEY}
        with anyio.fail_after(180):
            done = await anyio.run_process(command, env=env, check=False)
        bodies = [json.dumps(r.body) for r in mock.requests]
    out = done.stdout.decode() + done.stderr.decode()
    # The failure reached the model (the gate blocked with the test's text)...
    repairs = [body for body in bodies if "deploy with" in body]
    assert repairs, out[-3000:]
    repair = repairs[0]
    assert "test_value" in repair
    # ...without the key, in no request, event, or byte of the store.
    assert all(KEY not in body for body in bodies)
    assert "[redacted]" in repair
    assert KEY not in out
    for path in storage.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
