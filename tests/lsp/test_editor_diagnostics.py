"""EditorDiagnostics over a scripted client channel: never blind silently,
never an unbounded wait, and the settle rule of the editor (a client's
``pending``, then a quiet period after the last rein/diagnosticsChanged).
Virtual time: the bounds are the real ones and take no wall time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from rein.harness.generations import MutationLog
from rein.harness.ports import Mutation, SettlingDiagnostics
from rein.lsp.channel import ClientChannel
from rein.lsp.editor import EditorWorkspace
from rein.lsp.editor_diagnostics import PENDING_RECHECK_S, EditorDiagnostics
from tests.fakes.clock import run_in_virtual_time

Answer = Callable[[dict[str, Any]], Awaitable[Any]]


class ScriptedChannel(ClientChannel):
    """A client channel whose rein/diagnostics answers come from ``answer``;
    every request is recorded."""

    def __init__(self, answer: Answer) -> None:
        self._unsupported: set[str] = set()
        self.answer = answer
        self.asked: list[dict[str, Any]] = []

    async def request(self, method: str, params: Any) -> Any:
        self.asked.append(params)
        try:
            return await self.answer(params)
        except JsonRpcException as exc:
            if isinstance(exc, JsonRpcMethodNotFound):
                self.forget(method)
            raise

    def document(self, uri: str) -> Any:
        return None


def item(uri: str, message: str) -> dict[str, Any]:
    return {
        "uri": uri,
        "diagnostics": [
            {
                "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 8}},
                "severity": 1,
                "code": "F821",
                "source": "Ruff",
                "message": message,
            }
        ],
    }


def source(tmp_path: Path, answer: Answer, **options: Any) -> tuple[EditorDiagnostics, Any]:
    channel = ScriptedChannel(answer)
    workspace = EditorWorkspace(channel, tmp_path, MutationLog())
    options.setdefault("clock", asyncio.get_running_loop().time)
    return EditorDiagnostics(channel, workspace, **options), channel


async def never(params: dict[str, Any]) -> Any:
    await asyncio.Event().wait()


async def not_found(params: dict[str, Any]) -> Any:
    raise JsonRpcMethodNotFound(message="Method Not Found: rein/diagnostics")


async def internal_error(params: dict[str, Any]) -> Any:
    raise JsonRpcException(code=-32603, message="the extension host crashed")


async def broken_pipe(params: dict[str, Any]) -> Any:
    raise ConnectionResetError("the client is gone")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        pytest.param(
            not_found,
            "the client does not answer rein/diagnostics (method not found)",
            id="method-not-found",
        ),
        pytest.param(
            never,
            "the client does not answer rein/diagnostics (no answer within 10 s, gates.analyzer.requestTimeoutMs)",
            id="no-answer",
        ),
        pytest.param(
            internal_error,
            "the client's rein/diagnostics failed: the extension host crashed",
            id="client-error",
        ),
        pytest.param(
            broken_pipe,
            "the client's rein/diagnostics failed: ConnectionResetError: the client is gone",
            id="client-gone",
        ),
    ],
)
def test_a_client_that_does_not_answer_makes_a_blind_snapshot_that_says_why(
    tmp_path: Path, answer: Answer, reason: str
) -> None:
    async def main() -> tuple[Any, float, bool]:
        diagnostics, _ = source(tmp_path, answer)
        loop = asyncio.get_running_loop()
        began = loop.time()
        snap = await diagnostics.snapshot(["app.py"])
        waited = loop.time() - began
        idle = await diagnostics.wait_idle(30)
        return snap, waited, idle

    snap, waited, idle = run_in_virtual_time(main)
    assert snap.blind is not None
    assert reason in snap.blind
    assert snap.diagnostics == ()
    assert waited <= 10.0  # bounded by the answer timeout, never forever
    assert idle is True  # nothing to wait for: the snapshot says blind


def test_after_an_unanswered_ask_the_next_ones_wait_briefly(tmp_path: Path) -> None:
    answered = False

    async def late(params: dict[str, Any]) -> Any:
        if not answered:
            await asyncio.Event().wait()
        return {"items": []}

    async def main() -> list[tuple[str | None, float]]:
        nonlocal answered
        diagnostics, _ = source(tmp_path, late)
        loop = asyncio.get_running_loop()
        out: list[tuple[str | None, float]] = []
        for _ in range(3):
            began = loop.time()
            snap = await diagnostics.snapshot(None)
            out.append((snap.blind, loop.time() - began))
            answered = len(out) == 2
        return out

    results = run_in_virtual_time(main)
    assert results == [
        (
            "the client does not answer rein/diagnostics (no answer within 10 s, gates.analyzer.requestTimeoutMs)",
            10.0,
        ),
        (
            "the client does not answer rein/diagnostics (no answer within 1 s, gates.analyzer.requestTimeoutMs)",
            1.0,
        ),
        (None, 0.0),
    ]


def test_method_not_found_is_remembered_and_not_asked_again(tmp_path: Path) -> None:
    async def main() -> tuple[int, str | None]:
        diagnostics, channel = source(tmp_path, not_found)
        await diagnostics.snapshot(None)
        second = await diagnostics.snapshot(None)
        return len(channel.asked), second.blind

    asked, blind = run_in_virtual_time(main)
    assert asked == 1
    assert blind == "the client does not answer rein/diagnostics (method not found)"


def test_an_answering_client_is_not_blind_and_names_the_editor(tmp_path: Path) -> None:
    uri = (tmp_path / "app.py").as_uri()

    async def answer(params: dict[str, Any]) -> Any:
        return {"items": [item(uri, "Undefined name `nmae`")]}

    async def main() -> Any:
        diagnostics, _ = source(tmp_path, answer)
        return await diagnostics.snapshot(["app.py"])

    snap = run_in_virtual_time(main)
    assert snap.blind is None and snap.stale is False
    assert snap.sources == ("editor",)
    assert [(d.path, d.message) for d in snap.diagnostics] == [("app.py", "Undefined name `nmae`")]


def test_the_editors_diagnostic_messages_are_redacted_as_they_enter(tmp_path: Path) -> None:
    """A message quoting a key (a type checker's ``Literal['sk-...']``)
    enters Rein redacted: the analyzer gate's stored baselines and its
    comparisons hold that text (safe20; the raw key before)."""
    uri = (tmp_path / "app.py").as_uri()
    key = "sk-proj-EDITORxx0123456789abcdefghij"

    async def answer(params: dict[str, Any]) -> Any:
        return {"items": [item(uri, f'Type "Literal[\'{key}\']" is not assignable to "int"')]}

    async def main() -> Any:
        diagnostics, _ = source(tmp_path, answer)
        return await diagnostics.snapshot(["app.py"])

    snap = run_in_virtual_time(main)
    assert [d.message for d in snap.diagnostics] == [
        'Type "Literal[\'[redacted]\']" is not assignable to "int"'
    ]


def test_is_settling_diagnostics() -> None:
    assert issubclass(EditorDiagnostics, SettlingDiagnostics)


def test_ensure_open_asks_the_client_about_the_files(tmp_path: Path) -> None:
    async def answer(params: dict[str, Any]) -> Any:
        return {"items": []}

    async def main() -> list[dict[str, Any]]:
        diagnostics, channel = source(tmp_path, answer)
        await diagnostics.ensure_open(["b.py", "a.py", "../outside.py"])
        await diagnostics.ensure_open([])
        return channel.asked

    asked = run_in_virtual_time(main)
    assert asked == [{"uris": [(tmp_path / "a.py").as_uri(), (tmp_path / "b.py").as_uri()]}]


class Progressive:
    """A client whose analysis of app.py finishes in two layers: it answers
    ``pending`` with the syntax layer until :meth:`finish` publishes the
    semantic one (and notifies)."""

    def __init__(self, tmp_path: Path) -> None:
        self.uri = (tmp_path / "app.py").as_uri()
        self.done = False

    async def answer(self, params: dict[str, Any]) -> Any:
        if self.done:
            return {"items": [item(self.uri, "Undefined name `nmae`")]}
        return {"items": [{"uri": self.uri, "diagnostics": []}], "pending": True}

    def finish(self, diagnostics: EditorDiagnostics) -> None:
        self.done = True
        diagnostics.notify_changed(["app.py"])


def test_a_pending_answer_waits_for_the_late_layer(tmp_path: Path) -> None:
    client = Progressive(tmp_path)

    async def main() -> tuple[Any, float]:
        diagnostics, _ = source(tmp_path, client.answer)
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, client.finish, diagnostics)
        began = loop.time()
        snap = await diagnostics.snapshot(["app.py"])
        return snap, loop.time() - began

    snap, waited = run_in_virtual_time(main)
    assert [d.message for d in snap.diagnostics] == ["Undefined name `nmae`"]
    assert snap.stale is False
    assert waited == pytest.approx(0.3)


def test_a_client_pending_past_the_bound_gives_a_stale_snapshot(tmp_path: Path) -> None:
    client = Progressive(tmp_path)

    async def main() -> tuple[Any, bool]:
        diagnostics, _ = source(tmp_path, client.answer, pending_wait_s=2.0)
        snap = await diagnostics.snapshot(["app.py"])
        diagnostics.notify_mutation(Mutation(1, ("app.py",)))
        idle = await diagnostics.wait_idle(1.0)
        return snap, idle

    snap, idle = run_in_virtual_time(main)
    assert snap.stale is True and snap.blind is None
    assert idle is False


def test_a_pending_that_ends_without_a_change_is_asked_again_not_waited_out(
    tmp_path: Path,
) -> None:
    """VS Code's bridge says ``pending`` for 3 s after it opened a file no
    language server analyses (a .txt the run wrote), and no
    rein/diagnosticsChanged ever comes for it. Old: the wait slept until the
    next change anywhere, or its bound (the settle timeout, 120 s; the
    code-server vscode-lm test timed out at 60 s)."""

    async def main() -> tuple[bool, float, int]:
        loop = asyncio.get_running_loop()
        began = loop.time()
        uri = (tmp_path / "note.txt").as_uri()

        async def answer(params: dict[str, Any]) -> Any:
            result: dict[str, Any] = {"items": [{"uri": uri, "diagnostics": []}]}
            if loop.time() - began < 3.0:
                result["pending"] = True
            return result

        diagnostics, channel = source(tmp_path, answer)
        diagnostics.notify_mutation(Mutation(1, ("note.txt",)))
        idle = await diagnostics.wait_idle(120.0)
        return idle, loop.time() - began, len(channel.asked)

    idle, waited, asked = run_in_virtual_time(main)
    assert idle is True
    assert 3.0 <= waited <= 3.0 + PENDING_RECHECK_S
    assert asked == 7  # at 0, 0.5, ..., 2.5 pending; at 3.0 not


def test_wait_idle_waits_for_pending_then_a_quiet_period(tmp_path: Path) -> None:
    client = Progressive(tmp_path)

    async def main() -> tuple[bool, float, list[dict[str, Any]]]:
        diagnostics, channel = source(tmp_path, client.answer, quiet_ms=100)
        diagnostics.notify_mutation(Mutation(1, ("app.py",)))
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, client.finish, diagnostics)
        began = loop.time()
        idle = await diagnostics.wait_idle(30)
        return idle, loop.time() - began, channel.asked

    idle, waited, asked = run_in_virtual_time(main)
    assert idle is True
    assert waited == pytest.approx(0.4)  # the late layer at 0.3, then 100 ms of quiet
    assert asked[0] == {"uris": [(tmp_path / "app.py").as_uri()]}


def test_wait_idle_restarts_the_quiet_period_on_each_change(tmp_path: Path) -> None:
    async def answer(params: dict[str, Any]) -> Any:
        return {"items": []}

    async def main() -> tuple[bool, float, list[dict[str, Any]]]:
        diagnostics, channel = source(tmp_path, answer, quiet_ms=100)
        loop = asyncio.get_running_loop()
        diagnostics.notify_changed(["app.py"])
        loop.call_later(0.05, diagnostics.notify_changed, ["app.py"])
        began = loop.time()
        idle = await diagnostics.wait_idle(30)
        return idle, loop.time() - began, channel.asked

    idle, waited, asked = run_in_virtual_time(main)
    assert idle is True
    assert waited == pytest.approx(0.15)
    # Files the editor published for are not asked about (nor opened): only
    # files changed or ensured open are.
    assert asked == []


def test_environment_changed_tells_nobody(tmp_path: Path) -> None:
    async def main() -> list[dict[str, Any]]:
        diagnostics, channel = source(tmp_path, not_found)
        await diagnostics.environment_changed(["pyproject.toml"])
        return channel.asked

    assert run_in_virtual_time(main) == []
