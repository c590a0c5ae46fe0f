"""The navigation tools over the real ``rein run`` (a subprocess; its model
an ``openai`` provider talking HTTP to ``rein mock-server``), answered by
the basedpyright the analyzer gate runs: ``find_references`` finds a use
under an import alias that ``grep -w f`` cannot, ``rename_symbol`` renames
across three files as one change (one generation), and the analyzer gate
then judges the rename: one that breaks a caller is blocked and repaired
like an edit; an edit of a signature names the references in its result."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import mock_server
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

FILES = {
    "pkg/__init__.py": "",
    # k's parameter is named like the new name: the rename breaks k's call.
    "pkg/core.py": (
        "def f(x: int) -> int:\n    return x + 1\n\n\ndef k(inc: int) -> int:\n    return f(inc)\n"
    ),
    "pkg/use.py": "from pkg.core import f as g\n\n\ndef h() -> int:\n    return g(3)\n",
    "pkg/plain.py": "from pkg.core import f\n\nprint(f(1))\n",
}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


SCENARIO: list[dict[str, Any]] = [
    {
        "expect": {"tools_include": ["find_references", "rename_symbol", "hover"]},
        **call("find_references", path="pkg/core.py", line=1, symbol="f"),
    },
    {
        # The alias's use, which `grep -w f` does not find, with the others.
        "expect": {
            "last_message_contains": (
                "7 references to `f` in 3 files (basedpyright):\n"
                "pkg/core.py\n  1:5: def f(x: int) -> int:\n  6:12: return f(inc)\n"
                "pkg/plain.py\n  1:22: from pkg.core import f\n  3:7: print(f(1))\n"
                "pkg/use.py\n  1:22: from pkg.core import f as g\n"
                "  1:27: from pkg.core import f as g (as g)\n  5:12: return g(3) (as g)"
            )
        },
        **call("rename_symbol", path="pkg/core.py", line=1, symbol="f", new_name="inc"),
    },
    {
        # Three files, ONE change (one mutation generation).
        "expect": {
            "last_message_contains": "Renamed `f` to `inc`: 5 edits in 3 files:",
            "messages_contain": ["from pkg.core import inc as g\n(one change: generation "],
        },
        "text": "Renamed f to inc.",
    },
    # The analyzer gate: `inc(inc)` calls the int parameter.
    {
        "expect": {"messages_contain": ["is not callable"]},
        **call(
            "edit_file",
            path="pkg/core.py",
            old_string="def k(inc: int) -> int:\n    return inc(inc)",
            new_string="def k(n: int) -> int:\n    return inc(n)",
        ),
    },
    # An edit of inc's signature names its callers in its result.
    {
        "expect": {"last_message_contains": "Edited pkg/core.py"},
        **call(
            "edit_file",
            path="pkg/core.py",
            old_string="def inc(x: int) -> int:",
            new_string="def inc(x: int, y: int = 0) -> int:",
        ),
    },
    {
        "expect": {"last_message_contains": "`inc`'s signature changed; 4 references: "},
        "text": "Renamed f to inc and fixed k.",
    },
]


def test_references_follow_an_alias_and_a_rename_is_gated_like_an_edit(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    for rel, text in FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    config = tmp_path / "rein.json"
    config.write_text(json.dumps({"model": {"apiKeyEnv": ""}, "approval": {"write": "allow"}}))
    with mock_server(tmp_path, "navigation", SCENARIO) as url:
        out = subprocess.run(
            [*REIN, "run", "Rename f to inc", "-w", str(project),
             "--provider", "openai", "--base-url", url + "/v1", "--model", "mock-model",
             "--config", str(config), "--storage", str(tmp_path / "storage")],
            capture_output=True,
            text=True,
            timeout=180,
        )  # fmt: skip
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert (project / "pkg/core.py").read_text() == (
        "def inc(x: int, y: int = 0) -> int:\n    return x + 1\n\n\n"
        "def k(n: int) -> int:\n    return inc(n)\n"
    )
    assert (project / "pkg/use.py").read_text() == FILES["pkg/use.py"].replace(
        "import f as", "import inc as"
    )
    assert (project / "pkg/plain.py").read_text() == "from pkg.core import inc\n\nprint(inc(1))\n"
    assert "Renamed f to inc and fixed k." in out.stdout
