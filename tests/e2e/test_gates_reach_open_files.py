"""The analyzer gate in open-files mode (past
``gates.analyzer.workspaceMaxFiles``) with the real analyzers, headless:
basedpyright checks only the files opened, so a verdict never passes
without looking past them (issue 32). A changed prose file (``.md``,
``.txt``) is no module: it does not stop the gate asking what the change
can reach, and importers past ``gates.analyzer.maxImporters`` are owed to
later rounds, not dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.config import load_config
from rein.hosting.headless import ApproveAll
from tests.e2e.headless_gate import edit_turn, prompt_headless, write_workspace

pytestmark = pytest.mark.e2e

LIB = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
MID = 'from lib import greet\n\n__all__ = ["greet"]\n'
TOP = 'from mid import greet\n\n\ndef welcome() -> str:\n    return greet("visitor")\n'
LOUD = "def greet(name: str, loud: bool) -> str:"


async def test_an_importers_importer_broken_beside_a_changed_markdown_file(
    tmp_path: Path,
) -> None:
    """top.py imports greet through mid.py (the importer opened): with
    CHANGES.md edited too, the reach is still judged and top.py blocks."""
    root = tmp_path / "greeting"
    files = {"lib.py": LIB, "mid.py": MID, "top.py": TOP, "CHANGES.md": "# Changes\n"}
    write_workspace(root, files, project="w")
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    script = [
        edit_turn("CHANGES.md", "# Changes", "# Changes\n\n- greet is loud"),
        edit_turn("lib.py", "def greet(name: str) -> str:", LOUD),
        {"text": "done"},
        edit_turn("lib.py", LOUD, "def greet(name: str, loud: bool = False) -> str:"),
        {"text": "made it optional"},
    ]
    ran = await prompt_headless(root, script, config, "make greet loud")
    assert ran.large
    result, gates = ran.result, ran.analyzer_gates()
    assert gates[0].status == "blocked", gates[0].detail
    assert {b.path for b in gates[0].blockers} == {"top.py"}
    assert result.repair_attempts == 1


async def test_importers_past_the_bound_are_checked_later(tmp_path: Path) -> None:
    """lib.py has two importers, one opened (``maxImporters`` 1), and
    basedpyright's settings changed as well (the reach is not known): fixing the importer
    opened does not pass with the other still broken, and fixing both is
    unverified (the files past the importers were checked by nobody)."""
    root = tmp_path / "w"
    call = "def f{0}() -> str:\n    return greet('{0}')\n"
    imports = "from lib import greet\n\n\n"
    write_workspace(
        root,
        {"lib.py": LIB, "a.py": imports + call.format("a"), "b.py": imports + call.format("b")},
        project="w",
    )
    (root / "pyrightconfig.json").write_text('{"reportMissingModuleSource": "warning"}\n')
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2, "maxImporters": 1}}})
    script = [
        edit_turn("pyrightconfig.json", '"warning"', '"warning", "reportMissingImports": "error"'),
        edit_turn("lib.py", "def greet(name: str) -> str:", LOUD),
        {"text": "done"},
        edit_turn("a.py", "greet('a')", "greet('a', True)"),
        {"text": "fixed a"},
        edit_turn("b.py", "greet('b')", "greet('b', True)"),
        {"text": "fixed b"},
        {"text": "x"},
        {"text": "x"},
    ]
    ran = await prompt_headless(root, script, config, "make greet loud")
    assert ran.large
    gates = ran.analyzer_gates()
    assert gates[0].status == "blocked", gates[0].detail
    # b.py, not opened by the first change, is checked before any pass.
    broken = [i for i, g in enumerate(gates) if "b.py" in {b.path for b in g.blockers}]
    assert broken, [g.detail for g in gates]
    assert all(g.status != "passed" for g in gates[: broken[0]])
    # All fixed, but pyrightconfig.json's reach is not known: never a pass unlooked.
    assert gates[-1].status == "unverified", gates[-1].detail
    assert "what the change can reach is not known" in gates[-1].detail


async def test_a_command_with_a_temporary_file_is_judged_like_an_edit(tmp_path: Path) -> None:
    """A command that writes lib.py's new text to ``lib.py.new`` beside it
    and moves that over lib.py: the temporary file, no file before the run
    nor after, is no change (it made the reach "not known", the verdict
    unverified). As the edit in the first test, top.py blocks, then passes."""
    root = tmp_path / "greeting"
    write_workspace(root, {"lib.py": LIB, "mid.py": MID, "top.py": TOP}, project="w")
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    loud = "s/def greet(name: str)/def greet(name: str, loud: bool)/"
    line = f"sed '{loud}' lib.py > lib.py.new && mv lib.py.new lib.py"
    script = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": line}}]},
        {"text": "done"},
        edit_turn("lib.py", LOUD, "def greet(name: str, loud: bool = False) -> str:"),
        {"text": "made it optional"},
    ]
    ran = await prompt_headless(
        root, script, config, "make greet loud", approver=ApproveAll(), watch=True
    )
    assert ran.large
    result, gates = ran.result, ran.analyzer_gates()
    assert gates[0].status == "blocked", gates[0].detail
    first, second = gates
    assert {b.path for b in first.blockers} == {"top.py"}
    assert result.repair_attempts == 1
    assert (second.status, second.blockers) == ("passed", []), second.detail
