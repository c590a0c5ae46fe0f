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
from rein.hosting.headless import ApproveAll, HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

LIB = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'
MID = 'from lib import greet\n\n__all__ = ["greet"]\n'
TOP = 'from mid import greet\n\n\ndef welcome() -> str:\n    return greet("visitor")\n'
LOUD = "def greet(name: str, loud: bool) -> str:"


def edit(path: str, old: str, new: str) -> dict:
    args = {"path": path, "old_string": old, "new_string": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": args}]}


def workspace(root: Path, files: dict[str, str]) -> None:
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0.1.0"\n')
    for path, text in files.items():
        (root / path).write_text(text)


async def test_an_importers_importer_broken_beside_a_changed_markdown_file(
    tmp_path: Path,
) -> None:
    """top.py imports greet through mid.py (the importer opened): with
    CHANGES.md edited too, the reach is still judged and top.py blocks."""
    root = tmp_path / "greeting"
    workspace(root, {"lib.py": LIB, "mid.py": MID, "top.py": TOP, "CHANGES.md": "# Changes\n"})
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    script = [
        edit("CHANGES.md", "# Changes", "# Changes\n\n- greet is loud"),
        edit("lib.py", "def greet(name: str) -> str:", LOUD),
        {"text": "done"},
        edit("lib.py", LOUD, "def greet(name: str, loud: bool = False) -> str:"),
        {"text": "made it optional"},
    ]
    events = EventLog()
    async with HeadlessSession(root, ReplayModel(script), config, watch=False) as session:
        session.agent.subscribe(events)
        assert session.pool.large
        await session.analyzers_started()
        result = await session.prompt("make greet loud")
    gates = [r for r in events.of("gate_result") if r.gate == "analyzer"]
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
    workspace(
        root,
        {"lib.py": LIB, "a.py": imports + call.format("a"), "b.py": imports + call.format("b")},
    )
    (root / "pyrightconfig.json").write_text('{"reportMissingModuleSource": "warning"}\n')
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2, "maxImporters": 1}}})
    script = [
        edit("pyrightconfig.json", '"warning"', '"warning", "reportMissingImports": "error"'),
        edit("lib.py", "def greet(name: str) -> str:", LOUD),
        {"text": "done"},
        edit("a.py", "greet('a')", "greet('a', True)"),
        {"text": "fixed a"},
        edit("b.py", "greet('b')", "greet('b', True)"),
        {"text": "fixed b"},
        {"text": "x"},
        {"text": "x"},
    ]
    events = EventLog()
    async with HeadlessSession(root, ReplayModel(script), config, watch=False) as session:
        session.agent.subscribe(events)
        assert session.pool.large
        await session.analyzers_started()
        await session.prompt("make greet loud")
    gates = [r for r in events.of("gate_result") if r.gate == "analyzer"]
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
    workspace(root, {"lib.py": LIB, "mid.py": MID, "top.py": TOP})
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    loud = "s/def greet(name: str)/def greet(name: str, loud: bool)/"
    line = f"sed '{loud}' lib.py > lib.py.new && mv lib.py.new lib.py"
    script = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": line}}]},
        {"text": "done"},
        edit("lib.py", LOUD, "def greet(name: str, loud: bool = False) -> str:"),
        {"text": "made it optional"},
    ]
    events = EventLog()
    async with HeadlessSession(root, ReplayModel(script), config, approver=ApproveAll()) as session:
        session.agent.subscribe(events)
        assert session.pool.large
        await session.analyzers_started()
        result = await session.prompt("make greet loud")
    gates = [r for r in events.of("gate_result") if r.gate == "analyzer"]
    assert gates[0].status == "blocked", gates[0].detail
    first, second = gates
    assert {b.path for b in first.blockers} == {"top.py"}
    assert result.repair_attempts == 1
    assert (second.status, second.blockers) == ("passed", []), second.detail
