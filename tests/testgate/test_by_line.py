"""Selection by line over a real warm pytest: of the tests that ran a
changed function, only those that ran one of its changed statements run
(:mod:`rein.testgate.statements`); a change that may act on the lines it
did not touch (a name made local) runs every test that ran the function;
a function that ran at import is told by line too."""

from __future__ import annotations

from pathlib import Path

from rein.harness.gating.gates import GateOutcome
from rein.process.kept import KeptProcessLauncher
from rein.testgate.gate import TestGate
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict

MOD = (
    'MODE = "fast"\n\n\n'
    "def kind(x):\n"
    "    if x < 0:\n"
    '        return "negative"\n'
    "    if x == 0:\n"
    '        return "zero"\n'
    '    return "positive"\n\n\n'
    "def describe(x):\n"
    "    if x == 999:\n"
    '        unit = "big"\n'
    '    return f"{x} {MODE}"\n\n\n'
    "def make(name):\n"
    '    if name == "a":\n'
    '        return "A"\n'
    '    return name.upper() + "!"\n\n\n'
    'DEFAULT = make("a")\n\n\n'
    "def spare():\n"
    "    return 0\n"
)
TESTS = (
    "from mod import DEFAULT, describe, kind, make\n\n\n"
    'def test_negative():\n    assert kind(-1) == "negative"\n\n\n'
    'def test_zero():\n    assert kind(0) == "zero"\n\n\n'
    'def test_one():\n    assert kind(1) == "positive"\n\n\n'
    'def test_two():\n    assert kind(2) == "positive"\n\n\n'
    'def test_describe():\n    assert describe(1) == "1 fast"\n\n\n'
    'def test_describe_big():\n    assert describe(2) == "2 fast"\n\n\n'
    'def test_default():\n    assert DEFAULT == "A"\n\n\n'
    'def test_make():\n    assert make("b") == "B!"\n'
)


async def _judged(tmp_path: Path, *changes: tuple[str, str]) -> list[GateOutcome]:
    """A first verdict on a harmless change (it records what each test
    ran), then one per ``(old, new)`` of ``mod.py``, each undone after."""
    root = project(tmp_path / "proj", {"mod.py": MOD, "tests/test_mod.py": TESTS})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate: TestGate = gate_for(root, launcher=KeptProcessLauncher())
    outcomes: list[GateOutcome] = []
    try:
        harmless = MOD.replace("return 0", "return 1 - 1")
        await changed(gate, workspace, "mod.py", harmless)
        outcomes.append(await verdict(gate, workspace, "mod.py"))
        gate.on_validated(2)
        for old, new in changes:
            assert old in harmless
            workspace.buffers["mod.py"] = (harmless, 2)  # the last run's change undone
            await changed(gate, workspace, "mod.py", harmless.replace(old, new))
            outcomes.append(await verdict(gate, workspace, "mod.py"))
            gate.on_validated(2)
    finally:
        await gate.close()
    return outcomes


def _blocking(outcome: GateOutcome) -> list[str]:
    return sorted(b.message.split(" failed")[0].split("::")[-1] for b in outcome.blockers)


async def test_only_the_tests_that_ran_a_changed_line_run(tmp_path: Path) -> None:
    first, zero, local, at_import, made = await _judged(
        tmp_path,
        ('return "zero"', 'return "Zero"'),
        # In a branch no test takes, but MODE becomes the function's own
        # name: every call of describe() fails at its return.
        ('unit = "big"', 'MODE = "big"'),
        # make() ran at import, but not this line: told by line.
        ('return name.upper() + "!"', 'return name.upper() + "?"'),
        # This line ran at import: what the import made may have changed.
        ('return "A"', 'return "a"'),
    )

    assert (first.blockers, first.unverified) == ([], None), first.detail
    assert _blocking(zero) == ["test_zero"], zero.detail
    assert (
        "selected by coverage: 1 tests ran a changed function (mod.py:kind); 3 more ran it "
        "but none of its changed lines (left out)"
    ) in zero.detail
    assert zero.detail.startswith("0 of 1 tests passed"), zero.detail
    assert _blocking(local) == ["test_describe", "test_describe_big"], local.detail
    assert "selected by coverage: 2 tests ran a changed function (mod.py:describe);" in (
        local.detail
    )
    assert _blocking(at_import) == ["test_make"], at_import.detail
    assert "selected by coverage: 1 tests ran a changed function (mod.py:make);" in (
        at_import.detail
    )
    assert _blocking(made) == ["test_default"], made.detail
    assert "not by coverage: mod.py: make ran outside the tests" in made.detail
