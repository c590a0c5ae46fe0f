"""The tests gate over changes commands made, walked before and after
them (:mod:`rein.testgate.before_commands`): each file is judged against
its text before the run, never the person's edits nor a validated run's."""

from __future__ import annotations

import os
from pathlib import Path

from rein.harness.gating.gate_types import GateContext, GateOutcome
from rein.testgate.gate import TestGate
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import BAD, GOOD, gate_for, project

TESTS = """from mod import first_n


def test_first_two():
    assert first_n([1, 2, 3], 2) == [1, 2]
"""
DATA_TESTS = """from pathlib import Path


def test_table():
    assert (Path(__file__).parent / "table.dat").read_text() == "a,b\\n"
"""


def put(root: Path, ws: FakeWorkspace, rel: str, text: str | None) -> None:
    path = root / rel
    if text is None:
        path.unlink()
        ws.files.pop(rel, None)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))
    ws.files[rel] = text


async def verdict(gate: TestGate, ws: FakeWorkspace, gen: int, *paths: str) -> GateOutcome:
    return await gate.check(GateContext(generation=gen, touched=frozenset(paths), workspace=ws))


async def test_a_command_that_brings_back_what_a_validated_change_fixed_blocks(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p", {"mod.py": BAD, "tests/test_mod.py": TESTS})
    ws = FakeWorkspace({"mod.py": BAD, "tests/test_mod.py": TESTS}, root=str(root))
    gate = gate_for(root)
    # Generation 1: a command (walk: mod.py is BAD), it writes notes.txt.
    await gate.before_change([], ws)
    put(root, ws, "notes.txt", "hello\n")
    assert not (await verdict(gate, ws, 1, "notes.txt")).blockers
    gate.on_validated(1)
    # Generation 2: the model fixes mod.py with a tool edit; no command.
    await gate.before_change(["mod.py"], ws)
    put(root, ws, "mod.py", GOOD)
    fixed = await verdict(gate, ws, 2, "mod.py")
    assert not fixed.blockers and fixed.unverified is None  # test_first_two passes now
    gate.on_validated(2)
    # Generation 3: a command (e.g. `git checkout mod.py`) puts the bug back.
    await gate.before_change([], ws)
    put(root, ws, "mod.py", BAD)
    broke = await verdict(gate, ws, 3, "mod.py")
    # The run broke test_first_two, which passed at the validated state.
    assert [b.message for b in broke.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]


async def test_the_person_s_edit_between_runs_is_not_the_run_s(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"mod.py": BAD, "tests/test_mod.py": TESTS})
    ws = FakeWorkspace({"mod.py": BAD, "tests/test_mod.py": TESTS}, root=str(root))
    gate = gate_for(root)
    await gate.before_change([], ws)  # run 1's command: walk
    put(root, ws, "notes.txt", "x\n")
    await verdict(gate, ws, 1, "notes.txt")
    gate.on_validated(1)
    put(root, ws, "mod.py", GOOD)  # the person fixes mod.py between runs (saved)
    # Run 2: a command, then the model's tool edit breaks mod.py again.
    await gate.before_change([], ws)
    await gate.before_change(["mod.py"], ws)
    put(root, ws, "mod.py", BAD)
    out = await verdict(gate, ws, 2, "mod.py")
    assert gate.prior["mod.py"] == GOOD  # the person's fix is the text before the run
    assert [b.message for b in out.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]


async def test_a_file_a_command_deleted_is_a_change_not_a_temporary_file(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path / "p",
        {"mod.py": GOOD, "tests/test_data.py": DATA_TESTS, "tests/table.dat": "a,b\n"},
    )
    ws = FakeWorkspace({"mod.py": GOOD}, root=str(root))
    gate = gate_for(root)
    await gate.before_change([], ws)  # walk before the command
    (root / "tests" / "table.dat").unlink()  # the command: rm tests/table.dat
    out = await verdict(gate, ws, 1, "tests/table.dat")
    assert out.detail != "nothing changed"
    # Its earlier text is not kept (a .dat): the failing test cannot be judged.
    assert out.unverified is not None and "tests/table.dat" in out.unverified


async def test_a_tool_edit_after_a_command_keeps_the_text_before_the_command(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p", {"mod.py": GOOD, "tests/test_mod.py": TESTS})
    ws = FakeWorkspace({"mod.py": GOOD, "tests/test_mod.py": TESTS}, root=str(root))
    gate = gate_for(root)
    await gate.before_change([], ws)  # walk, then `sed -i` breaks mod.py
    put(root, ws, "mod.py", BAD)
    await gate.before_change(["mod.py"], ws)  # then a tool edit adds a comment
    put(root, ws, "mod.py", BAD + "# note\n")
    out = await verdict(gate, ws, 1, "mod.py")
    assert [b.message for b in out.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]
