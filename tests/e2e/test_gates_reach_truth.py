"""The analyzer gate's reach path with the real analyzers, headless: in a
workspace past ``gates.analyzer.workspaceMaxFiles`` basedpyright checks the
open files only, and a changed file's importers are opened with it, not
theirs. A break the change makes in an importer's importer is seen only by
asking what the change can reach (its importers, transitively) file by
file (:func:`~rein.analysis.reach_verdict.judge_reach`), which the gate does
through the session's diagnostics coordinator."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.config import load_config
from tests.e2e.headless_gate import edit_turn, prompt_headless, write_workspace

pytestmark = pytest.mark.e2e

LIB = '''"""The greeting."""


def greet(name: str) -> str:
    return f"hello {name}"
'''

# Imports lib, passes greet on: no call of its own to break.
MID = '''"""Passes the greeting on."""

from lib import greet

__all__ = ["greet"]
'''

TOP = '''"""Uses the greeting through mid, and has an error of its own already."""

from mid import greet


def welcome() -> str:
    return greet("visitor") + undefined_banner
'''


def edit(old: str, new: str) -> dict:
    return edit_turn("lib.py", old, new)


async def test_a_break_in_an_importers_importer_is_caught_by_asking_what_the_change_reaches(
    tmp_path: Path,
) -> None:
    root = tmp_path / "greeting"
    write_workspace(root, {"lib.py": LIB, "mid.py": MID, "top.py": TOP}, project="greeting")
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    script = [
        edit("def greet(name: str) -> str:", "def greet(name: str, loud: bool) -> str:"),
        {"text": "done"},
        {
            "expect": {"last_message_contains": "top.py"},
            **edit(
                "def greet(name: str, loud: bool) -> str:",
                "def greet(name: str, loud: bool = False) -> str:",
            ),
        },
        {"text": "made it optional"},
    ]
    ran = await prompt_headless(root, script, config, "make greet loud")
    assert ran.large
    result = ran.result
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    first, second = ran.analyzer_gates()
    # The call the change broke two imports away; not top.py's old error.
    assert [(b.path, b.line, b.code) for b in first.blockers] == [
        ("top.py", 6, "reportCallIssue")
    ], first.blockers
    assert (second.status, second.blockers) == ("passed", [])
    assert "the 3 files the change can reach" in second.detail, second.detail
