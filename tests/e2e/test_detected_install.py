"""A manifest change installs into the project's ``.venv`` by default, with
no ``gates.dependencies`` configured (issue 33, item 4): a scripted ``rein
run`` adds a local wheel to ``requirements.txt``, and the package is in the
``.venv`` after the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_analyzer_environment import fancylib_wheel
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e


def test_a_requirements_edit_installs_into_the_venv_without_configuration(
    tmp_path: Path, wheels: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(root / ".venv")], check=True, timeout=120)
    fancylib_wheel(wheels)
    (root / "app.py").write_text("print('hello')\n")
    write = {
        "name": "write_file",
        "arguments": {"path": "requirements.txt", "content": "fancylib\n"},
    }
    script = tmp_path / "s.yaml"
    script.write_text(
        yaml.safe_dump({"name": "install", "turns": [{"tool_calls": [write]}, {"text": "done"}]})
    )
    # Offline: the child's installer finds the wheel in the folder only.
    env = {
        **os.environ,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "UV_OFFLINE": "1",
        "UV_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    out = subprocess.run(
        [*REIN, "run", "use fancylib", "-w", str(root),
         "--provider", "replay", "--script", str(script), "--yes", "--json",
         "--storage", str(tmp_path / "storage")],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    deps = [e for e in events if e.get("type") == "gate_result" and e["gate"] == "dependencies"]
    assert [r["passed"] for r in deps] == [True], deps
    assert "-r requirements.txt" in deps[0]["detail"]
    check = subprocess.run(
        [str(root / ".venv" / "bin" / "python"), "-c", "import fancylib; print(fancylib.VALUE)"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert check.stdout.strip() == "1", check.stderr
