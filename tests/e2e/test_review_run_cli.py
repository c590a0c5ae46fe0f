"""``rein run`` with ``approval.write: "review"`` end to end: the real CLI
as a subprocess, its model an ``openai`` provider talking real HTTP to
``rein mock-server`` (a subprocess too), edits on disk, checkpoints in a
real SQLite file. The changes stay applied and pending; the output lists
them and says how to undo them."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import mock_server
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

APP = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'

SCENARIO: list[dict[str, Any]] = [
    {
        "expect": {"tools_include": ["edit_file", "write_file"]},
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "app.py", "old_string": "hello", "new_string": "hi"},
            }
        ],
    },
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.py", "content": "X = 1\n"}}]},
    {"expect": {"last_role": "tool"}, "text": "Changed the greeting and added new.py."},
]


@pytest.fixture
def mock_url(tmp_path: Path) -> Iterator[str]:
    """``rein mock-server`` as a subprocess, serving SCENARIO."""
    with mock_server(tmp_path, "review-cli", SCENARIO) as url:
        yield url


def _run(
    tmp_path: Path, mock_url: str, *flags: str
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text(APP)
    config = tmp_path / "rein.json"
    # The mock needs no key; no analyzer, so the run does not wait on one.
    config.write_text(
        json.dumps({"model": {"apiKeyEnv": ""}, "approval": {"write": "review"},
                    "gates": {"analyzer": {"enabled": False}}})
    )  # fmt: skip
    out = subprocess.run(
        [*REIN, "run", "Make greet friendlier", "-w", str(project),
         "--provider", "openai", "--base-url", mock_url + "/v1", "--model", "mock-model",
         "--config", str(config), "--storage", str(tmp_path / "storage"), *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    return project, out


def test_rein_run_in_review_mode_lists_the_pending_changes_and_how_to_undo_them(
    tmp_path: Path, mock_url: str
) -> None:
    project, out = _run(tmp_path, mock_url)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    # Applied, not asked about.
    assert (project / "app.py").read_text() == APP.replace("hello", "hi")
    assert (project / "new.py").read_text() == "X = 1\n"
    assert "⧗ pending review (2 file(s), applied; keep or undo them): app.py, new.py" in out.stdout
    assert 'Pending review (approval.write is "review"): these changes are applied.' in out.stderr
    assert re.search(r"^  modified  app\.py$", out.stderr, re.M), out.stderr
    assert re.search(r"^  created   new\.py$", out.stderr, re.M), out.stderr
    undo = re.search(r"Undo them with: (rein undo .*)$", out.stderr, re.M)
    assert undo is not None, out.stderr
    command = shlex.split(undo.group(1))
    assert command[:3] == ["rein", "undo", "--session"] and command[3].startswith("ses_")
    assert command[-3:] == ["--storage", str(tmp_path / "storage"), str(project)]
    # The command it prints undoes the run: the files are as before it.
    done = subprocess.run([*REIN, *command[1:]], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "app.py").read_text() == APP
    assert not (project / "new.py").exists()


def test_rein_run_json_result_marks_each_change_pending(tmp_path: Path, mock_url: str) -> None:
    _, out = _run(tmp_path, mock_url, "--json")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    result = lines[-1]["result"]
    assert result["changes"] == [
        {"path": "app.py", "change": "modified", "review": "pending"},
        {"path": "new.py", "change": "created", "review": "pending"},
    ]
    [pending] = [e for e in lines[:-1] if e.get("type") == "review_pending"]
    assert (pending["run_id"], pending["paths"]) == (result["runId"], ["app.py", "new.py"])
