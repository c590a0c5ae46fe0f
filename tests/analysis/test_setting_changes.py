"""rein.analysis.setting_changes: where the run changed a setting the
analyzers read, every baseline is the run-start snapshot's (the analyzers
gave the others with the new setting in force), and a verdict that cannot
be judged so does not pass. The real servers: tests/e2e/test_setting_changes.py."""

from __future__ import annotations

import pytest

from rein.analysis.baselines import FileBaseline
from rein.analysis.setting_changes import (
    dependencies_only,
    judged_from_run_start,
    settings_moved,
    unseen_setting,
)
from rein.harness.gate_events import Blocker
from rein.harness.gating.gate_types import GateOutcome
from rein.harness.ports import Diagnostic
from tests.fakes.diagnostics import SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace


def _error(path: str, line: int, code: str) -> Diagnostic:
    return Diagnostic(path=path, line=line, message=code, code=code)


RUN_START = {
    "m.py": (_error("m.py", 0, "E501"),),
    "old.py": (_error("old.py", 2, "E711"),),
    "importer.py": (_error("importer.py", 1, "E741"),),
}


def _run_start(path: str) -> tuple[Diagnostic, ...]:
    return RUN_START.get(path, ())


def test_every_baseline_becomes_the_run_starts_entries() -> None:
    late_found = _error("m.py", 0, "F401")  # what ruff's widened select adds
    files = {
        "m.py": FileBaseline("m.py", "import os\n", (RUN_START["m.py"][0], late_found), False),
        # Renamed from old.py: the old path's entries, carried to the new one.
        "new.py": FileBaseline("new.py", "x = None\n", (), renamed_from="old.py"),
    }
    late = {"importer.py": (_error("importer.py", 1, "E741"), _error("importer.py", 3, "ANN001"))}
    judged_from_run_start(files, late, _run_start)
    assert files["m.py"] == FileBaseline("m.py", "import os\n", RUN_START["m.py"], True)
    renamed = files["new.py"]
    assert renamed.renamed_from == "old.py"
    assert renamed.text == "x = None\n"
    assert [(d.path, d.line, d.code) for d in renamed.diagnostics] == [("new.py", 2, "E711")]
    assert late == {"importer.py": RUN_START["importer.py"]}


def test_a_verdict_not_judged_so_is_unverified_unless_something_blocks() -> None:
    passed = unseen_setting(GateOutcome(detail="0 blocking"), ["ruff.toml", "pyproject.toml"])
    said = "a setting the analyzers read from the disk changed (pyproject.toml, ruff.toml)"
    assert passed.unverified is not None and said in passed.unverified
    assert said in passed.detail
    earlier = GateOutcome(detail="0 blocking", unverified="stale")
    both = unseen_setting(earlier, ["pyproject.toml"]).unverified or ""
    assert both.startswith("stale; a setting the analyzers read from the disk changed (pyproject")
    blocker = Blocker(gate="analyzer", path="m.py", line=0, message="F401")
    blocked = unseen_setting(GateOutcome([blocker], detail="1 blocking"), ["pyproject.toml"])
    assert blocked.blockers == [blocker] and blocked.unverified is None
    assert "changed (pyproject.toml)" in blocked.detail


BEFORE = """[project]
name = "app"
requires-python = ">=3.10"
dependencies = ["requests"]

[tool.ruff.lint]
select = ["E"]
"""


@pytest.mark.parametrize(
    ("now", "only"),
    [
        (BEFORE.replace('["requests"]', '["requests", "rich>=13"]'), True),
        (BEFORE + '\n[project.optional-dependencies]\ndev = ["pytest"]\n', True),
        (BEFORE + '\n[dependency-groups]\ntest = ["pytest"]\n', True),
        (BEFORE + '\n[build-system]\nrequires = ["hatchling"]\n', True),
        (BEFORE.replace('["E"]', '["ALL"]'), False),  # ruff reads it
        (BEFORE.replace(">=3.10", ">=3.12"), False),  # ruff's target version
        (BEFORE + '\n[build-system]\nbuild-backend = "hatchling.build"\n', False),
        (BEFORE + "\n[tool.basedpyright]\ntypeCheckingMode = 'all'\n", False),
        ("[project\nname = 1", False),  # no TOML: a change as any other
    ],
)
def test_a_dependency_added_to_pyproject_is_no_setting_changed(now: str, only: bool) -> None:
    assert dependencies_only(BEFORE, now) is only


@pytest.mark.parametrize(
    ("was", "moved"),
    [
        (BEFORE, []),  # a tool changed it: its text before is known
        (None, ["pyproject.toml"]),  # a command changed it: not known
    ],
)
async def test_settings_moved_leaves_out_a_pyproject_whose_dependencies_only_changed(
    was: str | None, moved: list[str]
) -> None:
    now = BEFORE.replace('["requests"]', '["requests", "rich"]')
    source = SettlingFakeDiagnostics()
    source.uncovered = {".toml"}  # read, never opened
    workspace = FakeWorkspace({"pyproject.toml": now, "m.py": "import rich\n"})
    files = {} if was is None else {"pyproject.toml": FileBaseline("pyproject.toml", was, ())}
    touched = {"pyproject.toml", "m.py"}
    assert await settings_moved(source, touched, files, workspace) == moved
    widened = now.replace('["E"]', '["ALL"]')
    workspace.files["pyproject.toml"] = widened
    assert await settings_moved(source, touched, files, workspace) == ["pyproject.toml"]
