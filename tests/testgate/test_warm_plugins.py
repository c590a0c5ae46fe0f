"""The warm pytest keeps a second process per set of entry-point plugins
(:mod:`rein.testgate.warm_plugins`): a run whose pytest would load the
plugins that process imported forks from it, with the plugin imported
once; a run whose configuration loads another set (its ini's ``-p no:``,
autoload off) runs in a plain fork that never imported the plugin; the
outcomes are a cold run's.

The interpreter is a small virtual environment of its own: pytest and its
dependencies (linked from this one's) and one plugin distribution,
``countplug`` (a ``.dist-info`` with a ``pytest11`` entry point), whose
import writes its process id to a file."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import sysconfig
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec, TestRun, run_tests
from rein.testgate.shadow import Shadow, build_shadow
from rein.testgate.warm import WarmPytest
from tests.testgate.projects import project

# The plugin: it keeps which process imported it, and with COUNT_OUT set
# its import writes that to a file; its assert is rewritten as a plugin's.
PLUGIN = (
    "import os\nimport sys\n\n"
    "IMPORTED_IN = os.getpid()\n"
    "if os.environ.get('COUNT_OUT'):\n"
    "    with open(os.environ['COUNT_OUT'], 'a') as out:\n"
    "        out.write(f'{os.getpid()}\\n')\n"
    # What the review found a kept import would get wrong (COUNT_DOES says which).
    "DOES = os.environ.get('COUNT_DOES')\n"
    "if DOES == 'exists':\n"
    "    MARK = os.path.exists('marker.txt')\n"
    "elif DOES == 'listdir':\n"
    "    MARK = 'marker.txt' in os.listdir('.')\n"
    "elif DOES == 'thread':\n"
    "    import threading\n\n"
    "    T = threading.Thread(target=threading.Event().wait, daemon=True)\n"
    "    T.start()\n"
    "elif DOES == 'helper':\n"
    "    import pytest\n\n"
    "    pytest.register_assert_rewrite('counthelp')\n"
    "elif DOES == 'argv':\n"
    "    ARGV = list(sys.argv)\n"
    "elif DOES == 'hang' and 'server' in sys.modules['__main__'].__file__:  # not a run's\n"
    "    import select\n\n"
    "    select.select([], [], [])\n\n\n"
    "def check(value):\n"
    "    assert value == 1\n\n\n"
    "def pytest_configure(config):\n"
    "    config.countplug = True\n"
)
ENTRY_POINTS = "[pytest11]\ncountplug = countplug\n"
# What each run's pytest saw, written by the project's conftest.py.
CONFTEST = (
    "import json\nimport os\nimport sys\n\n\n"
    "def pytest_sessionstart(session):\n"
    "    config = session.config\n"
    "    row = {\n"
    "        'imported': 'countplug' in sys.modules,\n"
    "        'registered': config.pluginmanager.get_plugin('countplug') is not None,\n"
    "        'configured': getattr(config, 'countplug', False),\n"
    "        'in': getattr(sys.modules.get('countplug'), 'IMPORTED_IN', None),\n"
    "    }\n"
    "    row['here'] = row['in'] == os.getpid()\n"
    "    with open(os.environ['SEEN_OUT'], 'a') as out:\n"
    "        out.write(json.dumps(row) + '\\n')\n"
)
TESTS = (
    "def test_one():\n    assert 1 + 1 == 2\n\n\n"
    "def test_the_plugins_assert():\n"
    "    import countplug\n\n"
    "    countplug.check(2)\n"
)
TARGETS = ["tests/test_it.py"]


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A virtual environment's interpreter: pytest and its dependencies
    (links to this interpreter's), and the ``countplug`` distribution."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    here = Path(sysconfig.get_paths()["purelib"])
    for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py"):
        if (here / name).exists():
            (site / name).symlink_to(here / name)
    (site / "countplug.py").write_text(PLUGIN, encoding="utf-8")
    # Not the distribution's: rewritten when its import says so.
    (site / "counthelp.py").write_text("def check(value):\n    assert value == 1\n")
    info = site / "countplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: countplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    # Its files: pytest rewrites the asserts of a plugin distribution's modules.
    (info / "RECORD").write_text("countplug.py,,\ncountplug-1.0.dist-info/RECORD,,\n")
    return str(venv / "bin" / "python")


@dataclass
class Runs:
    warm: WarmPytest
    shadow: Shadow
    python: str
    counted: Path
    seen: Path

    async def run(self, *, cold: bool = False) -> TestRun:
        client = None if cold else self.warm.client()
        assert cold or client is not None
        return await run_tests(
            SubprocessRunner(str(self.shadow.root)),
            RunnerSpec(python=self.python),
            self.shadow,
            TARGETS,
            60,
            warm=client,
        )

    def imports(self) -> list[str]:
        """The processes whose import of the plugin wrote (with COUNT_OUT)."""
        return self.counted.read_text().split() if self.counted.exists() else []

    def why(self) -> list[str]:
        """Why the plugin processes' last runs were handed back (their notes)."""
        client = self.warm.client()
        assert client is not None
        folder = Path(client.folder)
        return [p.read_text() for p in sorted(folder.glob("z-*.why"))]

    def rows(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.seen.read_text().splitlines()]

    async def plugin_process_gone(self) -> None:
        """Until a plugin process has said why it does not serve (or 60 s)."""
        folder = self.warm.client()
        assert folder is not None
        for _ in range(1200):
            if any(n.startswith("z-") and n.endswith(".why") for n in os.listdir(folder.folder)):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"no plugin process's why: {os.listdir(folder.folder)}")

    async def plugin_process(self) -> None:
        """Until the kept process has a plugin process listening (or 60 s)."""
        folder = self.warm.client()
        assert folder is not None
        for _ in range(1200):
            names = os.listdir(folder.folder)
            if any(name.startswith("z-") and "." not in name for name in names):
                return
            if any(name.startswith("z-") and name.endswith(".why") for name in names):
                break
            await asyncio.sleep(0.05)
        raise AssertionError(f"no plugin process: {self.why()}")


