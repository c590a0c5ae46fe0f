"""``rein run`` with an invalid configuration (issue 17): strict, unlike the
language server. A bad value in the file, a REIN_* variable or a flag stops
the run before any request, exit code 2, naming every bad key and the
values it allows; the default endpoint is never contacted instead."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.harness.errors import ConfigError
from rein.headless.run import build_config
from rein.providers.mock_server import MockServer
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

ALLOWED = "'openai', 'anthropic', 'replay' or 'vscode-lm'"


async def test_an_invalid_provider_stops_rein_run_before_any_request(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    async with (
        MockServer(scenario=[{"text": "local"}]) as local,
        MockServer(scenario=[{"text": "public"}]) as public,
    ):
        config = tmp_path / "rein.json"
        section = {
            "model": {"provider": "openai-compatible", "baseUrl": f"{local.url}/v1"},
            "approval": {"command": "sometimes"},
        }
        config.write_text(json.dumps({"rein": section}))
        env = {**os.environ, "OPENAI_BASE_URL": f"{public.url}/v1", "OPENAI_API_KEY": "sk-x"}
        command = [*REIN, "run", "summarise app.py", "-w", str(tmp_path)]
        done = await anyio.run_process([*command, "--config", str(config)], env=env, check=False)
        assert local.requests == [] and public.requests == []
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert f"rein.model.provider: Input should be {ALLOWED}; got 'openai-compatible'" in stderr
    assert "also invalid: rein.approval.command" in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("file", "env", "flags", "says"),
    [
        # Defect: the message said "(flags)" for a value REIN_PROVIDER set.
        pytest.param(
            None,
            {"REIN_PROVIDER": "openai-compatible"},
            {},
            f"invalid configuration (REIN_PROVIDER): rein.model.provider: Input should be {ALLOWED}",
            id="variable",
        ),
        pytest.param(
            None, {}, {"model.baseUrl": "localhost:8000/v1"}, "rein.model.baseUrl", id="flag"
        ),
        pytest.param("- a\n- list\n", {}, {}, "must be a mapping, not list", id="not-a-mapping"),
        pytest.param(
            "rein:\n  model: gpt-4\n", {}, {}, "rein.model: must be a mapping", id="model"
        ),
        pytest.param(
            "rein:\n  harness: 3\n",
            {},
            {"harness.maxRepairAttempts": 1},
            "rein.harness",
            id="section",
        ),
    ],
)
def test_build_config_refuses_what_it_cannot_use(
    file: str | None,
    env: dict[str, str],
    flags: dict[str, Any],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("REIN_CONFIG", "REIN_PROVIDER", "REIN_MODEL", "REIN_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    path = None
    if file is not None:
        path = tmp_path / "rein.yaml"
        path.write_text(file)
    with pytest.raises(ConfigError, match="invalid configuration") as caught:
        build_config(str(path) if path else None, flags)
    assert says in str(caught.value)
