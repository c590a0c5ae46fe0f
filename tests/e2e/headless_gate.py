"""What the headless e2e tests of the analyzer gate share: a workspace
written from texts, a scripted model turn that edits a file, the analyzer
presets with one of them on, and one prompt in a real headless session
(the real analyzers, started before the prompt) with its events kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rein.config import ReinConfig
from rein.harness import RunResult
from rein.harness.analyzer_servers import PRESETS
from rein.harness.ports import Approver
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog


def write_workspace(root: Path, files: Mapping[str, str], *, project: str | None = None) -> None:
    """Make ``root`` with ``files`` (path -> text, folders made) in it;
    with a ``pyproject.toml`` naming ``project`` when one is given."""
    root.mkdir()
    if project is not None:
        (root / "pyproject.toml").write_text(f'[project]\nname = "{project}"\nversion = "0.1.0"\n')
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def edit_turn(path: str, old: str, new: str) -> dict[str, Any]:
    """A scripted model turn: one ``edit_file`` call."""
    args = {"path": path, "old_string": old, "new_string": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": args}]}


def only_server(name: str) -> list[dict[str, Any]]:
    """``gates.analyzer.servers`` with the preset ``name`` on, every other off."""
    return [{"name": p.name, "enabled": p.name == name} for p in PRESETS]


@dataclass(frozen=True)
class Prompted:
    """One prompt's result, the run's events, and whether the session's
    pool found the workspace large (checked file by file)."""

    result: RunResult
    events: EventLog
    large: bool

    def analyzer_gates(self) -> list[Any]:
        """The analyzer gate's verdicts, in order."""
        return self.events.gate_results("analyzer")


async def prompt_headless(
    root: Path,
    script: Sequence[dict[str, Any]],
    config: ReinConfig,
    task: str,
    *,
    approver: Approver | None = None,
    watch: bool = False,
) -> Prompted:
    """``task`` answered by ``script`` in a headless session of ``root``,
    once its analyzers have started."""
    events = EventLog()
    model = ReplayModel(list(script))
    async with HeadlessSession(root, model, config, approver=approver, watch=watch) as session:
        session.agent.subscribe(events)
        large = session.pool.large
        await session.analyzers_started()
        result = await session.prompt(task)
    return Prompted(result, events, large)
