"""A blocker the bench's one truth run did not name, looked at again
(:mod:`rein.bench.tests_random`), with real pytest runs: a test a seed
makes fail at random joins the seed's truth; one that passes with the seed
stays a false blocker."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from rein.bench.tests_random import node_named, random_breaks
from rein.bench.tests_scores import Case
from rein.bench.tests_seeds import Mutation
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec

MODULE = """import pathlib

COUNTER = pathlib.Path({counter!r})


def _odd():
    n = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1
    COUNTER.write_text(str(n))
    return n % 2


def value():
    return 1
"""

TESTS = """from pkg.mod import value


def test_value():
    assert value() == 1


def test_alone():
    assert True
"""


def test_a_test_the_seed_fails_at_random_joins_its_truth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    root = tmp_path / "tiny"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(MODULE.format(counter=str(tmp_path / "counter")))
    (root / "tests" / "test_mod.py").write_text(TESTS)
    # Seeded, every other call of value() is 2: test_value fails one run in two.
    seed = Mutation("pkg/mod.py", 13, "constant", "    return 1\n", "    return 1 + _odd()\n")
    value, alone = "tests/test_mod.py::test_value", "tests/test_mod.py::test_alone"
    case = Case(seed, [], 0.0)
    case.false_blockers = [f"{value} failed: assert 2 == 1", f"{alone} failed: made up"]
    known: dict = {"broken": [], "wall_s": 1.0}
    said: list[str] = []

    async def main() -> None:
        await random_breaks(
            case,
            known,
            SubprocessRunner(str(root)),
            RunnerSpec(python=sys.executable),
            root,
            60.0,
            said.append,
            runs=2,  # the bench's 5, cut to keep the suite quick
        )

    anyio.run(main)
    assert known["sometimes"] == [value]
    assert case.false_blockers == [f"{alone} failed: made up"]
    assert said == [
        f"    {value}: failed 1 of 2 with the seed, 0 without it",
        f"    {alone}: failed 0 of 2 with the seed, 0 without it",
    ]


def test_a_blocker_naming_no_test_names_no_node() -> None:
    assert node_named("tests/test_x.py cannot be collected: ImportError") is None
    assert node_named("tests/test_x.py::T::test_y failed: boom") == "tests/test_x.py::T::test_y"
