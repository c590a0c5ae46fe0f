"""The preview with real processes: tests/workspaces/previewapp, a program
that prints "ready" and raises ValueError on a negative threshold."""

from __future__ import annotations

import shlex
import shutil
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.config import ReinConfig, load_config
from rein.disk.watcher import DiskWatcher
from rein.harness.gating.gates import GateContext
from rein.hosting.headless import HeadlessSession
from rein.preview.coordinator import PreviewCoordinator
from rein.preview.gates import PreviewStartGate
from rein.process.groups import group_alive
from rein.process.listening import listening_ports
from rein.process.preview import SubprocessPreviewFactory
from rein.providers.replay import ReplayModel
from tests.e2e.conftest import WORKSPACES
from tests.fakes.events import EventLog, WaitingEventLog
from tests.fakes.workspace import FakeWorkspace
from tests.preview_programs import DEVSERVER, WRITER

pytestmark = pytest.mark.e2e

PYTHON = shlex.quote(sys.executable)
APP = f"{PYTHON} app.py"
BAD_VALUE = "ValueError: threshold must not be negative, got -1"


@pytest.fixture
def previewapp(tmp_path: Path) -> Path:
    target = tmp_path / "previewapp"
    shutil.copytree(WORKSPACES / "previewapp", target)
    return target


def preview_config(analyzer: bool = True, **preview: Any) -> ReinConfig:
    return load_config(
        {
            "gates": {
                "analyzer": {"enabled": analyzer},
                "preview": {
                    "command": APP,
                    "readiness": {"line": "^ready$"},
                    "observationWindowMs": 500,
                    "stopTimeoutMs": 2000,
                    **preview,
                },
            }
        }
    )


def edit(old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "settings.py", "old_string": old, "new_string": new},
            }
        ],
    }


SCRIPT = [
    edit("THRESHOLD = 3", "THRESHOLD = -1"),
    {"text": "done"},
    edit(
        "THRESHOLD = -1",
        "THRESHOLD = 5",
        expect={"last_message_contains": BAD_VALUE},
    ),
    {"text": "the threshold is 5 now"},
]


async def test_a_runtime_error_in_the_running_preview_is_repaired(previewapp: Path) -> None:
    """The analyzers pass the change, the preview (reloaded with SIGHUP)
    prints a traceback, the model gets it, the fix is observed clean."""
    model = ReplayModel(SCRIPT)
    events = EventLog()
    config = preview_config(reload="signal")
    async with HeadlessSession(previewapp, model, config, watch=False) as session:
        session.agent.subscribe(events)
        session.preview_listeners.append(events)
        started = await session.preview.start(session.workspace.generation)
        assert started.ok, started.message
        pid = session.preview.pid
        assert pid is not None and group_alive(pid)
        result = await session.prompt("make the threshold negative")
        assert result.status == "completed", result.error
        assert result.repair_attempts == 1
        repair = model.requests[2].messages[-1].content
        assert "[runtime_observation] app.py:" in repair
        assert "    Traceback (most recent call last):" in repair
        assert BAD_VALUE in repair
        gates = [(e.gate, e.passed) for e in events.of("gate_result")]
        assert gates[:3] == [
            ("analyzer", True),
            ("preview_load", True),
            ("runtime_observation", False),
        ]
        assert gates[-3:] == [
            ("preview_load", True),
            ("runtime_observation", True),
            ("preview_start", True),
        ]
        # Loaded in place: the same process, now with the fixed value.
        assert session.preview.pid == pid
        assert "threshold is 5" in session.preview.status().lines
        assert [e.strategy for e in events.of("preview_reloaded")] == ["signal", "signal"]
        assert any(BAD_VALUE in e.lines for e in events.of("preview_error"))
    assert not group_alive(pid), "the preview outlived its session"


async def test_a_crash_at_start_blocks_and_the_fixed_preview_is_started(previewapp: Path) -> None:
    """No preview runs; the run changed code, so the preview is started: it
    exits with the traceback, the model fixes it, it starts and stays up."""
    model = ReplayModel(SCRIPT)
    events = EventLog()
    async with HeadlessSession(
        previewapp, model, preview_config(analyzer=False), analyzers=(), watch=False
    ) as session:
        session.agent.subscribe(events)
        result = await session.prompt("make the threshold negative")
        assert result.status == "completed", result.error
        repair = model.requests[2].messages[-1].content
        assert "[preview_start]" in repair and BAD_VALUE in repair
        assert "    Traceback (most recent call last):" in repair
        starts = [e for e in events.of("gate_result") if e.gate == "preview_start"]
        assert [e.passed for e in starts] == [False, True]
        assert session.preview.state == "running"
        pid = session.preview.pid
        assert pid is not None and group_alive(pid)
    assert not group_alive(pid)


