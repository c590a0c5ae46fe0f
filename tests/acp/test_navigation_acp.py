"""``find_references`` through the real ``rein acp`` with an editor (the
fake ACP client) connected: answered by the basedpyright of Rein's
analyzer pool, following an import alias, on the text of the editor's
unsaved buffer rather than the disk's."""

from __future__ import annotations

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
    started,
    tool_turn,
)

pytestmark = pytest.mark.e2e

CORE = "def f(x: int) -> int:\n    return x + 1\n"
UNSAVED = CORE + "\n\nLATE = f(5)\n"
USE = "from pkg.core import f as g\n\n\ndef h() -> int:\n    return g(3)\n"


async def test_find_references_over_acp_follows_an_alias_in_the_editors_buffers(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text(CORE)
    (root / "pkg/use.py").write_text(USE)
    expected = (
        "5 references to `f` in 2 files (basedpyright):\n"
        "pkg/core.py\n  1:5: def f(x: int) -> int:\n  5:8: LATE = f(5)\n"
        "pkg/use.py\n  1:22: from pkg.core import f as g\n"
        "  1:27: from pkg.core import f as g (as g)\n  5:12: return g(3) (as g)"
    )
    await load_scenario(
        mock,
        "navigation",
        [
            tool_turn(
                call("find_references", path="pkg/core.py", line=1, symbol="f"),
                expect={"tools_include": ["find_references", "rename_symbol"]},
            ),
            {"expect": {"last_message_contains": expected}, "text": "f is used twice."},
        ],
    )
    async with started(root, home) as (agent, sid):
        agent.editor.open(root / "pkg/core.py", UNSAVED)  # typed, not saved
        with anyio.fail_after(REQUEST_S):
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("where is f?")])
        calls = list(agent.editor.tool_calls(sid).values())
    assert answer.stop_reason == "end_turn"
    found = [c for c in calls if c.get("title") == "Find references"]
    assert [(c["kind"], c["status"]) for c in found] == [("search", "completed")], calls
    assert "LATE = f(5)" in str(found[0].get("content"))
    # The places found are the call's locations, which the client follows.
    places = [(loc["path"], loc["line"]) for loc in found[0]["locations"]]
    core, use = str((root / "pkg/core.py").resolve()), str((root / "pkg/use.py").resolve())
    assert places == [(core, 1), (core, 5), (use, 1), (use, 1), (use, 5)]
    assert (root / "pkg/core.py").read_text() == CORE
    await assert_used_up(mock)
