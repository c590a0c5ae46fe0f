"""The per-test choice parses each text once and keeps what it made of it
by the text: the picks are the same as without anything kept, a changed
text is never answered from an earlier one's, and a changed module read
while the model talks costs the verdict no parse."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from rein.harness.ports import Mutation
from rein.testgate import ahead as ahead_module
from rein.testgate import by_name, file_model, import_graph
from rein.testgate.parses import Parses
from rein.testgate.picking import Picker
from rein.testgate.recorder import RawCoverage
from rein.testgate.selection import TestSelection, select_tests
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, counted_parses, gate_for, project

MOD = (
    "import os\n\nLIMIT = 3\n\n\n"  # 1-5
    "def f(x):\n    return x + 1\n\n\n"  # 6-9
    "def g(x):\n    return x * 2\n\n\n"  # 10-13
    "class C:\n    size = 1\n\n    def h(self):\n        return LIMIT\n"  # 14-18
)
HELP = "from mod import g\n\n\ndef twice(x):\n    return g(g(x))\n"
T = "tests/test_m.py"
TESTS = (
    "from help import twice\nfrom mod import C, f\n\n\n"
    "def test_f():\n    assert f(1) == 2\n\n\n"
    "def test_twice():\n    assert twice(1) == 4\n\n\n"
    "def test_h():\n    assert C().h() == 3\n"
)
SELECTION = TestSelection((T,), False, "imports", modules=("mod.py", "help.py"), total_files=3)


def _record() -> RawCoverage:
    """What a run of the three tests ran (the functions' first lines)."""
    return RawCoverage(
        tests={
            f"{T}::test_f": frozenset({("mod.py", 6)}),
            f"{T}::test_twice": frozenset({("help.py", 4), ("mod.py", 10)}),
            f"{T}::test_h": frozenset({("mod.py", 17)}),
        },
        collected={T: (f"{T}::test_f", f"{T}::test_twice", f"{T}::test_h")},
        files=("mod.py", "help.py", T),
    )


def test_the_picks_are_the_same_with_and_without_anything_kept(tmp_path: Path) -> None:
    root = project(tmp_path, {"mod.py": MOD, "help.py": HELP, T: TESTS})
    kept, fresh = Picker(root), Picker(root, Parses(enabled=False))
    seeded = MOD.replace("x + 1", "x + 2")
    steps: list[tuple[str, str | None]] = [
        ("mod.py", seeded),  # no record yet: by the names
        ("record", None),
        ("mod.py", MOD.replace("x * 2", "x * 3")),  # by coverage
        ("mod.py", MOD),  # the edit undone
        ("mod.py", MOD.replace("LIMIT = 3", "LIMIT = 4")),  # module level: by the names
        ("mod.py", MOD.replace("def g(x):", "def g(x)")),  # a syntax error
        ("mod.py", None),  # the file deleted
        ("help.py", HELP.replace("g(g(x))", "g(x)")),  # another module, mod.py as before
        ("mod.py", seeded),  # the first text again
        ("mod.py", seeded.replace("LIMIT = 3", "LIMIT = 5")),
    ]
    notes = []
    for path, now in steps:
        if path == "record":
            for picker in (kept, fresh):
                picker.record(_record(), {"mod.py": MOD, "help.py": HELP, T: TESTS})
            continue
        before = (root / path).read_text()
        texts = {path: (before, now)}
        # As on disk while the model talks: the kept picker reads it then.
        file = root / path
        file.unlink() if now is None else file.write_text(now)
        kept.prepare(texts)
        picked = kept.pick(SELECTION, texts)
        assert picked == fresh.pick(SELECTION, texts), (path, now)
        notes.append(picked.note)
        file.write_text(before)
    assert "per test: " in notes[0] and "selected by coverage" in notes[1]
    assert "does not parse" in notes[4] and "created or deleted" in notes[5]


def test_a_changed_module_is_parsed_once_a_verdict_and_not_at_all_once_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"mod.py": MOD, "help.py": HELP, T: TESTS})
    picker = Picker(root)
    picker.record(_record(), {"mod.py": MOD, "help.py": HELP, T: TESTS})
    parsed = counted_parses(monkeypatch)
    # A module-level change: coverage cannot decide (its model), the names
    # do (its units): one parse of the text now for both.
    first = MOD.replace("LIMIT = 3", "LIMIT = 4")
    picked = picker.pick(SELECTION, {"mod.py": (MOD, first)})
    assert picked.only == (f"{T}::test_h",)
    assert parsed.count(first) == 1
    # The text before the run again, and the next edit read while the model
    # talked (on_change): the verdict parses nothing.
    second = MOD.replace("LIMIT = 3", "LIMIT = 5")
    (root / "mod.py").write_text(second)
    picker.prepare({"mod.py": (MOD, second)})
    parsed.clear()
    assert picker.pick(SELECTION, {"mod.py": (MOD, second)}).only == (f"{T}::test_h",)
    assert parsed == []


