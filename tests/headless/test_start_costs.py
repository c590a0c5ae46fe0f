"""What a command imports before it can refuse or answer: ``rein run``
refuses a folder that is not there before the headless stack is imported,
and ``rein undo`` does its work without the session assembly (start-up
figures in docs/performance.md; none is asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import json, sys
from rein.cli import main

heavy = ("rein.headless.run", "rein.hosting", "rein.session", "rein.providers")
loaded = lambda: [name for name in heavy if name in sys.modules]
run = main(["run", "x", "-w", sys.argv[1]])
after_run = loaded()
undo = main(["undo", sys.argv[2], "--storage", sys.argv[3]])
print(json.dumps({"run": [run, after_run], "undo": [undo, loaded()]}))
"""


def test_run_refuses_a_missing_folder_and_undo_works_without_the_session_stack(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path / "missing"), str(tmp_path / "ws"),
         str(tmp_path / "store")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == {"run": [2, []], "undo": [2, []]}
    assert f"rein run: the workspace {tmp_path / 'missing'} is not a folder" in out.stderr
    # A storage folder with no store is said so, and not created.
    assert f"rein undo: no session store in {tmp_path / 'store'} (no sessions.db)" in out.stderr
    assert not (tmp_path / "store").exists()
