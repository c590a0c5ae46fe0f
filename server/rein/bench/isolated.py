"""``rein bench isolated [N]``: N ``rein run --isolated`` at once on one
git repository (the replay model, the real analyzers), then ``rein apply``
of each.

Each run edits its own function of one module, so every apply is clean.
While they run, the resident memory of every process of the runs (each
``rein run`` and the analyzers it started) is summed every 100 ms; the
peak of that sum is the row's ``peak_rss_mb``. The row also gives the wall
time until the last run ended, each run's verdict, and the worktrees left
after the applies (none). Figures go to docs/performance.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["RUNS", "bench_isolated"]

#: Runs at once by default.
RUNS = 4
#: The bound on one run (a stuck run fails the bench).
BOUND_S = 300.0


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(entry))
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree_rss_kb(roots: list[int]) -> int:
    """The resident memory of ``roots`` and all their descendants."""
    children = _children()
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo.extend(children.get(pid, ()))
    return sum(_rss_kb(pid) for pid in seen)


def _project(root: Path, runs: int) -> None:
    root.mkdir()
    body = "".join(f"def f{i}(x: int) -> int:\n    return x + {i}\n\n\n" for i in range(runs))
    (root / "mod.py").write_text(body)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-qm", "init")


def _script(tmp: Path, i: int) -> Path:
    edit = {
        "name": "edit_file",
        "arguments": {
            "path": "mod.py",
            "old_string": f"return x + {i}\n",
            "new_string": f"return x + {i} * 10\n",
        },
    }
    path = tmp / f"run{i}.json"
    path.write_text(json.dumps({"turns": [{"tool_calls": [edit]}, {"text": "done"}]}))
    return path


def bench_isolated(runs: int = RUNS) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="rein-bench-isolated-") as name:
        tmp = Path(name)
        root, storage = tmp / "repo", tmp / "store"
        _project(root, runs)
        rein = [sys.executable, "-m", "rein"]
        start = time.perf_counter()
        procs = [
            subprocess.Popen(
                [
                    *rein, "run", f"task {i}", "-w", str(root), "--provider", "replay",
                    "--script", str(_script(tmp, i)), "--storage", str(storage),
                    "--yes", "--json", "--isolated",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                text=True,
            )
            for i in range(runs)
        ]  # fmt: skip
        peak = 0
        while any(p.poll() is None for p in procs):
            peak = max(peak, _tree_rss_kb([p.pid for p in procs if p.poll() is None]))
            if time.perf_counter() - start > BOUND_S:
                for p in procs:
                    p.kill()
                raise SystemExit(f"rein bench isolated: the runs took over {BOUND_S:g} s")
            time.sleep(0.1)  # the sampling period
        wall = time.perf_counter() - start
        verdicts: list[str] = []
        sessions: list[str] = []
        for p in procs:
            out = p.stdout.read() if p.stdout else ""
            last = json.loads(out.strip().splitlines()[-1])
            verdicts.append(last["result"]["status"])
            sessions.append(last["isolated"]["sessionId"])
        applied = 0
        for session in sessions:
            done = subprocess.run(
                [*rein, "apply", session, "--storage", str(storage)],
                capture_output=True,
                timeout=BOUND_S,
            )
            applied += done.returncode == 0
        left = _git(root, "worktree", "list").count("\n") - 1
        return [
            {
                "runs": runs,
                "wall_s": round(wall, 1),
                "peak_rss_mb": round(peak / 1024),
                "per_run_mb": round(peak / 1024 / runs),
                "verdicts": ",".join(verdicts),
                "applied_clean": applied,
                "worktrees_left": left,
            }
        ]
