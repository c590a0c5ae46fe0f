"""The warm pytest's runs start from a pytest configuration made once in
the kept process (its plugin manager, the default plugins registered),
and read the run as a cold ``python -m pytest`` does: its arguments, its
working folder, the ini file, conftest.py, a ``-p`` plugin."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rein.process.kept import KeptProcessLauncher
from rein.process.runner import SubprocessRunner
from rein.testgate.runner import RunnerSpec, TestRun, run_tests
from rein.testgate.shadow import build_shadow
from rein.testgate.warm import WarmClient, WarmPytest
from tests.testgate.projects import project

# What the run's pytest configuration is, written by the project's own
# conftest.py hook; "frozen": the Config was made before the kept process
# froze what it holds (gc.get_objects does not list a frozen object).
CONFTEST = (
    "import gc\nimport json\nimport os\n\n\n"
    "def pytest_configure(config):\n"
    "    made_in_this_run = any(o is config for o in gc.get_objects())\n"
    "    row = {\n"
    "        'frozen': not made_in_this_run,\n"
    "        'dir': str(config.invocation_params.dir),\n"
    "        'args': list(config.invocation_params.args),\n"
    "        'cache_blocked': config.pluginmanager.is_blocked('cacheprovider'),\n"
    "        'doctest_blocked': config.pluginmanager.is_blocked('doctest'),\n"
    "        'markers': config.getini('markers'),\n"
    "        'rootdir': str(config.rootpath),\n"
    "    }\n"
    "    with open(os.environ['CONFIG_OUT'], 'a') as out:\n"
    "        out.write(json.dumps(row) + '\\n')\n"
)
TESTS = "def test_one():\n    assert 1 + 1 == 2\n"


@pytest.mark.parametrize(
    ("addopts", "cache_blocked"),
    [
        pytest.param("-p no:doctest", True, id="the-cache-off"),
        # --ff uses pytest's cache: the gate keeps it (no -p no:cacheprovider).
        pytest.param("-p no:doctest --ff", False, id="the-cache-kept"),
    ],
)
async def test_a_warm_runs_configuration_is_made_once_and_reads_the_run_as_a_cold_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, addopts: str, cache_blocked: bool
) -> None:
    out = tmp_path / "config.jsonl"
    monkeypatch.setenv("CONFIG_OUT", str(out))
    ini = f"[pytest]\naddopts = {addopts}\nmarkers =\n    slow: from the ini\n"
    root = project(
        tmp_path / "proj",
        {"pytest.ini": ini, "conftest.py": CONFTEST, "tests/test_it.py": TESTS},
    )
    shadow = build_shadow(root, {})
    warm = WarmPytest(sys.executable, KeptProcessLauncher())
    warm.start()

    async def run(targets: list[str], client: WarmClient | None) -> TestRun:
        return await run_tests(
            SubprocessRunner(str(root)),
            RunnerSpec(python=sys.executable),
            shadow,
            targets,
            60,
            warm=client,
        )

    try:
        assert await warm.wait_ready(60)
        client = warm.client()
        assert client is not None
        runs = [await run(["tests/test_it.py::test_one"], use) for use in (client, client, None)]
        usage = [await run(["--no-such-option"], use) for use in (client, None)]
    finally:
        await warm.close()
        shadow.remove()

    for done in runs:
        assert (done.unverified, done.cold) == (None, None)
        # the gate's own -p plugin (its report) ran in every run
        assert [(r.node_id, r.outcome) for r in done.results] == [
            ("tests/test_it.py::test_one", "passed")
        ]
    first, second, cold = (json.loads(line) for line in out.read_text().splitlines())
    # Both warm runs took the configuration made before the fork (each its
    # own copy); the cold run made its own.
    assert (first.pop("frozen"), second.pop("frozen"), cold.pop("frozen")) == (True, True, False)
    assert first == second == cold
    assert cold["dir"] == str(shadow.root) == cold["rootdir"]
    assert cold["args"][0] == "tests/test_it.py::test_one"
    # the gate's -p no:cacheprovider (or not), the ini's -p no:doctest and markers
    assert (cold["cache_blocked"], cold["doctest_blocked"]) == (cache_blocked, True)
    assert "slow: from the ini" in cold["markers"]
    # A usage error reads as a cold run's: pytest's program name is
    # python -m pytest's (not pytest.main()'s), given when the configuration
    # was made.
    warm_usage, cold_usage = (done.unverified or "" for done in usage)
    assert ": error: unrecognized arguments: --no-such-option" in cold_usage
    assert warm_usage == cold_usage
