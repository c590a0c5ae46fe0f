"""Under the default settings the gates run sandboxed: a ``conftest.py``
the model wrote, which the tests gate's pytest imports, cannot write
outside the workspace (found by use: it wrote the person's home folder),
and the gate still gives its verdict."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rein.config import ReinConfig, load_config
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.settings import DEFAULT_ALSO
from tests.fakes.events import EventLog

CONFTEST = """\
from pathlib import Path

try:
    Path({target!r}).write_text("written by the model's conftest")
except OSError:
    pass
"""


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="rein-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path)


def _call(name: str, **arguments: str) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def test_the_models_conftest_runs_in_the_sandbox_by_default(
    tmp_path: Path, outside: Path
) -> None:
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    assert ReinConfig().sandbox.also == DEFAULT_ALSO and "gates" in DEFAULT_ALSO
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    target = outside / "PWNED"
    script = [
        _call("write_file", path="tests/conftest.py", content=CONFTEST.format(target=str(target))),
        _call(
            "edit_file",
            path="calc.py",
            old_string="return a + b",
            new_string="return b + a",
        ),
        {"text": "done"},
    ]
    # Only the tests gate: the analyzers play no part here.
    config = load_config({"gates": {"analyzer": {"enabled": False}}})
    events = EventLog()
    async with HeadlessSession(root, ReplayModel(script), config, watch=False) as session:
        session.agent.subscribe(events)
        result = await session.prompt("make add commutative")
    assert result.status == "completed", result.error
    tests = [r for r in events.of("gate_result") if r.gate == "tests"]
    assert tests and tests[-1].status == "passed", tests
    assert tests[-1].detail.startswith("1 of 1 tests passed")
    assert not target.exists()
