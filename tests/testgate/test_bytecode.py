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
from rein.testgate.shadow import Shadow, ShadowTree
from rein.testgate.warm import WarmPytest
from tests.testgate.projects import project, snapshot

TEST = "from mod import VALUE\n\n\ndef test_value():\n    assert VALUE == {}\n"
#: Every placed file's stamp: what the compiled files are checked against
#: (size and whole second) cannot tell one text from another.
STAMP_NS = 1_700_000_000 * 10**9


def _compiled(shadow: Shadow) -> list[str]:
    """The shadow's modules compiled in its prefix (which mirrors absolute
    paths; the interpreter's and pytest's own modules are there too)."""
    assert shadow.pycache is not None
    mirror = shadow.pycache.joinpath(*shadow.root.parts[1:])
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
    tree = ShadowTree(root, tmp_path / "prefix")
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
            compiled.append(_compiled(shadow))
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


#: A test that writes a module where it runs (its stamp fixed) and imports it.
GENERATES = """import os, sys
import lib


def test_generated():
    os.makedirs("gen", exist_ok=True)
    with open("gen/mod.py", "w") as out:
        out.write(f"VALUE = {lib.X}\\n")
    os.utime("gen/mod.py", ns=(STAMP, STAMP))
    sys.path.insert(0, ".")
    from gen.mod import VALUE

    assert VALUE == lib.X
""".replace("STAMP", str(STAMP_NS))


async def test_a_module_a_test_wrote_in_a_folder_the_tree_deleted_is_compiled_again(
    tmp_path: Path,
) -> None:
    """The second run writes ``gen/mod.py`` again with the same stamp and
    size: the compiled file of the first run's (the folder deleted by the
    sync in between) must not be read."""
    root = project(tmp_path / "proj", {"lib.py": "X = 1\n", "tests/test_gen.py": GENERATES})
    tree = ShadowTree(root, tmp_path / "prefix")
    outcomes: list[list[str]] = []
    try:
        for overlay in ({}, {"lib.py": "X = 2\n"}):
            shadow = tree.sync(overlay)
            run = await run_tests(
                SubprocessRunner(str(root)),
                RunnerSpec(python=sys.executable),
                shadow,
                ["tests/test_gen.py"],
                60,
            )
            assert run.unverified is None, run.output
            outcomes.append([r.outcome for r in run.results])
    finally:
        tree.remove()
    assert outcomes == [["passed"], ["passed"]]