async def test_a_preview_that_never_becomes_ready_is_stopped(previewapp: Path) -> None:
    code = "import os, time; print('booting in group', os.getpgrp(), flush=True); time.sleep(60)"
    config = preview_config(
        analyzer=False,
        command=f"{PYTHON} -c {shlex.quote(code)}",
        readiness={"line": "^ready$", "timeoutMs": 500},
    )
    async with HeadlessSession(
        previewapp, ReplayModel([]), config, analyzers=(), watch=False
    ) as session:
        outcome = await session.preview.start(0)
        assert outcome.action == "failed"
        assert "did not become ready within 0.5 s" in outcome.message
        assert len(outcome.lines) == 1 and outcome.lines[0].startswith("booting in group")
        assert session.preview.state == "failed" and session.preview.pid is None
        pgid = int(outcome.lines[0].split()[-1])
        assert not group_alive(pgid), "a preview that failed to start was left running"


async def test_stop_ends_the_whole_process_group(previewapp: Path) -> None:
    """A child the preview started (``sleep``) goes with it."""
    config = preview_config(analyzer=False, command=f"sleep 300 & exec {APP}")
    async with HeadlessSession(
        previewapp, ReplayModel([]), config, analyzers=(), watch=False
    ) as session:
        assert (await session.preview.start(0)).ok
        pid = session.preview.pid
        assert pid is not None and group_alive(pid)
        stopped = await session.preview.stop()
        assert stopped.action == "stopped" and not group_alive(pid)
        assert (await session.preview.restart(0)).ok
        second = session.preview.pid
        assert second is not None and second != pid and group_alive(second)
    assert not group_alive(second)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_http_readiness_probe_waits_for_the_server(previewapp: Path) -> None:
    port = free_port()
    config = preview_config(
        analyzer=False,
        command=f"{PYTHON} -m http.server {port} --bind 127.0.0.1",
        readiness={"url": f"http://127.0.0.1:{port}/"},
    )
    events = WaitingEventLog()
    async with HeadlessSession(
        previewapp, ReplayModel([]), config, analyzers=(), watch=False
    ) as session:
        session.preview_listeners.append(events)
        outcome = await session.preview.start(0)
        assert outcome.ok, outcome.message
        assert await session.preview.factory.http_ready(f"http://127.0.0.1:{port}/", 5)
        pid = session.preview.pid
        assert pid is not None
        # The GET of the probe shows in the server's log, as preview output.
        await events.wait_for(
            lambda events: any('"GET / HTTP/1.0" 200' in getattr(e, "text", "") for e in events),
            limit_s=10,
        )
    assert not group_alive(pid)
    assert not await session.preview.factory.http_ready(f"http://127.0.0.1:{port}/", 1)


# ------------------------------------------ up, without a readiness setting


async def test_a_program_that_crashes_two_seconds_after_it_starts_is_a_blocker(
    previewapp: Path,
) -> None:
    """No readiness setting: the start waits until the program is up, so a
    crash during its boot is the start's blocker, not a pass."""
    code = "import sys, time; print('booting', flush=True); time.sleep(2); sys.exit(1)"
    config = load_config(
        {
            "gates": {
                "analyzer": {"enabled": False},
                "preview": {"command": f"{PYTHON} -c {shlex.quote(code)}"},
            }
        }
    )
    assert config.gates.preview.readiness.line is None
    async with HeadlessSession(
        previewapp, ReplayModel([]), config, analyzers=(), watch=False
    ) as session:
        context = GateContext(0, frozenset({"app.py"}), FakeWorkspace(root=str(previewapp)), None)
        with anyio.fail_after(30):
            outcome = await PreviewStartGate(session.preview).check(context)
        assert len(outcome.blockers) == 1, outcome.detail
        blocker = outcome.blockers[0]
        assert blocker.gate == "preview_start"
        # Up after 2 s of quiet output and then observed, or not up yet when
        # it exits: either way the exit is the start's blocker.
        assert "the preview exited with code 1" in blocker.message
        assert session.preview.state in ("failed", "exited") and session.preview.pid is None


