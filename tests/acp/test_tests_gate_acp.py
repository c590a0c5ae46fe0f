"""The tests gate over a real ``rein acp``: the client holds the module in
an unsaved buffer (``fs/read_text_file`` answers from it), the run's edit
goes to the client (``fs/write_text_file``), and the gate runs the tests on
the client's text, written to a shadow copy, never to the disk behind the
editor. The edit breaks one test: the gate blocks on exactly that test, the
repair passes."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from acp.helpers import text_block

from rein.providers.mock_server import MockServer
from tests.acp.conftest import (
    REQUEST_S,
    Home,
    assert_used_up,
    call,
    load_scenario,
    rein_config,
    started,
    tool_turn,
    write_config,
)

pytestmark = pytest.mark.e2e

CALC = "def add(a, b):\n    return a + b\n"
#: The person's typing in the client's buffer, not saved.
TYPED = "\n\ndef triple(x):\n    return 3 * x\n"
TESTS = """from calc import add, triple


def test_add():
    assert add(2, 3) == 5


def test_triple():
    assert triple(2) == 6
"""


def edit(old: str, new: str) -> dict[str, object]:
    return call("edit_file", path="calc.py", old_string=old, new_string=new)


async def test_the_tests_judge_the_client_s_buffer_block_on_the_broken_test_and_repair_passes(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    write_config(
        home.config_file, rein_config(home.path, mock.url, gates={"analyzer": {"enabled": False}})
    )
    await load_scenario(
        mock,
        "tests-repair",
        [
            tool_turn(edit("return a + b", "return a - b")),
            {"text": "done"},
            tool_turn(
                edit("return a - b", "return b + a"),
                expect={"last_message_contains": "tests/test_calc.py::test_add failed"},
            ),
            {"text": "fixed add"},
        ],
    )
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # the tiny project's pytest, bare
    async with started(root, home, env=env) as (agent, sid):
        editor = agent.editor
        # test_triple passes only on the buffer: triple() is not on disk.
        editor.open(root / "calc.py", CALC + TYPED)
        with anyio.fail_after(REQUEST_S):
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("subtract")])

    assert answer.stop_reason == "end_turn"
    checks = [c for c in editor.tool_calls(sid).values() if c.get("title") == "Check: tests"]
    assert [c["status"] for c in checks] == ["failed", "completed"]
    blocked = json.dumps(checks[0]["content"])
    assert "tests/test_calc.py::test_add failed: assert -1 == 5" in blocked
    assert "test_triple" not in blocked
    passed = json.dumps(checks[1]["content"])
    # The repair changed add again (not back to its text before the run,
    # which would run no test): the test that ran it at the first verdict
    # runs again (selected by what it ran).
    assert "1 of 1 tests passed" in passed, passed
    assert "selected by coverage: 1 tests ran a changed function (calc.py:add)" in passed, passed
    # The client's buffer holds the repair over the person's typing; the
    # disk behind the editor was never written.
    repaired = CALC.replace("a + b", "b + a") + TYPED
    assert editor.buffers[str(root / "calc.py")] == repaired
    assert (root / "calc.py").read_text() == CALC
    writes = [p["content"] for m, p in editor.calls if m == "fs/write_text_file"]
    assert writes == [CALC.replace("a + b", "a - b") + TYPED, repaired]
    await assert_used_up(mock)
