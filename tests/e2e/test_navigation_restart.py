"""A navigation question right after the real clangd crashed: the pool
restarts it after a backoff, and the question waits for that (at most the
request bound) instead of answering "clangd is not running: it is
restarting. Use grep and read_file instead." while it comes back."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.config import load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.analyzer_servers import PRESETS
from rein.harness.navigation_ports import Position

pytestmark = pytest.mark.e2e


async def test_a_question_waits_for_a_crashed_server_restarting(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "util.c").write_text("int util_sum(int a, int b) { return a + b; }\n")
    (root / "main.c").write_text(
        "int util_sum(int a, int b);\nint main(void) { return util_sum(1, 2); }\n"
    )
    servers = [{"name": p.name, "enabled": p.name == "clangd"} for p in PRESETS]
    config = load_config({"gates": {"analyzer": {"servers": servers}}}).gates.analyzer
    (spec,) = workspace_specs(root, config)
    pool = AnalyzerPool(root, [spec])
    await pool.start()
    try:
        navigator = PoolNavigator(pool, index_wait_s=10)
        (clangd,) = pool.analyzers
        assert len(await navigator.references("util.c", Position(0, 4))) == 3
        crashed = anyio.Event()
        original = pool.analyzer_exited

        async def exited(analyzer: Any, code: int | None) -> None:
            await original(analyzer, code)
            crashed.set()

        pool.analyzer_exited = exited  # type: ignore[method-assign]
        assert clangd.client is not None and clangd.client._server is not None
        os.kill(clangd.client._server.pid, signal.SIGKILL)
        with anyio.fail_after(30):
            await crashed.wait()
        # The crash is handled; the restart waits out its backoff.
        assert not clangd.alive and clangd.failure is None
        found = await navigator.references("util.c", Position(0, 4))
        assert sorted((f.path, f.range.start.line) for f in found) == [
            ("main.c", 0),
            ("main.c", 1),
            ("util.c", 0),
        ]
    finally:
        await pool.stop()
