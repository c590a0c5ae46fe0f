"""``rein doctor``: every analyzer preset, found or not, where, its
version, and the command that installs a missing one (issue 35 item 3)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from rein.cli import main
from rein.headless.doctor import model_line
from rein.providers.config import ModelConfig
from tests.forkserver import REIN

ROOT = Path(__file__).resolve().parents[2]


def fake(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def doctor(
    tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **(extra_env or {}),
        "PATH": str(tmp_path / "bin"),
        "REIN_TOOL_CACHE": str(tmp_path / "cache"),
        "PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{ROOT}",
    }
    for name in ("REIN_CONFIG", "REIN_PROVIDER", "REIN_MODEL", "REIN_BASE_URL"):
        env.pop(name, None)
    return subprocess.run(
        [*REIN, "doctor", str(tmp_path / "ws"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_doctor_lists_found_and_missing_servers_with_versions_and_installs(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.go").write_text("package main\n")
    gopls = fake(tmp_path / "bin", "gopls", 'test "$1" = version && echo "gopls v0.99.0"')
    bash = fake(tmp_path / "cache" / "node_modules" / ".bin", "bash-language-server", "echo 5.4.0")
    done = doctor(tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "  gopls (go): found; used here\n" in out
    assert f"      {gopls} (on PATH)\n      version: gopls v0.99.0\n" in out
    assert "  bash (shellscript): found; not used here\n" in out
    assert f"      {bash} (Rein's tool cache)\n      version: 5.4.0\n" in out
    assert (
        "  clangd (c, cpp): not found; not used here\n      install: apt-get install clangd\n"
        in out
    )
    assert (
        "  typescript (typescript, javascript): not found; not used here\n"
        "      install: npm i -g typescript-language-server typescript@5\n"
    ) in out
    for name in ("ruff", "basedpyright", "eslint", "biome"):
        assert f"\n  {name} (" in out
    # No bubblewrap on this PATH: the sandbox line says why, and what follows;
    # the person's setup comes after it.
    assert (
        "\nsandbox: does not work here: bubblewrap (bwrap) is not installed: install bubblewrap "
        "(Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap); with "
        'approval.command "sandboxed" every command asks; gates, preview, install '
        "(sandbox.also) run unsandboxed\n\nyour setup for "
    ) in out


def test_doctor_json_and_a_configured_server(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.yaml").write_text("a: 1\n")
    config = tmp_path / "rein.yaml"
    config.write_text(
        "rein:\n  gates:\n    analyzer:\n      servers:\n"
        "        - {name: yaml, command: [yaml-language-server, --stdio],"
        " extensions: {.yaml: yaml}, install: npm i -g yaml-language-server}\n"
        "        - {name: gopls, enabled: false}\n"
    )
    done = doctor(tmp_path, "--json", "--config", str(config))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    servers = {s["name"]: s for s in report["servers"]}
    assert report["sandbox"]["works"] is False and report["sandbox"]["program"] is None
    assert "bubblewrap (bwrap) is not installed" in report["sandbox"]["whyNot"]
    assert servers["yaml"]["found"] is False and servers["yaml"]["used_here"] is True
    assert servers["yaml"]["install"] == "npm i -g yaml-language-server"
    assert servers["gopls"]["enabled"] == "false" and servers["gopls"]["used_here"] is False


def test_doctor_on_a_folder_that_is_not_there_says_so_and_exits_2(tmp_path: Path) -> None:
    # Defect: it listed every server as "not used here" for a missing folder.
    out = doctor(tmp_path)  # tmp_path / "ws" was never made
    assert out.returncode == 2
    assert out.stderr.strip() == f"rein doctor: {(tmp_path / 'ws').resolve()} is not a folder"
    assert out.stdout == ""


def test_doctor_help_and_readme_name_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    # Defect: both said "exit 0" alone, yet a missing folder or an invalid
    # configuration exits 2 (the test above, docs/user-guide.md).
    with pytest.raises(SystemExit):
        main(["doctor", "--help"])
    assert "Exit 0; 2: ROOT is not a folder or the configuration is invalid" in " ".join(
        capsys.readouterr().out.split()
    )
    readme = (ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `rein doctor"))
    assert "exit 0, 2 when DIR is not a folder or the configuration is invalid" in row


def test_doctor_names_the_model_and_what_it_misses_never_the_key(tmp_path: Path) -> None:
    # Defect: rein doctor said nothing of the model, so a missing key or
    # model name showed only when a run failed.
    (tmp_path / "ws").mkdir()
    config = tmp_path / "rein.yaml"
    config.write_text("rein: {model: {provider: anthropic, apiKeyEnv: E17_KEY}}\n")
    secret = "sk-e17-doctor-0123456789abcdef"
    done = doctor(tmp_path, "--json", "--config", str(config), extra_env={"E17_KEY": secret})
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["model"]
    assert {k: v for k, v in model.items() if k != "problems"} == {
        "provider": "anthropic",
        "model": "",
        "baseUrl": "https://api.anthropic.com",
        "apiKeyEnv": "E17_KEY",
        "apiKeySet": True,
    }
    assert [p.split(":")[0] for p in model["problems"]] == ["the model's name"]
    assert secret not in done.stdout + done.stderr


def test_the_model_line_says_what_a_run_would_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E17_NOT_SET", raising=False)
    monkeypatch.setenv("E17_KEY", "sk-e17-doctor-0123456789abcdef")
    missing = ModelConfig.model_validate({"provider": "anthropic", "apiKeyEnv": "E17_NOT_SET"})
    assert model_line(missing).startswith(
        "model: anthropic (no model name) at https://api.anthropic.com; API key from "
        "E17_NOT_SET (not set); a run fails before any request, missing or wrong: the API key: "
        "the environment variable E17_NOT_SET is not set"
    )
    assert "rein.model.model is empty" in model_line(missing)
    ready = ModelConfig.model_validate(
        {
            "provider": "openai",
            "model": "m1",
            "baseUrl": "http://127.0.0.1:9/v1",
            "apiKeyEnv": "E17_KEY",
        }
    )
    line = "model: openai m1 at http://127.0.0.1:9/v1; API key from E17_KEY (set)"
    assert model_line(ready) == line
    replay = ModelConfig.model_validate({"provider": "replay"})
    assert model_line(replay).endswith(
        "missing or wrong: the replay provider needs rein.model.script (a YAML file)"
    )
