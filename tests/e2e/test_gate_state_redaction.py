"""What a gate keeps or sends besides its verdict holds no key (safe20):
the analyzer gate's baselines a session stores with its unvalidated
changes, and the preview's output events. The real ``rein run`` (real
basedpyright and ruff, a real preview process) against the mock provider
over real HTTP; every byte of its output, requests and store is searched.
Before the fix the stored baseline held basedpyright's message with the
key (``Literal['sk-...']``) and ``rein run --json`` printed the preview's
line with it."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.providers.mock_server import MockServer
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

#: Key shapes the redactor knows; neither is the provider key Rein holds.
IN_A_TYPE = "sk-proj-ANALYZERxx0123456789abcdefgh"
PRINTED = "ghp_PREVIEWxx0123456789abcdefghijklmnopqr"
PROVIDER_KEY = "plainSEEDEDvalue0123456789abcdef"

BROKEN = "from conf import TOKEN\n\nLIMIT: int = TOKEN\nVALUE = 2\nprint(undefined_name)\n"
FIXED = "from conf import TOKEN\n\nLIMIT: int = TOKEN\nVALUE = 2\n"


async def _rein_run(
    tmp_path: Path, root: Path, scenario: list[dict[str, Any]], gates: dict[str, Any], *extra: str
) -> tuple[dict[str, Any], str, list[str]]:
    """One ``rein run --json``: its result, its whole output and the bodies
    of its model requests."""
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
            "gates": gates,
            "harness": {"maxRepairAttempts": 0},
        }
        config.write_text(json.dumps({"rein": section}))
        command = [*REIN, "run", "set VALUE to 2", "-w", str(root)]
        command += ["--config", str(config), "--storage", str(tmp_path / "storage")]
        command += ["--yes", "--json", *extra]
        env = {**os.environ, "REIN_TEST_KEY": PROVIDER_KEY}
        with anyio.fail_after(240):
            done = await anyio.run_process(command, env=env, check=False)
        bodies = [json.dumps(r.body) for r in mock.requests]
    out = done.stdout.decode() + done.stderr.decode()
    lines = [line for line in done.stdout.decode().splitlines() if '"result"' in line]
    assert lines, out[-3000:]
    return json.loads(lines[-1])["result"], out, bodies


def _stored_bytes(storage: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in storage.rglob("*") if p.is_file()]


async def test_the_analyzer_gates_stored_baselines_hold_no_key(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "conf.py").write_text(f'from typing import Final\n\nTOKEN: Final = "{IN_A_TYPE}"\n')
    (root / "app.py").write_text("from conf import TOKEN\n\nLIMIT: int = TOKEN\nVALUE = 1\n")
    gates = {"analyzer": {"enabled": True}, "tests": {"enabled": False}}
    write = {"name": "write_file", "arguments": {"path": "app.py", "content": BROKEN}}
    first, out, bodies = await _rein_run(
        tmp_path, root, [{"tool_calls": [write]}, {"text": "done"}], gates
    )
    # The run broke app.py (a new undefined name) and ended with it
    # unvalidated: the session stores app.py's baseline, whose
    # pre-existing basedpyright error quotes the key's literal.
    assert first["status"] == "failed", out[-3000:]
    db = sqlite3.connect(tmp_path / "storage" / "sessions.db")
    states = [json.loads(s) for (s,) in db.execute("SELECT state FROM memories")]
    db.close()
    [stored] = [
        f
        for state in states
        for f in state.get("validation", {}).get("gates", {}).get("analyzer", {}).get("files", [])
    ]
    assert stored["path"] == "app.py"
    typed = [d["message"] for d in stored["diagnostics"] if d["code"] == "reportAssignmentType"]
    assert typed and all("[redacted]" in m for m in typed), stored
    for path, data in _stored_bytes(tmp_path / "storage"):
        assert IN_A_TYPE.encode() not in data, path
    assert IN_A_TYPE not in out and all(IN_A_TYPE not in b for b in bodies)
    # Resumed in a new process, the stored (redacted) baseline still tells
    # the old error from a new one: the repair passes, the old error does
    # not block.
    write = {"name": "write_file", "arguments": {"path": "app.py", "content": FIXED}}
    second, out, _ = await _rein_run(
        tmp_path,
        root,
        [{"tool_calls": [write]}, {"text": "fixed"}],
        gates,
        "--resume",
        first["sessionId"],
    )
    assert second["status"] == "completed", out[-3000:]
    for path, data in _stored_bytes(tmp_path / "storage"):
        assert IN_A_TYPE.encode() not in data, path


async def test_the_previews_output_events_hold_no_key(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("VALUE = 1\n")
    (root / "serve.py").write_text(
        "import time\n\n"
        "print('ready', flush=True)\n"
        f"print('deploying with {PRINTED}', flush=True)\n"
        "time.sleep(30)\n"
    )
    gates = {
        "analyzer": {"enabled": False},
        "tests": {"enabled": False},
        "preview": {
            "command": f"{sys.executable} serve.py",
            "readiness": {"line": "^ready$"},
            "observationWindowMs": 500,
            "stopTimeoutMs": 2000,
        },
    }
    write = {"name": "write_file", "arguments": {"path": "app.py", "content": "VALUE = 2\n"}}
    result, out, bodies = await _rein_run(
        tmp_path, root, [{"tool_calls": [write]}, {"text": "done"}], gates
    )
    # The preview ran and its line reached the events, redacted.
    assert "deploying with [redacted]" in out, out[-3000:]
    assert PRINTED not in out, result
    assert all(PRINTED not in b for b in bodies)
    for path, data in _stored_bytes(tmp_path / "storage"):
        assert PRINTED.encode() not in data, path
