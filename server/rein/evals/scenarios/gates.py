"""Gate scenarios with the real analyzers, and the preview."""

from __future__ import annotations

from rein.config import load_config
from rein.evals._registry import Outcome, Rig, scenario
from rein.evals.scenarios._common import (
    Events,
    call,
    headless,
)
from rein.providers.replay import ReplayModel


@scenario("gates", budget=4)
async def eval_gate_real_analyzer_repair(rig: Rig) -> Outcome:
    turns = [
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
        {"text": "done"},
        {
            "expect": {"last_message_contains": "nmae"},
            **call("edit_file", path="app.py", old_string="{nmae}", new_string="{name}"),
        },
        {"text": "fixed"},
    ]
    events = Events()
    async with headless(rig, turns) as session:
        session.agent.subscribe(events)
        result = await session.prompt("edit")
        calls = len(session.agent.model.requests)
    return Outcome(result.status, calls, list(events), check=result.repair_attempts == 1)


@scenario("gates", budget=3)
async def eval_gate_budget_exhausted(rig: Rig) -> Outcome:
    turns = [
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
        {"text": "done"},
        {"text": "still done"},
    ]
    events = Events()
    async with headless(rig, turns, {"harness": {"maxRepairAttempts": 1}}) as session:
        session.agent.subscribe(events)
        result = await session.prompt("edit")
        calls = len(session.agent.model.requests)
    return Outcome(
        result.status, calls, list(events), expect_status="failed", check=bool(result.blockers)
    )


@scenario("gates", budget=2)
async def eval_dependency_install_once(rig: Rig) -> Outcome:
    (rig.root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    turns = [
        call(
            "edit_file",
            path="pyproject.toml",
            old_string='version = "1"',
            new_string='version = "2"',
        ),
        {"text": "bumped"},
    ]
    events = Events()
    config = {
        "gates": {"dependencies": {"commands": {"pyproject.toml": "echo ran >> installs.log"}}}
    }
    async with headless(rig, turns, config) as session:
        session.agent.subscribe(events)
        result = await session.prompt("bump")
        calls = len(session.agent.model.requests)
    runs = (rig.root / "installs.log").read_text().splitlines()
    return Outcome(
        result.status, calls, list(events), check=runs == ["ran"], why=f"installs: {runs}"
    )


# ------------------------------------------------------------------ preview

_PREVIEW_APP = """import importlib, signal, sys, time, traceback
import settings

def load():
    importlib.reload(settings)
    if settings.THRESHOLD < 0:
        raise ValueError(f"threshold must not be negative, got {settings.THRESHOLD}")
    print(f"threshold is {settings.THRESHOLD}")
    print("ready", flush=True)

def on_hangup(signum, frame):
    try:
        load()
    except Exception:
        traceback.print_exc()

load()
signal.signal(signal.SIGHUP, on_hangup)
while True:
    time.sleep(3600)
"""


@scenario("preview", budget=4)
async def eval_preview_runtime_error_repaired(rig: Rig) -> Outcome:
    """Analyzer-clean code that crashes at run time: the preview's traceback
    reaches the model, the fix is loaded and observed clean."""
    import sys

    from rein.headless.host import HeadlessSession

    (rig.root / "app.py").write_text(_PREVIEW_APP)
    (rig.root / "settings.py").write_text("THRESHOLD = 3\n")
    config = load_config(
        {
            "gates": {
                "analyzer": {"enabled": False},
                "preview": {
                    "command": f"{sys.executable} app.py",
                    "reload": "signal",
                    "readiness": {"line": "^ready$"},
                    "observationWindowMs": 300,
                },
            }
        }
    )
    turns = [
        call(
            "edit_file", path="settings.py", old_string="THRESHOLD = 3", new_string="THRESHOLD = -1"
        ),
        {"text": "done"},
        {
            "expect": {"last_message_contains": "threshold must not be negative"},
            **call(
                "edit_file",
                path="settings.py",
                old_string="THRESHOLD = -1",
                new_string="THRESHOLD = 5",
            ),
        },
        {"text": "fixed"},
    ]
    model = ReplayModel(turns)
    events = Events()
    async with HeadlessSession(rig.root, model, config, watch=False) as session:
        session.subscribe(events)
        result = await session.prompt("make the threshold negative")
        running = session.preview.pid is not None
    return Outcome(
        result.status,
        len(model.requests),
        list(events),
        check=result.repair_attempts == 1 and running,
        why="one runtime repair, preview still running",
    )
