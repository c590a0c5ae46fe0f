"""``rein run --mode plan`` end to end: the real CLI as a subprocess, its
model an ``openai`` provider talking real HTTP to ``rein mock-server`` (a
subprocess too), real analyzers, edits on disk. The scenario is a two-step
plan with edits whose second step fails, a replan, and a revised step that a
subagent (the ``task`` tool) carries out. Each turn's ``expect`` checks the
request it answers, so the tool sets and the prompts are checked at the wire.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import mock_server
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

APP = """\
def greet(name: str) -> str:
    return f"hello {name}"
"""

FAREWELL = """

def farewell(name: str) -> str:
    return f"bye {name}"
"""


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _plan(*steps: tuple[str, str], **expect: Any) -> dict[str, Any]:
    return {
        "expect": {
            "tools_include": ["submit_plan"],
            "tools_exclude": ["edit_file", "task", "complete_step"],
            **expect,
        },
        "tool_calls": [_call("submit_plan", steps=[{"id": i, "description": d} for i, d in steps])],
    }


def _step(*calls: dict[str, Any], **expect: Any) -> dict[str, Any]:
    return {
        "expect": {
            "tools_include": ["edit_file", "task", "complete_step"],
            "tools_exclude": ["submit_plan"],
            **expect,
        },
        "tool_calls": list(calls),
    }


SCENARIO: list[dict[str, Any]] = [
    _plan(
        ("s1", "Add a docstring to greet in app.py"),
        ("s2", "Add farewell() to util.py"),
        last_message_contains="Document greet and add farewell",
    ),
    _step(
        _call(
            "edit_file",
            path="app.py",
            old_string="    return f",
            new_string='    """Say hello."""\n    return f',
        ),
        last_message_contains="Step 1 of 2 — s1",
    ),
    _step(_call("complete_step", step_id="s1", success=True, summary="greet has a docstring")),
    _step(_call("read_file", path="util.py"), last_message_contains="Step 2 of 2 — s2"),
    _step(
        _call("complete_step", step_id="s2", success=False, summary="util.py does not exist"),
        last_role="tool",
    ),
    _plan(
        ("s3", "Have a subagent add farewell() to app.py"),
        last_message_contains="Step s2 failed: util.py does not exist",
    ),
    _step(
        _call(
            "task",
            description="Add farewell",
            prompt="Append a function farewell(name: str) -> str returning f'bye {name}' "
            "to app.py.",
            tools=["read_file", "edit_file"],
        ),
        last_message_contains="s3: Have a subagent add farewell() to app.py",
    ),
    # The subagent: its own context (the task's prompt), its own tools.
    {
        "expect": {
            "last_message_contains": "Append a function farewell",
            "messages_exclude": ["Step 1 of 2"],
            "tools_include": ["read_file", "edit_file"],
            "tools_exclude": ["task", "complete_step", "submit_plan"],
        },
        "tool_calls": [_call("read_file", path="app.py")],
    },
    {
        "tool_calls": [
            _call(
                "edit_file",
                path="app.py",
                old_string='    return f"hello {name}"\n',
                new_string='    return f"hello {name}"\n' + FAREWELL,
            )
        ]
    },
    {"text": "Added farewell() to app.py."},
    _step(
        _call("complete_step", step_id="s3", success=True, summary="a subagent added farewell()"),
        last_role="tool",
        last_message_contains="Added farewell() to app.py.",
    ),
    {
        "expect": {"last_message_contains": "All steps are done", "tools_exclude": ["edit_file"]},
        "text": "greet() is documented; farewell() was added by a subagent.",
    },
]


@pytest.fixture
def mock_url(tmp_path: Path) -> Iterator[str]:
    """``rein mock-server`` as a subprocess, serving SCENARIO."""
    with mock_server(tmp_path, "plan-cli", SCENARIO) as url:
        yield url


def test_rein_run_plan_mode_with_edits_a_replan_and_a_subagent(
    tmp_path: Path, mock_url: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text(APP)
    config = tmp_path / "rein.json"
    config.write_text(json.dumps({"model": {"apiKeyEnv": ""}}))  # the mock needs no key

    out = subprocess.run(
        [*REIN, "run", "Document greet and add farewell",
         "-w", str(project), "--mode", "plan", "--json", "--yes",
         "--provider", "openai", "--base-url", mock_url + "/v1", "--model", "mock-model",
         "--config", str(config), "--storage", str(tmp_path / "storage")],
        capture_output=True,
        text=True,
        timeout=180,
    )  # fmt: skip

    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    result = lines[-1]["result"]
    assert result["status"] == "completed", result
    assert result["text"] == "greet() is documented; farewell() was added by a subagent."
    events = lines[:-1]  # one event per line, then the result
    states = [e["state"] for e in events if e["type"] == "plan_state"]
    assert states == ["planning", "executing", "updating", "executing", "summarizing", "completed"]
    reasons = [e["reason"] for e in events if e["type"] == "plan_updated"]
    assert reasons.count("step_failed") == 1 and reasons.count("revised") == 1
    final = [e for e in events if e["type"] == "plan_updated"][-1]["steps"]
    assert [(s["id"], s["status"]) for s in final] == [("s1", "done"), ("s3", "done")]
    # The subagent ran inside step s3, and its edit counts in the plan's run.
    activity = [e for e in events if e["type"] == "subagent_activity"]
    assert {a["name"] for a in activity} == {"Add farewell"}
    child_tools = [a["event"]["name"] for a in activity if a["event"]["type"] == "tool_call_end"]
    assert child_tools == ["read_file", "edit_file"]
    assert len(result["generations"]) == 2
    # The real analyzers checked the plan's changes after its last step.
    last_gate = [e for e in events if e["type"] == "gate_result"][-1]
    assert (last_gate["gate"], last_gate["status"]) == ("analyzer", "passed")
    # Both edits are on disk.
    assert (project / "app.py").read_text() == (
        'def greet(name: str) -> str:\n    """Say hello."""\n    return f"hello {name}"\n'
        + FAREWELL
    )
    # The scenario was used up, every request answered.
    state = httpx.get(mock_url + "/mock/scenario").json()
    assert state["index"] == state["turns"] == len(SCENARIO)
    outcomes = {r["outcome"] for r in httpx.get(mock_url + "/mock/requests").json()["requests"]}
    assert outcomes == {"completed"}
