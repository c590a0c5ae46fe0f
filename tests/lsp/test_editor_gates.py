"""The same truth in the editor: `rein serve` (a real subprocess) judging the
run's edits with the editor's diagnostics, from a client whose analyzer
publishes progressively (tests/lsp/progressive.py: the syntax layer at once,
the semantic one 300 ms later, ``pending: true`` in between) and a file with
errors that were there before the run.

How the server knows to wait for the late layer: the coordinator's quiet
period here is 100 ms, shorter than the client's 300 ms delay, so a verdict
taken one quiet period after the first (syntax) publish would miss the new
error. The client's ``rein/diagnostics`` answer says ``pending: true`` until
its last layer is published; the editor's source (EditorDiagnostics) asks
again after each ``rein/diagnosticsChanged`` until it is not pending, then
waits the quiet period. The test itself awaits the run's result, no sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.lsp.conftest import _settings, editing, serve_fixture, write_script
from tests.lsp.progressive import ProgressiveEditor

#: The real server over stdio, real ruff behind the editor's semantic layer.
pytestmark = pytest.mark.e2e

LEGACY = '''"""A module with errors that were there before the run."""


def greet(name: str) -> str:
    return f"hello {name}"


def old_report() -> str:
    return format_report(records)
'''

CLEAN = '''"""A module without errors."""


def greet(name: str) -> str:
    return f"hello {name}"
'''

#: Inserts a line above old_report's pre-existing errors (they move down).
BREAK = {
    "old_string": '    return f"hello {name}"',
    "new_string": ('    greeting = f"hello {nmae}"\n    return greeting'),
}
FIX = {"old_string": "{nmae}", "new_string": "{name}"}


@serve_fixture()
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "legacy.py").write_text(LEGACY)
    (root / "clean.py").write_text(CLEAN)
    ed = ProgressiveEditor(lsp_client, root, delay_s=0.3)
    settings = _settings(tmp_path)
    assert settings["gates"]["analyzer"]["quietPeriodMs"] < ed.delay_s * 1000
    async with editing(ed, settings):
        yield lsp_client


def edit(path: str, change: dict[str, str], **turn: Any) -> dict[str, Any]:
    return {**turn, "tool_calls": [{"name": "edit_file", "arguments": {"path": path, **change}}]}


async def prompt(editor: ProgressiveEditor, text: str) -> dict[str, Any]:
    return await asyncio.wait_for(  # type: ignore[no-any-return]
        editor.client.protocol.send_request_async("rein/prompt", {"text": text}), 60
    )


def analyzer_results(editor: ProgressiveEditor) -> list[dict[str, Any]]:
    return [
        e["event"]
        for e in editor.events
        if e["event"]["type"] == "gate_result" and e["event"]["gate"] == "analyzer"
    ]


def blockers(result: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    return [(b["path"], b["line"], b["source"], b["message"]) for b in result["blockers"]]


async def test_the_late_semantic_error_blocks_and_the_fix_passes(
    editor: ProgressiveEditor, tmp_path: Path
) -> None:
    write_script(
        tmp_path,
        [
            edit("clean.py", BREAK),
            {"text": "done"},
            edit("clean.py", FIX, expect={"last_message_contains": "nmae"}),
            {"text": "fixed"},
        ],
    )
    result = await prompt(editor, "use a local variable in greet")
    assert result["status"] == "completed", result.get("error")
    first, second = analyzer_results(editor)
    # Only the late (semantic) layer has the error: the verdict waited for it.
    assert blockers(first) == [("clean.py", 4, "semantic", "Undefined name `nmae`")]
    assert first["passed"] is False and first["stale"] is False
    assert second["passed"] is True and second["blockers"] == []
    assert (root_text := (editor.root / "clean.py").read_text()) == CLEAN.replace(
        '    return f"hello {name}"', '    greeting = f"hello {name}"\n    return greeting'
    ), root_text


async def test_pre_existing_errors_do_not_block_only_the_new_late_one(
    editor: ProgressiveEditor, tmp_path: Path
) -> None:
    """Without a baseline of legacy.py taken before the change (the old
    code), its two pre-existing errors blocked with the new one."""
    write_script(
        tmp_path,
        [
            edit("legacy.py", BREAK),
            {"text": "done"},
            edit("legacy.py", FIX, expect={"last_message_contains": "nmae"}),
            {"text": "fixed"},
        ],
    )
    result = await prompt(editor, "use a local variable in greet")
    assert result["status"] == "completed", result.get("error")
    # The core asked the editor to open legacy.py before the run changed it.
    assert editor.opened_on_request == ["legacy.py"]
    first, second = analyzer_results(editor)
    assert blockers(first) == [("legacy.py", 4, "semantic", "Undefined name `nmae`")]
    assert second["passed"] is True and second["blockers"] == []
    # The pre-existing errors are still there (moved down one line): not blockers.
    assert sorted(d["message"] for d in editor.published["legacy.py"]) == [
        "Undefined name `format_report`",
        "Undefined name `records`",
    ]


@pytest.mark.parametrize(
    "client_fault",
    [
        pytest.param("missing", id="method-not-found"),
        pytest.param("error", id="client-error"),
    ],
)
async def test_a_client_without_rein_diagnostics_is_unverified_not_passed(
    editor: ProgressiveEditor, tmp_path: Path, client_fault: str
) -> None:
    if client_fault == "missing":
        editor.drop_diagnostics()
        reason = "the client does not answer rein/diagnostics (method not found)"
    else:
        editor.fail_diagnostics("the extension host crashed")
        reason = "the client's rein/diagnostics failed: the extension host crashed"
    write_script(tmp_path, [edit("clean.py", BREAK), {"text": "done"}])
    result = await prompt(editor, "use a local variable in greet")
    assert result["status"] != "failed", result.get("error")  # the run did not crash
    (gate,) = analyzer_results(editor)
    assert gate["blockers"] == []
    assert gate["status"] == "unverified" and gate["passed"] is False
    assert reason in gate["detail"]
