"""A first run that says what is missing, and a store another process
holds (issue 30, items 8 and 4), with real ``rein run`` and ``rein
sessions`` processes.

With no key and no model, ``rein run`` stops before any request, naming the
variable and the setting and where the docs are; the public endpoint is
watched through a proxy the environment names (a listening socket that
would see a connection). A ``rein run`` session is listed by its task's
first line. A store whose lock another process holds stops ``rein run`` at
once with a message naming that process, no traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from rein.providers.mock_server import MockServer
from tests.forkserver import REIN
from tests.store.test_store_failures import _locked_by_another_process

pytestmark = pytest.mark.e2e

#: Variables that would give rein run a model, a key or an endpoint.
_SCRUBBED = ("OPENAI_", "ANTHROPIC_", "REIN_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_SCRUBBED)}
    return {**env, **extra}


@contextmanager
def _watched_proxy() -> Iterator[socket.socket]:
    """A listening socket standing in for every HTTP(S) proxy: a request to
    any host (the public endpoint included) would connect to it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener


def _connections(listener: socket.socket) -> int:
    listener.setblocking(False)
    count = 0
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def _rein(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REIN, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_no_key_and_no_model_stops_at_once_and_says_what_to_set(tmp_path: Path) -> None:
    with _watched_proxy() as proxy:
        url = f"http://127.0.0.1:{proxy.getsockname()[1]}"
        env = _clean_env(HTTPS_PROXY=url, HTTP_PROXY=url, ALL_PROXY=url)
        started = time.monotonic()
        out = _rein("run", "fix it", "-w", str(tmp_path), "--storage", str(tmp_path / "s"), env=env)
        took = time.monotonic() - started
        seen = _connections(proxy)
    assert out.returncode == 2, out.stderr
    assert seen == 0  # nothing went to any endpoint
    assert took < 30, took  # no retries, no request timeout
    stderr = out.stderr
    assert "OPENAI_API_KEY" in stderr and "rein.model.apiKeyEnv" in stderr
    assert "rein.model.model" in stderr and "--model" in stderr
    assert "docs/providers.md" in stderr and "No request was sent" in stderr
    assert "Traceback" not in stderr


async def test_a_base_url_without_a_key_sends_nothing_to_it(tmp_path: Path) -> None:
    async with MockServer(scenario=[{"text": "should not be asked"}]) as mock:
        command = [
            *REIN, "run", "fix it", "-w", str(tmp_path), "--base-url", f"{mock.url}/v1",
            "--model", "mock-model", "--storage", str(tmp_path / "s"),
        ]  # fmt: skip
        with anyio.fail_after(60):
            out = await anyio.run_process(command, env=_clean_env(), check=False)
        assert mock.requests == []
    stderr = out.stderr.decode()
    assert out.returncode == 2, stderr
    assert "OPENAI_API_KEY" in stderr and "rein.model.model" not in stderr
    assert "Traceback" not in stderr


def test_rein_sessions_lists_a_rein_run_by_its_task(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - text: done\n")
    storage = tmp_path / "store"
    out = _rein(
        "run", "Rename the helper in app.py\nand update its callers", "-w", str(tmp_path),
        "--provider", "replay", "--script", str(script), "--storage", str(storage),
        env=_clean_env(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    listed = _rein("sessions", "--storage", str(storage), "--json", env=_clean_env())
    [session] = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    assert session["title"] == "Rename the helper in app.py"
    table = _rein("sessions", "--storage", str(storage), env=_clean_env())
    assert table.stdout.splitlines()[0].endswith("checkpoints  Rename the helper in app.py")


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="names holders from /proc/locks")
def test_a_store_locked_by_another_process_stops_rein_run_with_its_name(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - text: done\n")
    storage = tmp_path / "store"
    args = ["-w", str(tmp_path), "--provider", "replay", "--script", str(script)]
    first = _rein("run", "make the store", *args, "--storage", str(storage), env=_clean_env())
    assert first.returncode == 0, first.stderr
    with _locked_by_another_process(storage / "sessions.db") as holder:
        started = time.monotonic()
        out = _rein("run", "again", *args, "--storage", str(storage), env=_clean_env())
        took = time.monotonic() - started
    assert out.returncode == 2, out.stdout + out.stderr
    assert took < 20, took  # was a traceback after 11 s
    assert "Traceback" not in out.stderr
    assert f"locked by another process (pid {holder.pid}" in out.stderr, out.stderr
    assert str(storage / "sessions.db") in out.stderr