@pytest.fixture
async def runs(python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Runs]:
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # the plugins load, as by default
    counted, seen = tmp_path / "counted.txt", tmp_path / "seen.jsonl"
    monkeypatch.delenv("COUNT_OUT", raising=False)
    monkeypatch.setenv("SEEN_OUT", str(seen))
    root = project(
        tmp_path / "proj",
        {"pytest.ini": "[pytest]\n", "conftest.py": CONFTEST, "tests/test_it.py": TESTS},
    )
    shadow = build_shadow(root, {})
    warm = WarmPytest(python, KeptProcessLauncher())
    warm.start()
    try:
        assert await warm.wait_ready(60)
        yield Runs(warm, shadow, python, counted, seen)
    finally:
        await warm.close()
        shadow.remove()


def outcomes(done: TestRun) -> list[tuple[str, str]]:
    assert (done.unverified, done.cold) == (None, None)
    return [(r.node_id, r.outcome) for r in done.results]


def failure(done: TestRun) -> str:
    (failed,) = done.failing
    return failed.message


EXPECTED = [
    ("tests/test_it.py::test_one", "passed"),
    ("tests/test_it.py::test_the_plugins_assert", "failed"),
]
LOADED = {"imported": True, "registered": True, "configured": True}
NOT_LOADED = {
    "imported": False,
    "registered": False,
    "configured": False,
    "in": None,
    "here": False,
}


def loaded(row: dict[str, object]) -> dict[str, object]:
    return {name: row[name] for name in LOADED}


async def test_the_plugin_is_imported_once_not_in_each_fork_and_runs_read_as_cold_ones(
    runs: Runs,
) -> None:
    first = await runs.run()  # a plain fork: it records the plugins its pytest loads
    await runs.plugin_process()
    later = [await runs.run() for _ in range(3)]
    cold = await runs.run(cold=True)

    assert runs.why() == []  # no run handed back
    rows = runs.rows()
    # The first run and the cold one imported the plugin themselves; the
    # three later runs did not: they have it from one process, not theirs.
    assert [row["here"] for row in rows] == [True, False, False, False, True]
    assert len({row["in"] for row in rows[1:4]}) == 1
    assert rows[1]["in"] not in (rows[0]["in"], rows[4]["in"])
    for done in (first, *later, cold):
        assert outcomes(done) == EXPECTED
    # Each run's pytest registered and configured the plugin, as the cold one.
    assert [loaded(row) for row in rows] == [LOADED] * 5
    # The plugin's assert was rewritten as pytest rewrites a plugin's.
    assert "assert 2 == 1" in failure(cold)
    assert {failure(done) for done in (first, *later)} == {failure(cold)}


@pytest.mark.parametrize(
    ("other", "why"),
    [
        pytest.param("-p no:countplug", ["another set of plugins"], id="its-ini-blocks-the-plugin"),
        pytest.param(
            "--disable-plugin-autoload", ["plugin autoload is off"], id="its-ini-turns-autoload-off"
        ),
        # The request says so: the run does not go to the plugin process.
        pytest.param(None, [], id="its-environment-turns-autoload-off"),
    ],
)
async def test_a_run_that_loads_another_set_runs_plain_and_never_sees_the_plugin(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, other: str | None, why: list[str]
) -> None:
    await runs.run()
    await runs.plugin_process()
    if other is not None:  # the run's pytest reads it: the gate cannot tell
        ini = runs.shadow.root / "pytest.ini"
        ini.unlink()
        ini.write_text(f"[pytest]\naddopts = {other}\n", encoding="utf-8")
    else:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plain = await runs.run()
    cold = await runs.run(cold=True)

    assert (
        outcomes(plain)
        == outcomes(cold)
        == [
            ("tests/test_it.py::test_one", "passed"),
            ("tests/test_it.py::test_the_plugins_assert", "failed"),
        ]
    )
    # Neither imported the plugin before its tests (the test imports it itself).
    assert runs.rows()[1:] == [NOT_LOADED, NOT_LOADED]
    assert failure(plain) == failure(cold)
    # The run went to the plugin process, whose fork stopped before any
    # plugin or test and handed it back, with why.
    assert runs.why() == why


