"""A wait on the analyzers past a second is the editor's own progress
(issue 32 item 7): the real ``rein serve`` over stdio, its editor
(tests.fakes.Editor, declaring ``window.workDoneProgress``) slow to answer
``rein/diagnostics`` at run start. The model is asked at once; its first
change waits for the run-start baseline, and the editor is shown that wait
(``window/workDoneProgress/create``, ``$/progress`` begin, then end)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.fakes.editor import Editor
from tests.lsp.conftest import _settings, editing, serve_fixture, write_script

#: The real server over stdio.
pytestmark = pytest.mark.e2e

BASELINE = "the analyzers: the workspace baseline"


class _Reports(list[Any]):
    """A token's progress reports, telling the test when one arrives."""

    def __init__(self, arrived: asyncio.Event) -> None:
        super().__init__()
        self.arrived = arrived

    def append(self, value: Any) -> None:
        super().append(value)
        self.arrived.set()


class _ProgressReports(dict[Any, list[Any]]):
    """The client's ``progress_reports``, each token's list a :class:`_Reports`."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    def setdefault(self, key: Any, default: Any = None) -> list[Any]:
        if key not in self:
            self[key] = _Reports(self.arrived)
        return self[key]


@serve_fixture()
async def client(
    lsp_client: LanguageClient, workspace: Path, tmp_path: Path
) -> AsyncIterator[LanguageClient]:
    settings = _settings(tmp_path)
    editor = Editor(lsp_client, workspace)
    # Its analyzer finds nothing in the file the run writes and says so at
    # once: the change's own wait ends then, not after maxWaitMs (5 s).
    editor.finds_nothing = True
    async with editing(editor, settings, initialization_options={"model": settings["model"]}):
        yield lsp_client


async def _begun(reports: _ProgressReports, limit_s: float = 20.0) -> str:
    """The token of the first progress that has begun (bounded)."""

    async def find() -> str:
        while True:
            for token, values in reports.items():
                if any(isinstance(v, lsp.WorkDoneProgressBegin) for v in values):
                    return str(token)
            reports.arrived.clear()
            await reports.arrived.wait()

    return await asyncio.wait_for(find(), limit_s)


async def test_a_slow_baseline_is_shown_as_work_done_progress(
    client: LanguageClient, tmp_path: Path
) -> None:
    editor: Editor = client.editor  # type: ignore[attr-defined]
    reports = _ProgressReports()
    client.progress_reports = reports
    release = editor.slow["rein/diagnostics"] = asyncio.Event()
    write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "app.py", "content": ""}}
                ]
            },
            {"text": "done"},
        ],
    )
    run = asyncio.ensure_future(client.protocol.send_request_async("rein/prompt", {"text": "go"}))
    try:
        # The baseline's rein/diagnostics is not answered until the editor
        # has been shown the wait.
        token = await _begun(reports)
    finally:
        release.set()
    result: dict[str, Any] = await asyncio.wait_for(run, 30)
    assert result["status"] == "completed", result
    assert editor.held["rein/diagnostics"] >= 1
    assert token.startswith("rein/wait/")
    values = reports[token]
    assert [type(v) for v in values] == [lsp.WorkDoneProgressBegin, lsp.WorkDoneProgressEnd]
    begin, end = values
    assert isinstance(begin, lsp.WorkDoneProgressBegin)
    assert begin.title == "Rein" and begin.message == f"waiting for {BASELINE}"
    assert isinstance(end, lsp.WorkDoneProgressEnd) and end.message == f"done: {BASELINE}"
    # One wait, one progress: no other token was created.
    assert list(reports) == [token]
    # The model was asked before the wait began; the change waited for it.
    kinds = [e["event"]["type"] for e in editor.events]
    waits = [i for i, k in enumerate(kinds) if k == "gate_waiting"]
    assert len(waits) == 2
    assert kinds.index("turn_start") < waits[0] < waits[1] < kinds.index("tool_call_end")
