"""``rein demo``: a whole scripted session offline.

Copies ``examples/project`` to a temporary folder and runs the replay script
``examples/demo.yaml`` against it headless: real tools on the disk, the real
analyzers (ruff and basedpyright) as the gate, the repair loop. Prints the
event stream.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import anyio

from rein.config import ReinConfig
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from rein.render import EventPrinter

__all__ = ["examples_dir", "run_demo"]

TASK = "Add a total_value(items) function to inventory.py that returns the stock value."


def examples_dir() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "examples"
        if (candidate / "demo.yaml").exists():
            return candidate
    raise FileNotFoundError("examples/demo.yaml not found next to the rein sources")


async def _demo(workspace: Path, script: Path, as_json: bool, keep: bool = False) -> int:
    model = ReplayModel(script)
    printer = EventPrinter(as_json=as_json)
    async with HeadlessSession(workspace, model, ReinConfig(), watch=False) as session:
        if not as_json:
            # The analyzers start in the background; the demo waits for them
            # so that the line names what runs (as `rein run` says on stderr).
            await session.host.analyzers_started()
            fate = "kept" if keep else "removed at the end; --keep keeps it"
            print(
                f"workspace: {workspace} (a copy of examples/project, {fate})\n"
                f"{session.analyzers_line()}\nmodel: replay ({script.name})\n"
            )
        session.agent.subscribe(printer)
        result = await session.prompt(TASK)
    if not as_json:
        print()
        print(
            f"status: {result.status}; turns: {result.turns}; "
            f"repair attempts: {result.repair_attempts}"
        )
        lines = (workspace / "inventory.py").read_text().splitlines()
        start = next((i for i, line in enumerate(lines) if "def total_value" in line), None)
        if start is not None:
            print("\ninventory.py now has:\n")
            print("\n".join(lines[start : start + 2]))
    return 0 if result.status == "completed" else 1


def run_demo(*, keep: bool = False, as_json: bool = False) -> int:
    examples = examples_dir()
    tmp = Path(tempfile.mkdtemp(prefix="rein-demo-"))
    workspace = tmp / "project"
    shutil.copytree(examples / "project", workspace)
    try:
        return anyio.run(_demo, workspace, examples / "demo.yaml", as_json, keep)
    finally:
        if keep:
            print(f"\n(kept {workspace})", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