async def test_a_plugin_whose_import_writes_a_file_is_imported_in_each_run_as_cold(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNT_OUT", str(runs.counted))
    first = await runs.run()  # it records the plugins; the plugin process's import is stopped
    await runs.plugin_process_gone()
    later = [await runs.run() for _ in range(2)]

    for done in (first, *later):
        assert outcomes(done) == EXPECTED
    # Each run imported it, and wrote: the stopped import wrote nothing.
    assert [row["here"] for row in runs.rows()] == [True, True, True]
    assert runs.imports() == [str(row["in"]) for row in runs.rows()]
    assert runs.why() == ["a plugin's import writes a file (counted.txt)"]


# What a plugin's import does, what its test checks, and why it is refused.
DOES = {
    "exists": ("import countplug\n    assert not countplug.MARK", "project path (marker.txt)"),
    "listdir": ("import countplug\n    assert not countplug.MARK", "looked at a project path"),
    "thread": ("import countplug\n    assert countplug.T.is_alive()", "started a thread"),
    "argv": (
        "import countplug, sys\n    assert countplug.ARGV == sys.argv, countplug.ARGV",
        "read sys.argv",
    ),
}


@pytest.mark.parametrize("does", sorted(DOES))
async def test_a_plugin_whose_import_looks_at_the_project_starts_a_thread_or_reads_argv_is_imported_in_each_run(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, does: str
) -> None:
    body, why = DOES[does]
    (runs.shadow.root / "tests" / "test_it.py").write_text(f"def test_it():\n    {body}\n")
    monkeypatch.setenv("COUNT_DOES", does)
    first = await runs.run()  # it records the plugins; the plugin process's probe refuses
    await runs.plugin_process_gone()
    (runs.shadow.root / "marker.txt").write_text("")  # the cold run sees it: so must a warm one
    later = await runs.run()
    cold = await runs.run(cold=True)

    (reason,) = runs.why()
    assert why in reason
    assert [row["here"] for row in runs.rows()] == [True, True, True]
    assert [r.outcome for r in first.results] == ["passed"]
    assert outcomes(later) == outcomes(cold)
    assert later.results[0].message == cold.results[0].message
    client = runs.warm.client()
    assert client is not None
    assert client.token not in (later.results[0].message or "")  # the kept process's secret


async def test_a_plugin_module_edited_in_place_is_not_served_from_its_old_import(
    runs: Runs, python: str
) -> None:
    await runs.run()
    await runs.plugin_process()
    site = Path(python).parent.parent
    (plugin,) = site.glob("lib/python*/site-packages/countplug.py")
    text = plugin.read_text()
    try:  # in place: its folder's time is not changed
        with plugin.open("r+") as out:
            out.write(text.replace("value == 1", "value == 2"))
        later = await runs.run()
        cold = await runs.run(cold=True)
    finally:
        with plugin.open("w") as out:
            out.write(text)
    assert outcomes(later) == outcomes(cold) == [(n, "passed") for n, _ in EXPECTED]
    assert runs.why() == ["a module the plugins imported changed"]


def _processes(folder: str) -> dict[int, int]:
    """The processes whose command line names ``folder`` (the kept
    process and its forks), as pidfds by pid."""
    found = {}
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
            if entry.isdigit() and folder.encode() in cmdline:
                found[int(entry)] = os.pidfd_open(int(entry))
        except OSError:
            continue
    return found


async def test_a_plugin_import_that_hangs_leaves_no_process_after_close(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNT_DOES", "hang")
    client = runs.warm.client()
    assert client is not None
    folder = client.folder
    await runs.run()
    # The kept process, its plugin process and that one's probe, which hangs.
    for _ in range(1200):
        if len(found := _processes(folder)) >= 3:
            break
        for pidfd in found.values():
            os.close(pidfd)
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("no probe")
    await runs.warm.close()
    # Each ends with its parent (the kernel's signal on that one's end):
    # a pidfd is readable once its process has ended.
    left = [pid for pid, pidfd in found.items() if not select.select([pidfd], [], [], 10)[0]]
    for pidfd in found.values():
        os.close(pidfd)
    assert left == []


async def test_a_module_the_plugins_import_marks_for_rewriting_is_rewritten_in_each_run(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNT_DOES", "helper")
    (runs.shadow.root / "tests" / "test_it.py").write_text(
        "def test_it():\n    import counthelp\n\n    counthelp.check(2)\n"
    )
    await runs.run()
    await runs.plugin_process()
    later = await runs.run()
    cold = await runs.run(cold=True)

    assert runs.why() == []
    assert [row["here"] for row in runs.rows()] == [True, False, True]
    assert "assert 2 == 1" in failure(cold)
    assert failure(later) == failure(cold)
