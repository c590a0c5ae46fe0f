"""Selection by coverage over a real warm pytest: a later run's verdict
runs only the tests that ran the changed function, and still blocks on
the bug there."""

from __future__ import annotations

from pathlib import Path

from rein.process.kept import KeptProcessLauncher
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict

#: Every test names ``run``: the names reach them all; only one runs ``_b``.
MOD = (
    "def _a(x):\n    return x + 1\n\n\n"
    "def _b(x):\n    return x * 2\n\n\n"
    "def _c(x):\n    return -x\n\n\n"
    "_KINDS = {'a': _a, 'b': _b, 'c': _c}\n\n\n"
    "def run(kind, x):\n    return _KINDS[kind](x)\n"
)
TESTS = (
    "from mod import run\n\n\n"
    "def test_a():\n    assert run('a', 1) == 2\n\n\n"
    "def test_b():\n    assert run('b', 2) == 4\n\n\n"
    "def test_c():\n    assert run('c', 3) == -3\n"
)


async def test_a_later_verdict_runs_the_tests_that_ran_the_change_and_blocks(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj", {"mod.py": MOD, "tests/test_mod.py": TESTS})
    workspace = FakeWorkspace({"mod.py": MOD}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        # A first run (a harmless change): no record yet, the names decide.
        harmless = MOD.replace("x + 1", "1 + x")
        await changed(gate, workspace, "mod.py", harmless)
        assert await gate.warm_ready(60)
        first = await verdict(gate, workspace, "mod.py")
        gate.on_validated(2)
        # The next run seeds a bug in the function test_b alone runs.
        await changed(gate, workspace, "mod.py", harmless.replace("x * 2", "x * 3"))
        seeded = await verdict(gate, workspace, "mod.py")
        warm = set(gate.warm_runs)
        recorded = set(gate.timings)
    finally:
        await gate.close()

    assert (first.blockers, first.unverified) == ([], None)
    assert "not by coverage: no coverage record yet" in first.detail
    assert first.detail.startswith("3 of 3 tests passed")
    assert [b.message.split(" failed")[0] for b in seeded.blockers] == ["tests/test_mod.py::test_b"]
    assert "selected by coverage: 1 tests ran a changed function (mod.py:_b)" in seeded.detail
    assert "by imports: 0 tests" in seeded.detail
    assert seeded.detail.startswith("0 of 1 tests passed"), seeded.detail
    assert "first" in warm
    # A run chosen by coverage alone records nothing (the tracer's cost).
    assert "first_pytest" in recorded and "first_record" not in recorded
