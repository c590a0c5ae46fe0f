"""``find_references`` through the real ``rein acp`` with an editor (the
fake ACP client) connected: answered by the basedpyright of Rein's
analyzer pool, following an import alias, on the text of the editor's
unsaved buffer rather than the disk's; ``rename_symbol`` then renames
across three files into the editor's buffers as ONE change (one
generation)."""

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
PLAIN = "from pkg.core import f\n\nprint(f(1))\n"


async def test_find_references_over_acp_follows_an_alias_in_the_editors_buffers(
    tmp_path: Path, home: Home, mock: MockServer
) -> None:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text(CORE)
    (root / "pkg/use.py").write_text(USE)
    (root / "pkg/plain.py").write_text(PLAIN)
    expected = (
        "7 references to `f` in 3 files (basedpyright):\n"
        "pkg/core.py\n  1:5: def f(x: int) -> int:\n  5:8: LATE = f(5)\n"
        "pkg/plain.py\n  1:22: from pkg.core import f\n  3:7: print(f(1))\n"
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
            tool_turn(
                call("rename_symbol", path="pkg/core.py", line=1, symbol="f", new_name="inc"),
                expect={"last_message_contains": expected},
            ),
            {
                "expect": {
                    "last_message_contains": "Renamed `f` to `inc`: 5 edits in 3 files:",
                    "messages_contain": ["from pkg.core import inc as g\n(one change: generation "],
                },
                "text": "Renamed.",
            },
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
    plain = str((root / "pkg/plain.py").resolve())
    assert places == [(core, 1), (core, 5), (plain, 1), (plain, 3), (use, 1), (use, 1), (use, 5)]
    # The rename went into the editor's buffers (core.py's unsaved text with
    # it), one file after the other, as one change.
    assert agent.editor.text(root / "pkg/core.py") == UNSAVED.replace("f(", "inc(")
    assert agent.editor.text(root / "pkg/use.py") == USE.replace("import f as", "import inc as")
    assert agent.editor.text(root / "pkg/plain.py") == PLAIN.replace("f(", "inc(").replace(
        "t f", "t inc"
    )
    renamed = [c for c in calls if c.get("title") == "Rename symbol"]
    assert [(c["kind"], c["status"]) for c in renamed] == [("edit", "completed")], calls
    await assert_used_up(mock)