def test_a_text_kept_is_never_the_answer_for_another(tmp_path: Path) -> None:
    # Each text of the same length, one character apart: what is made of
    # one is never given for the next (a path or a stamp is no key).
    root = project(tmp_path, {"mod.py": MOD, "help.py": HELP, T: TESTS})
    picker = Picker(root)
    picker.record(_record(), {"mod.py": MOD, "help.py": HELP, T: TESTS})
    chosen = []
    for old, new in (("x + 1", "x + 2"), ("x * 2", "x * 3"), ("LIMIT\n", "3    \n")):
        now = MOD.replace(old, new)
        assert len(now) == len(MOD)
        picker.prepare({"mod.py": (MOD, now)})
        chosen.append(picker.pick(SELECTION, {"mod.py": (MOD, now)}).only)
    assert chosen == [(f"{T}::test_f",), (f"{T}::test_twice",), (f"{T}::test_h",)]
    parses = Parses()
    one, two = "x = 1\n", "x = 2\n"
    made = [
        parses.made("dump", text, lambda t=text: ast.dump(parses.tree(t)))
        for text in (one, two, one)
    ]
    assert made[0] != made[1] and made[0] == made[2] and parses.parsed == 2


def test_a_module_changed_and_changed_back_is_selected_by_its_text_then(tmp_path: Path) -> None:
    # The import graph rescans a file modified in the last two seconds at
    # every call: by its text, what it found in that text is kept.
    root = project(
        tmp_path,
        {
            "a.py": "X = 1\n",
            "b.py": "Y = 2\n",
            "tests/test_a.py": "import a\n",
            "tests/test_b.py": "import b\n",
        },
    )
    import_graph._BY_TEXT.clear()
    texts = ["import b\nX = 1\n", "X = 1\n", "import b\nX = 1\n"]
    reached = []
    for text in texts:
        (root / "a.py").write_text(text)
        reached.append(select_tests(root, ["b.py"]).files)
    both, one = ("tests/test_b.py", "tests/test_a.py"), ("tests/test_b.py",)
    assert reached == [both, one, both]
    assert any(key[1:] == ("a.py", texts[0]) for key in import_graph._BY_TEXT)


async def test_a_gate_told_of_a_change_reads_it_from_the_disk_before_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"mod.py": MOD, "help.py": HELP, T: TESTS})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, ahead=False)  # the read-ahead alone
    parsed = counted_parses(monkeypatch)
    now = MOD.replace("x + 1", "x + 2")
    (root / "mod.py").write_text(now)  # rein run: the change is on disk
    # Not through the workspace port (a client's read has effects of its
    # own): a buffer's unsaved text is the verdict's to read.
    await changed(gate, workspace, "mod.py", MOD.replace("x + 1", "x + 9"))
    gate.on_change(Mutation(2, ("mod.py",)))
    await gate.prepared()
    assert parsed == [MOD, now]
    await gate.close()


def test_a_change_scanned_ahead_is_not_scanned_again_and_entry_points_are_read_by_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyproject = '[project]\nname = "p"\n[project.entry-points.cli]\nrun = "a:main"\n'
    root = project(
        tmp_path,
        {"pyproject.toml": pyproject, "a.py": "X = 1\n", "tests/test_a.py": "import a\n"},
    )
    scanned: list[str] = []
    names = import_graph.import_names

    def counted(path: str, text: str) -> object:
        scanned.append(path)
        return names(path, text)

    monkeypatch.setattr(import_graph, "import_names", counted)
    parsed: list[tuple[str | None, ...]] = []
    points = by_name._entry_points

    def read(*texts: str | None) -> dict[str, frozenset[str]]:
        parsed.append(texts)
        return points(*texts)

    monkeypatch.setattr(by_name, "_entry_points", read)
    assert select_tests(root, ["a.py"]).files == ("tests/test_a.py",)
    (root / "a.py").write_text("X = 2\n")  # the run's change, told at once
    import_graph.scan_ahead(root, ["a.py"])
    scanned.clear()
    assert select_tests(root, ["a.py"]).files == ("tests/test_a.py",)
    assert scanned == []
    assert len(parsed) == 1 and by_name.entry_points(root) == {"run": frozenset({"a"})}
    (root / "pyproject.toml").write_text(pyproject.replace("a:main", "b:main"))
    assert by_name.entry_points(root) == {"run": frozenset({"b"})} and len(parsed) == 2


def test_a_model_that_gives_up_leaves_the_shared_tree_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ast.dump of a function nested too deep for it raises RecursionError:
    # the model gives up, and the decorators it took off to hash the
    # function are back on the tree the narrowing reads.
    parses = Parses()
    text = "@fixture\ndef f():\n    return 1\n"
    tree = parses.tree(text)

    def too_deep(node: ast.AST) -> str:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(file_model.ast, "dump", too_deep)
    assert file_model.model_of(text, parses.tree) is None
    monkeypatch.undo()
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [ast.unparse(d) for d in function.decorator_list] == ["fixture"]


async def test_waiting_for_the_read_ahead_is_bounded_and_says_when_it_gave_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``TestGate.prepared`` waited without a bound (review20b finding 8)."""
    root = project(tmp_path, {"mod.py": MOD, "help.py": HELP, T: TESTS})
    gate = gate_for(root, ahead=False)
    never = asyncio.Event()

    async def stuck(*args: object) -> None:
        await never.wait()

    monkeypatch.setattr(ahead_module, "in_parse_thread", stuck)
    gate.on_change(Mutation(2, ("mod.py",)))
    try:
        assert await gate.prepared(timeout_s=0.05) is False
    finally:
        await gate.close()
    assert "1 read-ahead(s) not done in 0.1 s" in caplog.text
    assert await gate.prepared() is True  # closed: nothing left to wait for
