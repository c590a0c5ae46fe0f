"""Issue 32 item 2 with the real analyzers (ruff server, basedpyright),
headless, in a workspace over ``gates.analyzer.workspaceMaxFiles`` (open
files only): a file ``run_command`` changed gets what a tool edit gets, a
baseline of its text before the command and its importers opened and
baselined. Its old errors never block; what the command broke, in it and in
its importers, does."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.config import load_config
from rein.hosting.headless import ApproveAll, HeadlessSession
from rein.providers.replay import ReplayModel
from tests.e2e.headless_gate import edit_turn, write_workspace
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

#: Two errors it already had (a wrong return type; an undefined name).
UTIL = '''"""Helpers, with errors they already had."""


def double(x: int) -> int:
    return x * 2


def label(x: int) -> str:
    return x + 1


def scaled(x: int) -> int:
    return x * factor
'''

APP = '''"""The app, with an error it already had."""

from pkg.util import double


def run() -> int:
    return double(21)


def name() -> int:
    return "app"
'''

CLI = '''"""The command line."""

from pkg import util


def main() -> int:
    return util.double(2)
'''


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "pkg/__init__.py": '"""The package."""\n',
        "pkg/util.py": UTIL,
        "pkg/app.py": APP,
        "pkg/cli.py": CLI,
    }
    write_workspace(root, files, project="proj")
    return root


def command(line: str, **expect: str) -> dict:
    turn: dict = {"tool_calls": [{"name": "run_command", "arguments": {"command": line}}]}
    if expect:
        turn["expect"] = expect
    return turn


def renamed_then_back(rename: str, said: str) -> list[dict]:
    """A command that renames util.py's ``double`` (``rename``), the model's
    answer, then the repair that puts the name back, once the prompt names
    app.py's broken import."""
    back = "sed -i 's/def twice/def double/' pkg/util.py"
    return [
        command(rename),
        {"text": said},
        command(back, last_message_contains="pkg/app.py"),
        {"text": "put the name back"},
    ]


async def run(root: Path, script: list[dict]) -> tuple[object, ReplayModel, EventLog]:
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    model = ReplayModel(script)
    events = EventLog()
    async with HeadlessSession(root, model, config, approver=ApproveAll()) as session:
        assert session.pool.large
        session.agent.subscribe(events)
        result = await session.prompt("tidy the helpers")
    return result, model, events


async def test_a_function_renamed_by_sed_blocks_on_its_importers_only(package: Path) -> None:
    """``sed -i.bak`` leaves pkg/util.py.bak, a file no analyzer reads: it
    reaches nothing, so the verdicts judge the importers (it made what the
    change can reach "not known", every verdict unverified)."""
    script = renamed_then_back(
        "sed -i.bak 's/def double/def twice/' pkg/util.py", "renamed double to twice"
    )
    result, model, events = await run(package, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    first, second = events.gate_results("analyzer")
    assert first.status == "blocked"
    # Exactly the importers' new errors: each names the renamed function;
    # none of the three errors util.py and app.py already had.
    # (Lines from 0: app.py's import, cli.py's call.)
    where = sorted({(b.path, b.line) for b in first.blockers})
    assert where == [("pkg/app.py", 2), ("pkg/cli.py", 6)], first.blockers
    assert all("double" in b.message for b in first.blockers), first.blockers
    repair = model.requests[2].messages[-1].content
    assert "factor" not in repair and "pkg/util.py" not in repair
    assert '"app"' not in repair
    assert (second.status, second.blockers) == ("passed", []), second.detail
    assert (package / "pkg" / "util.py.bak").read_text() == UTIL


async def test_a_command_that_adds_one_error_to_a_file_with_errors_blocks_on_it(
    package: Path,
) -> None:
    script = [
        command("""printf 'LIMIT: int = "ten"\\n' >> pkg/util.py"""),
        {"text": "added a limit"},
        command("sed -i '/^LIMIT/d' pkg/util.py", last_message_contains="pkg/util.py:14"),
        {"text": "removed it"},
    ]
    result, _, events = await run(package, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    first, second = events.gate_results("analyzer")
    assert first.status == "blocked"
    [blocker] = first.blockers
    assert (blocker.path, blocker.line) == ("pkg/util.py", 13), blocker
    assert blocker.message.startswith("Type \"Literal['ten']\" is not assignable"), blocker
    assert (second.status, second.blockers) == ("passed", [])
    # The line deleted again, sed's temporary files gone, basedpyright's
    # environment (the interpreter on PATH) watched and unchanged: the tree
    # is the baselines', not analysed again (rein.analysis.restored).
    assert second.detail.startswith("every changed file is back to its text"), second.detail


async def test_a_file_renamed_by_a_command_keeps_the_errors_it_had(package: Path) -> None:
    # util.py moved, its docstring touched (near-same text), its importers fixed.
    moved = (
        "mv pkg/util.py pkg/helpers.py"
        " && sed -i 's/Helpers, with/Helpers (moved), with/' pkg/helpers.py"
        " && sed -i 's/pkg.util import/pkg.helpers import/' pkg/app.py"
        " && sed -i 's/from pkg import util/from pkg import helpers as util/' pkg/cli.py"
    )
    result, _, events = await run(package, [command(moved), {"text": "moved the helpers"}])
    assert result.status == "completed", result.error
    [verdict] = events.gate_results("analyzer")
    # helpers.py's two errors are util.py's, carried to the new path.
    assert (verdict.status, verdict.blockers) == ("passed", []), (verdict.blockers, verdict.detail)
    assert (package / "pkg" / "helpers.py").read_text().startswith('"""Helpers (moved), with')


async def test_a_write_then_a_sed_blocks_on_the_importers_only_judged_file_by_file(
    package: Path,
) -> None:
    """A write of util.py (its importers opened, owed their baseline), then
    a ``sed`` that renames a function it defines: the verdict is the
    file-by-file one (open files only, a command changed a module:
    ``RunBaselines.per_file``), and blocks on exactly the two importer
    errors the rename made, none of the three errors util.py and app.py
    had; putting the name back passes."""
    script = [
        edit_turn("pkg/util.py", "Helpers, with", "Helpers (tidied), with"),
        *renamed_then_back("sed -i 's/def double/def twice/' pkg/util.py", "tidied and renamed"),
    ]
    result, _, events = await run(package, script)
    assert result.status == "completed", result.error
    first, second = events.gate_results("analyzer")
    assert first.status == "blocked"
    where = sorted({(b.path, b.line) for b in first.blockers})
    assert where == [("pkg/app.py", 2), ("pkg/cli.py", 6)], first.blockers
    assert "partial: judged on the changed files and their importers" in first.detail
    assert (second.status, second.blockers) == ("passed", []), second.detail
