"""``rein mcp list`` and ``rein run --trust-mcp`` as a person runs them: the
real command in a subprocess, with no terminal or with a pseudo-terminal."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from rein.mcp.trust import TRUST_FILE, FileTrustStore, trust_key
from tests.forkserver import REIN
from tests.mcp.conftest import TOOLBOX

_BOUND_S = 60.0


def _rein(*args: str, stdin: Any = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    if args[:2] == ("mcp", "list") and "--start" not in args:
        args = (*args, "--no-start")
    args = tuple(a for a in args if a != "--start")
    return subprocess.run(
        [*REIN, *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=_BOUND_S,
        check=False,
    )


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".vscode").mkdir(parents=True)
    (root / ".vscode" / "mcp.json").write_text(
        '{\n  // the team\'s servers\n  "servers": {\n'
        '    "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},\n'
        '    "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},\n  },\n}\n'
    )
    (root / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"off": {"command": "x", "disabled": True}}})
    )
    config = tmp_path / "rein.json"
    config.write_text(
        json.dumps(
            {
                "rein": {
                    "mcp": {"servers": {"mine": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}
                }
            }
        )
    )
    return root


def test_list_without_a_terminal_skips_the_untrusted_workspace_server(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    storage = tmp_path / "storage"
    done = _rein(
        "mcp",
        "list",
        str(root),
        "--json",
        "--storage",
        str(storage),
        "--config",
        str(tmp_path / "rein.json"),
    )
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert listing["servers"] == [
        {
            "name": "mine",
            "source": "settings",
            "transport": "http",
            "commandLine": "http://127.0.0.1:9/mcp",
            "trusted": True,
            "includeTools": None,
            "excludeTools": [],
            "timeout": 60.0,
        }
    ]
    reasons = {(s["name"], s["source"]): s["reason"] for s in listing["skipped"]}
    assert reasons == {
        ("off", "mcp.json"): "disabled",
        ("old", "vscode"): ".vscode/mcp.json: server 'old': 'type' is \"sse\", which Rein does "
        "not support (use a Streamable HTTP url)",
        ("time", "vscode"): "not trusted: .vscode/mcp.json defines it to run mcp-server-time "
        "--local-timezone UTC (no terminal to ask whether to trust it; run once in a terminal, "
        "or pass --trust-mcp)",
    }
    assert not (storage / TRUST_FILE).exists()


def test_trust_mcp_trusts_for_this_run_only(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    storage = tmp_path / "storage"
    done = _rein("mcp", "list", str(root), "--json", "--storage", str(storage), "--trust-mcp")
    listing = json.loads(done.stdout)
    assert [(s["name"], s["trusted"]) for s in listing["servers"]] == [("time", True)]
    assert not (storage / TRUST_FILE).exists()
    again = json.loads(_rein("mcp", "list", str(root), "--json", "--storage", str(storage)).stdout)
    assert again["servers"] == []


def test_a_server_trusted_before_is_listed_and_a_changed_one_is_not(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    storage = tmp_path / "storage"
    parts = ["stdio", "mcp-server-time", "--local-timezone", "UTC", "", ""]
    FileTrustStore(storage).remember(trust_key(root, "time", "vscode", parts))
    listing = json.loads(
        _rein("mcp", "list", str(root), "--json", "--storage", str(storage)).stdout
    )
    assert [s["name"] for s in listing["servers"]] == ["time"]
    text = (root / ".vscode" / "mcp.json").read_text().replace('"UTC"', '"Europe/Paris"')
    (root / ".vscode" / "mcp.json").write_text(text)
    listing = json.loads(
        _rein("mcp", "list", str(root), "--json", "--storage", str(storage)).stdout
    )
    assert listing["servers"] == []


def test_an_invalid_file_is_reported_with_its_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        '{\n  "mcpServers": {\n    "a": {"command": "x",}\n    "b": 1\n}\n'
    )
    done = _rein("mcp", "list", str(tmp_path), "--storage", str(tmp_path / "st"))
    assert done.returncode == 1
    assert "error: .mcp.json: not valid JSON: line 4 column 5" in done.stdout


def test_nothing_configured_says_so(tmp_path: Path) -> None:
    done = _rein("mcp", "list", str(tmp_path), "--storage", str(tmp_path / "st"))
    assert (done.returncode, done.stdout) == (0, "no MCP servers configured\n")


def test_help_says_yes_does_not_trust_mcp_servers() -> None:
    text = " ".join(_rein("run", "--help").stdout.split())
    assert "it does not trust the workspace's MCP servers: see --trust-mcp" in text
    assert "--trust-mcp trust the MCP servers the workspace defines" in text


def _read_until(fd: int, needle: bytes) -> bytes:
    """Read ``fd`` until ``needle`` appears (bounded; no sleeps)."""
    seen = b""
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + _BOUND_S
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"never saw {needle!r}; got {seen!r}"
        if selector.select(left):
            chunk = os.read(fd, 4096)
            assert chunk, f"end of output before {needle!r}; got {seen!r}"
            seen += chunk
    selector.close()
    return seen


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize(
    ("answer", "listed"),
    [pytest.param(b"y\n", True, id="yes"), pytest.param(b"\n", False, id="no")],
)
def test_at_a_terminal_trust_is_asked_and_a_yes_remembered(
    tmp_path: Path, answer: bytes, listed: bool
) -> None:
    root = _workspace(tmp_path)
    storage = tmp_path / "storage"
    primary, secondary = os.openpty()
    proc = subprocess.Popen(
        [
            *REIN,
            "mcp",
            "list",
            str(root),
            "--json",
            "--storage",
            str(storage),
        ],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(secondary)
    try:
        assert proc.stderr is not None
        asked = _read_until(proc.stderr.fileno(), b"Trust it and start it? [y/N] ")
        assert (
            b"defines the MCP server 'time', which runs:\n  mcp-server-time --local-timezone UTC"
            in asked
        )
        os.write(primary, answer)
        out, _ = proc.communicate(timeout=_BOUND_S)
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()
    names = [s["name"] for s in json.loads(out)["servers"]]
    assert names == ["time"] if listed else names == []
    # Remembered: without a terminal the next listing has it (or still not).
    again = json.loads(_rein("mcp", "list", str(root), "--json", "--storage", str(storage)).stdout)
    assert [s["name"] for s in again["servers"]] == (["time"] if listed else [])


def test_list_starts_each_server_once_and_shows_its_tools_and_state(tmp_path: Path) -> None:
    config = tmp_path / "rein.json"
    servers = {
        "box": {"command": sys.executable, "args": [str(TOOLBOX)], "excludeTools": ["crash"]},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
        "broken": {"command": str(tmp_path / "no-such-program")},
    }
    config.write_text(json.dumps({"rein": {"mcp": {"servers": servers}}}))
    args = (
        "mcp",
        "list",
        str(tmp_path),
        "--storage",
        str(tmp_path / "st"),
        "--config",
        str(config),
    )
    done = _rein(*args, "--json", "--start")
    assert done.returncode == 1, done.stderr  # one failed to start
    by_name = {s["name"]: s for s in json.loads(done.stdout)["servers"]}
    assert by_name["box"]["state"] == "running"
    assert "echo" in by_name["box"]["tools"] and "crash" not in by_name["box"]["tools"]
    assert by_name["time"]["state"] == "running"
    assert sorted(by_name["time"]["tools"]) == ["convert_time", "get_current_time"]
    assert by_name["broken"]["state"] == "failed"
    assert by_name["broken"]["tools"] == [] and by_name["broken"]["error"]
    listed = _rein(*args, "--start")
    text = listed.stdout
    assert "time  [settings, stdio]  running, 2 tools: " in text
    [row] = [line for line in text.splitlines() if line.startswith("broken  ")]
    # The failure's first line and the command on its row (its stderr's
    # tail, if any, indented under it), said once: not again by the log.
    assert row.startswith("broken  [settings, stdio]  failed: ")
    assert row.endswith(f"  {tmp_path / 'no-such-program'}")
    assert "failed to start" not in listed.stderr, listed.stderr


def _marking_workspace(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "run-ws"
    root.mkdir()
    marker = tmp_path / "marker"
    code = (
        "import pathlib, runpy, sys; pathlib.Path(sys.argv[1]).write_text('ran'); "
        f"sys.argv = [{str(TOOLBOX)!r}]; runpy.run_path({str(TOOLBOX)!r}, run_name='__main__')"
    )
    server = {"command": sys.executable, "args": ["-c", code, str(marker)]}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"box": server}}))
    return root, marker


@pytest.mark.parametrize(
    ("flags", "runs"),
    [
        pytest.param(("--yes",), False, id="yes-does-not-trust"),
        pytest.param(("--trust-mcp",), True, id="trust-mcp"),
    ],
)
def test_rein_run_without_a_terminal_runs_a_workspace_server_only_with_trust_mcp(
    tmp_path: Path, flags: tuple[str, ...], runs: bool
) -> None:
    root, marker = _marking_workspace(tmp_path)
    expect = {"tools_include" if runs else "tools_exclude": ["mcp__box__echo"]}
    (tmp_path / "script.yaml").write_text(json.dumps([{"expect": expect, "text": "done"}]))
    done = _rein(
        "run",
        "look around",
        "-w",
        str(root),
        "--provider",
        "replay",
        "--script",
        str(tmp_path / "script.yaml"),
        "--storage",
        str(tmp_path / "st"),
        *flags,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.exists() is runs
    assert not (tmp_path / "st" / TRUST_FILE).exists()  # --trust-mcp is not remembered


def test_list_starts_a_stdio_server_in_the_sandbox_when_also_names_mcp(tmp_path: Path) -> None:
    """``sandbox.also: ["mcp"]``: the listing starts the server as a session
    does, sandboxed: it runs, and what it writes outside the workspace is
    refused."""
    outside = Path(tempfile.mkdtemp(prefix="rein-outside-", dir="/var/tmp"))
    try:
        # The server's script in the workspace: a checkout under /tmp (as
        # CI's) is not seen inside the sandbox (its /tmp is private).
        toolbox = tmp_path / TOOLBOX.name
        shutil.copyfile(TOOLBOX, toolbox)
        code = (
            "import pathlib, runpy, sys\ntry:\n    pathlib.Path(sys.argv[1]).write_text('x')\n"
            "except OSError:\n    pass\n"
            f"sys.argv = [{str(toolbox)!r}]; runpy.run_path({str(toolbox)!r}, run_name='__main__')"
        )
        server = {"command": sys.executable, "args": ["-c", code, str(outside / "marker")]}
        config = tmp_path / "rein.json"
        config.write_text(
            json.dumps(
                {"rein": {"sandbox": {"also": ["mcp"]}, "mcp": {"servers": {"box": server}}}}
            )
        )
        args = ("mcp", "list", str(tmp_path), "--storage", str(tmp_path / "st"))
        done = _rein(*args, "--config", str(config), "--json", "--start")
        assert done.returncode == 0, done.stderr
        [box] = json.loads(done.stdout)["servers"]
        assert box["state"] == "running" and "echo" in box["tools"], box
        assert os.listdir(outside) == []
    finally:
        shutil.rmtree(outside)


def test_a_server_that_fails_to_start_or_crashes_is_said_once(tmp_path: Path) -> None:
    # Defect: rein run printed a failure twice (the event's line, cut at
    # its first line, then the log's warning with the server's stderr), and
    # a crash twice (the log's "crashed ...; restarting it", then the line).
    root = tmp_path / "ws"
    root.mkdir()
    servers = {
        "db": {"command": "bash", "args": ["-c", "echo NO-DATABASE-URL >&2; exit 3"]},
        "box": {"command": sys.executable, "args": [str(TOOLBOX)]},
    }
    rein = {"mcp": {"servers": servers}, "gates": {"analyzer": {"enabled": False}}}
    config = tmp_path / "rein.json"
    config.write_text(json.dumps({"rein": rein}))
    crash = {"tool_calls": [{"name": "mcp__box__crash", "arguments": {}}]}
    (tmp_path / "script.yaml").write_text(json.dumps([crash, {"text": "done"}]))
    done = _rein(
        "run", "go", "-w", str(root), "--provider", "replay",
        "--script", str(tmp_path / "script.yaml"), "--storage", str(tmp_path / "st"),
        "--config", str(config), "--yes",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert out.count("MCP server db failed") == 1, out
    assert out.count("NO-DATABASE-URL") == 1, out
    lines = done.stdout.splitlines()
    at = lines.index("  ⧉ MCP server db failed: MCPError: Connection closed; its stderr ends with:")
    assert lines[at + 1] == "      NO-DATABASE-URL"
    assert out.count("crashed") == 1, out
    assert (
        "  ⧉ MCP server box failed: crashed: its output ended (it exited or closed its stdout); "
        "restarting it"
    ) in lines
