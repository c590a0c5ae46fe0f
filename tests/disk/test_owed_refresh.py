"""Files newly owed on a refresh (in process, no analyzer runs).

A server that publishes republishes, after a change it cannot see in a
document (an install, a file created or deleted, its stopped analysis
resumed), only the files whose diagnostics changed: each of its open files
is owed until it publishes for it or the grace period passes, and the
verdict's wait (the pool's ``wait_idle``) does not end before then. A server
that asks for ``workspace/diagnostic/refresh`` has every open file pulled
again, owed until answered. Times: the debt's clock is injected
(:class:`~rein.disk.owed_refresh.OwedRefresh`), and ``idle`` takes its now."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from lsprotocol import types as lsp

from rein.disk.analyzer_client import analyzer_client
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.owed_refresh import ENVIRONMENT_GRACE_S, OwedRefresh
from tests.fakes.lsp_client import RecordingLanguageClient

OPEN = ("a.py", "b.py")


class _Clock:
    """The debt's clock, far ahead of the analyzer's last activity (which
    is read off the real clock): only the debt can keep it busy."""

    def __init__(self) -> None:
        self.now = time.monotonic() + 1000.0

    def __call__(self) -> float:
        return self.now


def _publish(root: Path, path: str) -> dict[str, Any]:
    return {"uri": (root / path).as_uri(), "version": 1, "diagnostics": []}


async def _publishing(root: Path, clock: _Clock | None = None) -> tuple[AnalyzerPool, _Analyzer]:
    """basedpyright's analyzer as a server that publishes (it is not
    pulled), alone in its pool, with ``OPEN`` open and published."""
    for path in OPEN:
        (root / path).write_text("x = 1\n")
    pool = AnalyzerPool(root, [DEFAULT_ANALYZERS[1]], quiet_ms=0)
    await pool.prepare()
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    analyzer.client = cast(Any, RecordingLanguageClient())
    analyzer.alive = True
    if clock is not None:
        analyzer.owed_refresh = OwedRefresh(clock)
    pool.analyzers = [analyzer]
    pool._started.set()
    for path in OPEN:
        analyzer.open(path)
        analyzer.on_publish(_publish(root, path))
    assert analyzer.awaiting == {} and not analyzer.owed_refresh
    return pool, analyzer


async def test_a_refresh_owes_every_open_file_until_it_publishes_for_it(tmp_path: Path) -> None:
    clock = _Clock()
    _, analyzer = await _publishing(tmp_path, clock)
    analyzer.refresh()
    assert analyzer.owed_refresh == set(OPEN)
    until = clock.now + ENVIRONMENT_GRACE_S
    assert analyzer.owed_refresh.until == until
    # Quiet, nothing else owed: only the debt keeps it busy, up to its bound.
    assert not analyzer.idle(0.0, until - 0.001)
    assert analyzer.busy_until(0.0) == until

    analyzer.on_publish(_publish(tmp_path, "a.py"))
    assert analyzer.owed_refresh == {"b.py"}
    assert not analyzer.idle(0.0, until - 0.001)

    analyzer.on_publish(_publish(tmp_path, "b.py"))
    assert not analyzer.owed_refresh
    # Settled at once: long before the bound.
    assert analyzer.idle(0.0, analyzer.last_activity)
    assert analyzer.busy_until(0.0) == analyzer.last_activity


async def test_a_file_still_owed_is_not_waited_for_past_the_bound(tmp_path: Path) -> None:
    clock = _Clock()
    _, analyzer = await _publishing(tmp_path, clock)
    analyzer.refresh(grace_s=2.0)
    until = clock.now + 2.0
    assert not analyzer.idle(0.0, until - 0.001)
    assert analyzer.idle(0.0, until)
    assert analyzer.owed_refresh == set(OPEN)  # never published: the bound ended the wait


async def test_the_verdicts_wait_ends_once_what_is_owed_is_published_or_its_bound_passed(
    tmp_path: Path,
) -> None:
    pool, analyzer = await _publishing(tmp_path)
    analyzer.refresh(grace_s=600.0)
    assert not await pool.wait_idle(0.05)  # owed within its bound: the wait's own bound ends it
    waiting = asyncio.create_task(pool.wait_idle(5.0))
    done, _ = await asyncio.wait({waiting}, timeout=0.05)
    assert not done  # still owed: the wait goes on
    for path in OPEN:
        analyzer.on_publish(_publish(tmp_path, path))
    assert await asyncio.wait_for(waiting, 1.0)  # paid: settled long before the 600 s bound

    analyzer.refresh(grace_s=0.2)
    assert await pool.wait_idle(3.0)
    assert time.monotonic() >= analyzer.owed_refresh.until  # it waited for the bound
    assert analyzer.owed_refresh == set(OPEN)


class _Questions:
    """A pulled server's questions, by file; each answered by the test."""

    def __init__(self) -> None:
        self.asked: dict[str, asyncio.Future[Any]] = {}
        self.all_asked = asyncio.Event()

    def text_document_diagnostic_async(self, params: Any) -> asyncio.Future[Any]:
        path = params.text_document.uri.rsplit("/", 1)[-1]
        self.asked[path] = asyncio.get_running_loop().create_future()
        if set(self.asked) == set(OPEN):
            self.all_asked.set()
        return self.asked[path]


class _Answers:
    """The client's writer: what it sent the server."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def write(self, data: bytes) -> None:
        self.sent.append(json.loads(data.partition(b"\r\n\r\n")[2]))

    def close(self) -> None:
        pass


async def test_a_servers_refresh_request_has_every_open_file_pulled_again_and_owed(
    tmp_path: Path,
) -> None:
    for path in OPEN:
        (tmp_path / path).write_text("x = 1\n")
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    questions = _Questions()
    analyzer.client = cast(Any, questions)
    analyzer.alive = True
    analyzer.pull = True  # it offers pull diagnostics
    analyzer.versions.update({"a.py": 3, "b.py": 1})  # open, nothing owed
    client = analyzer_client(analyzer, analyzer.spec.name)

    answers = _Answers()
    client.protocol.set_writer(answers)

    # The server asks for workspace/diagnostic/refresh; the client answers it.
    asked = {"jsonrpc": "2.0", "id": 7, "method": lsp.WORKSPACE_DIAGNOSTIC_REFRESH}
    client.protocol.handle_message(client.protocol.structure_message(asked))
    assert answers.sent == [{"jsonrpc": "2.0", "id": 7, "result": None}]
    assert analyzer.awaiting == {"a.py": 3, "b.py": 1}
    await asyncio.wait_for(questions.all_asked.wait(), 5)
    far = time.monotonic() + 1000.0
    assert not analyzer.idle(0.0, far) and analyzer.busy_until(0.0) is None

    questions.asked["a.py"].set_result(SimpleNamespace(kind="full", result_id="1", items=[]))
    await asyncio.wait_for(analyzer.pulls.latest["a.py"], 5)
    assert analyzer.awaiting == {"b.py": 1}
    assert not analyzer.idle(0.0, far)

    questions.asked["b.py"].set_result(SimpleNamespace(kind="full", result_id="2", items=[]))
    await asyncio.wait_for(analyzer.pulls.latest["b.py"], 5)
    assert analyzer.awaiting == {}
    assert analyzer.idle(0.0, far)