async def test_a_server_that_listens_is_up_without_configuration(previewapp: Path) -> None:
    """No readiness setting: the port it opened says it is up (the quiet
    period, set far beyond the test's bound here, is not what ended the wait)."""
    port = free_port()
    config = load_config(
        {
            "gates": {
                "analyzer": {"enabled": False},
                "preview": {
                    "command": f"{PYTHON} -m http.server {port} --bind 127.0.0.1",
                    "readiness": {"quietMs": 120_000, "timeoutMs": 180_000},
                },
            }
        }
    )
    async with HeadlessSession(
        previewapp, ReplayModel([]), config, analyzers=(), watch=False
    ) as session:
        with anyio.fail_after(30):
            outcome = await session.preview.start(0)
        assert outcome.ok, outcome.message
        assert session.preview.state == "running"
        pid = session.preview.pid
        assert pid is not None and port in listening_ports(pid)
        assert await session.preview.factory.http_ready(f"http://127.0.0.1:{port}/", 5)
    assert not group_alive(pid) and listening_ports(pid) == set()


# ---------------------------------------------------- a program that reloads itself


class AfterOutput:
    """The replayed model, whose requests wait (by index) until the preview
    has printed a line containing the given text: the program reloaded
    itself on the write before the gates got their turn, deterministically."""

    def __init__(self, inner: ReplayModel, events: WaitingEventLog, waits: dict[int, str]) -> None:
        self.inner = inner
        self.events = events
        self.waits = waits

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def requests(self) -> list[Any]:
        return self.inner.requests

    def stream(self, request: Any) -> AsyncIterator[Any]:
        return self._stream(request)

    async def _stream(self, request: Any) -> AsyncIterator[Any]:
        text = self.waits.get(len(self.inner.requests))
        if text is not None:
            await self.events.wait_for(
                lambda events: any(text in getattr(e, "text", "") for e in events), limit_s=10
            )
        async for delta in self.inner.stream(request):
            yield delta


@pytest.mark.parametrize(
    "readiness",
    [
        pytest.param({"line": "^ready$", "timeoutMs": 3000}, id="readiness-line"),
        pytest.param({}, id="no-readiness"),
    ],
)
async def test_a_program_that_reloads_itself_is_observed_from_the_write(
    previewapp: Path, readiness: dict[str, Any]
) -> None:
    """reload "self": the program reloads on the write, long before the
    gates run. Its traceback is the blocker (it came after the write), and
    the fix is ready at once (its "ready" came after the write too)."""
    (previewapp / "devserver.py").write_text(DEVSERVER)
    events = WaitingEventLog()
    model = AfterOutput(ReplayModel(SCRIPT), events, {1: BAD_VALUE, 3: "threshold is 5"})
    config = preview_config(
        analyzer=False, command=f"{PYTHON} devserver.py", reload="self", readiness=readiness
    )
    async with HeadlessSession(previewapp, model, config, analyzers=(), watch=False) as session:
        # The host's wiring (see preview/coordinator.py): the preview hears of every write.
        session.mutations.subscribe(session.preview.on_mutation)
        session.agent.subscribe(events)
        session.preview_listeners.append(events)
        started = await session.preview.start(session.workspace.generation)
        assert started.ok, started.message
        pid = session.preview.pid
        result = await session.prompt("make the threshold negative")
        assert result.status == "completed", result.error
        assert result.repair_attempts == 1
        repair = model.requests[2].messages[-1].content
        assert "[runtime_observation] app.py:" in repair
        assert "    Traceback (most recent call last):" in repair
        assert BAD_VALUE in repair
        gates = [(e.gate, e.passed) for e in events.of("gate_result")]
        assert gates == [
            ("preview_load", True),
            ("runtime_observation", False),
            ("preview_load", True),
            ("runtime_observation", True),
            ("preview_start", True),
        ]
        assert [e.strategy for e in events.of("preview_reloaded")] == ["self", "self"]
        # The program re-executed itself: the same process, the fixed value.
        assert session.preview.pid == pid
        assert "threshold is 5" in session.preview.status().lines
    assert pid is not None and not group_alive(pid)


