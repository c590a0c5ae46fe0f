"""The gate's pytest writes and imports bytecode in the shadow's own
folder (whatever ``PYTHONDONTWRITEBYTECODE`` says), never beside a source
file, and never runs a module's stale bytecode."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec, TestRun, run_tests
from rein.testgate.shadow import ShadowTree
from rein.testgate.warm import WarmPytest
from tests.testgate.projects import project, snapshot

TEST = "from mod import VALUE\n\n\ndef test_value():\n    assert VALUE == {}\n"
#: Every placed file's stamp: what the compiled files are checked against
#: (size and whole second) cannot tell one text from another.
STAMP_NS = 1_700_000_000 * 10**9


def _compiled(tree: ShadowTree) -> list[str]:
    """The shadow's modules compiled in its folder (the prefix mirrors
    absolute paths; the interpreter's and pytest's own modules are there too)."""
    mirror = tree.pycache.joinpath(*tree.root.parts[1:])
    return sorted(p.name.split(".")[0] for p in mirror.rglob("*.pyc"))


async def test_bytecode_goes_to_the_shadows_folder_and_a_same_stamp_edit_runs_new_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as on this project's machines
    root = project(
        tmp_path / "proj", {"mod.py": "VALUE = 1\n", "tests/test_mod.py": TEST.format(1)}
    )
    before = snapshot(root)
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()
    tree = ShadowTree(root)
    outcomes: list[list[str]] = []
    compiled: list[list[str]] = []
    try:
        assert await warm.wait_ready(60)
        overlays: list[dict[str, str | None]] = [
            {},  # run cold: VALUE 1, the test wants 1
            {"tests/test_mod.py": TEST.format(3)},  # the same size: wants 3
            {"mod.py": "VALUE = 3\n", "tests/test_mod.py": TEST.format(3)},
        ]
        for number, overlay in enumerate(overlays):
            shadow = tree.sync(overlay)
            for placed in shadow.root.rglob("*.py"):
                os.utime(placed, ns=(STAMP_NS, STAMP_NS))
            run: TestRun = await run_tests(
                SubprocessRunner(str(root)),
                RunnerSpec(python=sys.executable),
                shadow,
                ["tests/test_mod.py"],
                60,
                warm=warm.client() if number else None,
            )
            assert (run.unverified, run.cold) == (None, None), run.output
            outcomes.append([r.outcome for r in run.results])
            compiled.append(_compiled(tree))
        in_shadow = sorted(p.name for p in shadow.root.rglob("__pycache__"))
    finally:
        tree.remove()
        await warm.close()

    # Each run judged the texts it was given, not the first run's bytecode.
    assert outcomes == [["passed"], ["failed"], ["passed"]]
    # The cold run and the warm ones wrote the module and pytest's
    # rewritten test module in the shadow's folder, and nothing beside them.
    assert compiled == [["mod", "test_mod"]] * 3
    assert in_shadow == []
    assert snapshot(root) == before
