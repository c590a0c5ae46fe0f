"""What a test file's import runs in another module is every test's: a
cache it fills or ids it makes serve the other files' tests too (found by
review14a: a change there ran only that file's tests, and a bug the other
file's test or a new parametrize id met passed). Real pytest, warm, as
tests/testgate/test_coverage_run.py."""

from __future__ import annotations

from pathlib import Path

from rein.process.kept import KeptProcessLauncher
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, gate_for, project, verdict


async def _blocked(tmp_path: Path, files: dict[str, str], first: str, second: str) -> list[str]:
    """lib.py changed harmlessly (a run by names, which records), then
    changed to ``second``: the tests the second verdict blocks on."""
    root = project(tmp_path / "proj", files)
    workspace = FakeWorkspace({"lib.py": files["lib.py"]}, root=str(root))
    gate = gate_for(root, launcher=KeptProcessLauncher())
    try:
        await changed(gate, workspace, "lib.py", first)
        assert await gate.warm_ready(60)
        assert "no coverage record yet" in (await verdict(gate, workspace, "lib.py")).detail
        gate.on_validated(2)
        await changed(gate, workspace, "lib.py", second)
        outcome = await verdict(gate, workspace, "lib.py")
    finally:
        await gate.close()
    return sorted(b.message.split(" failed")[0] for b in outcome.blockers)


# 1. A cache test_a's import fills: test_b's test hits it, so its record
#    lacks _build; the change of _build runs test_a alone.
CACHE = (
    "_CACHE = []\n\n\ndef _build():\n    return {'k': 1}\n\n\n"
    "def table():\n    if not _CACHE:\n        _CACHE.append(_build())\n    return _CACHE[0]\n\n\n"
    "def other():\n    return 1\n"
)
CACHE_FILES = {
    "lib.py": CACHE,
    "tests/test_a.py": "import lib\n\nTABLE = lib.table()\n\n\ndef test_a():\n    assert TABLE['k'] == 1\n",
    "tests/test_b.py": "import lib\n\n\ndef test_b():\n    assert lib.table()['k'] == 1\n",
}


async def test_a_cache_a_test_files_import_fills_serves_other_files(tmp_path: Path) -> None:
    harmless = CACHE.replace("return 1\n", "return 0 + 1\n")
    assert await _blocked(
        tmp_path, CACHE_FILES, harmless, CACHE.replace("{'k': 1}", "{'k': 2}")
    ) == ["tests/test_a.py::test_a", "tests/test_b.py::test_b"]


# 2. Parametrize ids made at import: the recorded ids run, the new one not.
IDS = "def cases():\n    return ['x', 'y']\n\n\ndef other():\n    return 1\n"
IDS_FILES = {
    "lib.py": IDS,
    "tests/test_a.py": (
        "import pytest\n\nimport lib\n\n\n@pytest.mark.parametrize('c', lib.cases())\n"
        "def test_a(c):\n    assert c in 'xy'\n"
    ),
}


async def test_ids_a_test_files_import_makes_run_anew(tmp_path: Path) -> None:
    harmless = IDS.replace("return 1\n", "return 0 + 1\n")
    assert await _blocked(
        tmp_path, IDS_FILES, harmless, IDS.replace("['x', 'y']", "['x', 'z']")
    ) == ["tests/test_a.py::test_a[z]"]