async def test_a_readme_change_does_not_start_the_preview(previewapp: Path) -> None:
    """No preview runs and the run changed only documentation: the start
    gate passes without starting it. The same run changing code starts it."""
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "README.md", "content": "# previewapp\n"},
                    }
                ]
            },
            {"text": "documented"},
            edit("THRESHOLD = 3", "THRESHOLD = 4"),
            {"text": "the threshold is 4"},
        ]
    )
    events = EventLog()
    async with HeadlessSession(
        previewapp, model, preview_config(analyzer=False), analyzers=(), watch=False
    ) as session:
        session.agent.subscribe(events)
        result = await session.prompt("write a readme")
        assert result.status == "completed", result.error
        start = events.of("gate_result")[-1]
        assert (start.gate, start.passed) == ("preview_start", True)
        assert start.detail == "the run changed no code; the preview is not started"
        assert session.preview.state == "stopped" and session.preview.pid is None
        result = await session.prompt("raise the threshold")
        assert result.status == "completed", result.error
        assert session.preview.state == "running"
        assert "threshold is 4" in session.preview.status().lines


# ------------------------------------------------------ what the preview writes


async def test_files_the_preview_writes_are_not_external_changes(previewapp: Path) -> None:
    """A real preview writes a log (held open: recognised from the process)
    and out/data.json (listed in gates.preview.outputs); a real disk watcher
    sees all of it. Filtered as the hosts filter their external changes,
    only the person's change to settings.py is left."""
    (previewapp / "writer.py").write_text(WRITER)
    config = preview_config(command=f"{PYTHON} writer.py", outputs=["out/**"]).gates.preview
    seen: list[tuple[str, ...]] = []
    kept: list[tuple[str, ...]] = []
    changed = anyio.Event()

    async with anyio.create_task_group() as tg:
        preview = PreviewCoordinator(
            SubprocessPreviewFactory(str(previewapp)),
            config,
            emit=EventLog(),
            spawn=tg.start_soon,
        )

        def on_external(paths: tuple[str, ...]) -> None:
            nonlocal changed
            seen.append(paths)
            kept.append(preview.without_outputs(paths))
            changed.set()
            changed = anyio.Event()

        watcher = DiskWatcher(previewapp, on_external)
        tg.start_soon(watcher.run)
        try:
            await watcher.settle()
            assert (await preview.start(0)).ok
            pid = preview.pid
            with anyio.fail_after(10):
                while {"app.log", "out/data.json"} - {p for batch in seen for p in batch}:
                    await changed.wait()
            (previewapp / "settings.py").write_text("THRESHOLD = 7\n")
            await watcher.settle()
        finally:
            watcher.stop()  # first: after the preview stops, its files are no one's
            await preview.shutdown()
            tg.cancel_scope.cancel()
    assert pid is not None and not group_alive(pid)
    assert sum(batch.count("app.log") for batch in seen) >= 1
    assert [p for batch in kept for p in batch] == ["settings.py"]
    # The log is the preview's because it holds it open, not by a setting.
    assert not config.is_output("app.log") and config.is_output("out/data.json")


async def test_a_manifest_change_installs_then_restarts_a_preview_reloaded_by_signal(
    previewapp: Path,
) -> None:
    """reload "signal", and the run changes pyproject.toml: the install runs
    (the dependencies gate), then the preview is restarted (a new process),
    not signalled."""
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {
                            "path": "pyproject.toml",
                            "old_string": 'version = "0.1.0"',
                            "new_string": 'version = "0.2.0"',
                        },
                    }
                ]
            },
            {"text": "bumped the version"},
        ]
    )
    events = EventLog()
    config = load_config(
        {
            "gates": {
                "analyzer": {"enabled": False},
                "dependencies": {"commands": {"pyproject.toml": "echo installed >> installs.log"}},
                "preview": {
                    "command": APP,
                    "reload": "signal",
                    "readiness": {"line": "^ready$"},
                    "observationWindowMs": 300,
                    "stopTimeoutMs": 2000,
                },
            }
        }
    )
    async with HeadlessSession(previewapp, model, config, analyzers=(), watch=False) as session:
        session.agent.subscribe(events)
        session.preview_listeners.append(events)
        started = await session.preview.start(session.workspace.generation)
        assert started.ok, started.message
        first = session.preview.pid
        result = await session.prompt("bump the version")
        assert result.status == "completed", result.error
        assert (previewapp / "installs.log").read_text() == "installed\n"
        gates = [(e.gate, e.passed, e.detail) for e in events.of("gate_result")]
        assert [g[:2] for g in gates[:3]] == [
            ("dependencies", True),
            ("preview_load", True),
            ("runtime_observation", True),
        ]
        assert gates[1][2] == "loaded generation 1 (restart: a dependency manifest changed)"
        assert [e.strategy for e in events.of("preview_reloaded")] == ["restart"]
        assert session.preview.pid not in (None, first)
        assert session.preview.state == "running"
    assert first is not None and not group_alive(first)
