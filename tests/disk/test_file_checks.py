"""A few files' diagnostics before the workspace analysis ends
(:mod:`rein.disk.file_checks`), with stub analyzers: an answer given
without knowing the file is asked again; a pull not answered within its
bound is not (the workspace analysis is waited for, then it is asked once
more); an analyzer that cannot be asked file by file makes it say so."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from rein.disk import file_checks
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator
from rein.disk.prior_texts import TextMemory
from rein.harness.navigation_ports import Position
from rein.harness.ports import DiagnosticsSnapshot
from tests.fakes.lsp_client import RecordingLanguageClient


@dataclass
class StubAnalyzer:
    """Answers each pull with the next of ``answers``: "known", "unknown"
    (no result id: it did not know the file yet) or "timeout"."""

    answers: list[str]
    pull: bool = True
    alive: bool = True
    versions: dict[str, int] = field(default_factory=lambda: {"a.py": 1})
    awaiting: dict[str, int] = field(default_factory=dict)
    unanswered: dict[str, str] = field(default_factory=dict)
    known: set[str] = field(default_factory=set)
    asked: int = 0
    #: The bound each question was said to be under (a timeout names it).
    bounds: list[str] = field(default_factory=list)
    pool: StubPool | None = None
    #: It checks the open files only (a large workspace, or a deferred one).
    file_by_file: bool = False

    def __post_init__(self) -> None:
        # basedpyright's shape: a whole-workspace mode, answering pulls.
        self.spec = SimpleNamespace(
            pull=self.pull, tsserver=False, diagnostic_mode_setting="analysis.diagnosticMode"
        )

    def analysed(self, path: str) -> bool:
        return path in self.known

    def owns(self, path: str) -> bool:
        return path.endswith(".py")

    def open(self, path: str) -> None:
        self.versions[path] = 1

    def repull(
        self, path: str, bound_s: float = 0.0, bound: str = "", *, answered: bool = False
    ) -> None:
        self.asked += 1
        self.bounds.append(bound)
        self.known.discard(path)
        self.awaiting[path] = self.versions[path]
        answer = self.answers.pop(0)
        asyncio.get_running_loop().call_soon(self._answer, path, answer)

    def _answer(self, path: str, answer: str) -> None:
        del self.awaiting[path]
        if answer == "timeout":
            self.unanswered[path] = "no answer within 10 s"
        else:
            self.unanswered.pop(path, None)
            if answer == "known":
                self.known.add(path)
        assert self.pool is not None
        self.pool.active()


class StubPool:
    def __init__(self, analyzer: StubAnalyzer) -> None:
        self.analyzers = [analyzer]
        analyzer.pool = self
        self._event = asyncio.Event()
        self.idle_waits = 0
        self.requested: list[str] = []

    def skipped(self, path: str) -> bool:
        return False

    def active(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    def activity(self) -> asyncio.Event:
        return self._event

    async def started(self) -> None:
        return None

    async def check_environment(self) -> None:
        return None

    async def wait_idle(self, timeout_s: float) -> bool:
        self.idle_waits += 1
        return True

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        return DiagnosticsSnapshot((), 0, stale=bool(self.analyzers[0].unanswered))


async def wait(analyzer: StubAnalyzer) -> tuple[bool, StubPool]:
    pool = StubPool(analyzer)
    return await file_checks.wait_files(pool, ["a.py"], 5.0), pool  # type: ignore[arg-type]


async def test_an_answer_without_knowing_the_file_is_asked_again() -> None:
    analyzer = StubAnalyzer(["unknown", "unknown", "known"])
    answered, pool = await wait(analyzer)
    assert answered and analyzer.asked == 3 and pool.idle_waits == 0


async def test_a_file_not_open_in_an_analyzer_checking_open_files_is_opened_and_asked() -> None:
    """A resumed session's changed file, which nothing opened in this
    process: asked without being opened, it would be judged on nothing."""
    analyzer = StubAnalyzer(["known"], versions={}, file_by_file=True)
    answered, pool = await wait(analyzer)
    assert answered and analyzer.asked == 1
    assert analyzer.versions == {"a.py": 1} and pool.requested == ["a.py"]


class _Questions(RecordingLanguageClient):
    """Each diagnostics question gets a future the test answers."""

    def __init__(self) -> None:
        super().__init__()
        self.questions: list[asyncio.Future[Any]] = []
        self.asked = asyncio.Event()

    def text_document_diagnostic_async(self, params: Any) -> asyncio.Future[Any]:
        self.questions.append(asyncio.get_running_loop().create_future())
        self.asked.set()
        return self.questions[-1]

    async def question(self, n: int) -> asyncio.Future[Any]:
        while len(self.questions) < n:
            self.asked.clear()
            await asyncio.wait_for(self.asked.wait(), 5)
        return self.questions[n - 1]


async def test_a_file_asked_again_by_the_server_while_it_waited_is_not_asked_again(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's analysis stopped and was resumed while the pool waited
    # to ask again (or it asked for a refresh): the file is owed again and
    # pulled again by the analyzer itself; asked a third time too, the
    # earlier question's answer would be dropped and the wait run out.
    (root / "a.py").write_text("x = 1\n")
    pool = AnalyzerPool(root, [DEFAULT_ANALYZERS[1]], workspace_max_files=0, quiet_ms=0)
    await pool.prepare()
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    client = _Questions()
    analyzer.client = cast(Any, client)
    analyzer.alive = analyzer.pull = True
    analyzer.versions["a.py"] = 1
    pool.analyzers = [analyzer]
    pool._started.set()
    monkeypatch.setattr(file_checks, "ASK_AGAIN_S", 5.0)  # only activity ends the wait
    waiting_again = asyncio.Event()
    activity = pool.activity

    def watched_activity() -> asyncio.Event:
        if "a.py" in analyzer.answered_blind:  # answered without an analysis
            waiting_again.set()
        return activity()

    monkeypatch.setattr(pool, "activity", watched_activity)
    waited = asyncio.ensure_future(file_checks.wait_files(pool, ["a.py"], 5.0))
    (await client.question(1)).set_result(SimpleNamespace(kind="full", result_id=None, items=[]))
    await asyncio.wait_for(waiting_again.wait(), 5)
    analyzer.analysis_stopped("Error performing analysis: boom")  # resumed: pulled again
    (await client.question(2)).set_result(SimpleNamespace(kind="full", result_id="7", items=[]))
    assert await asyncio.wait_for(waited, 5)
    assert len(client.questions) == 2


async def test_a_pull_that_timed_out_waits_for_the_workspace_then_asks_once_more() -> None:
    analyzer = StubAnalyzer(["timeout", "known"])
    answered, pool = await wait(analyzer)
    assert answered and analyzer.asked == 2 and pool.idle_waits == 1
    # Its timeout names the bound that applied: the callers' settle bound,
    # not requestTimeoutMs (a person told to raise that would change nothing).
    assert analyzer.bounds == [file_checks.WAIT_BOUND] * 2
    assert "settleTimeoutMs" in file_checks.WAIT_BOUND


async def test_an_analyzer_that_cannot_be_asked_file_by_file_says_so() -> None:
    analyzer = StubAnalyzer([], pull=False)
    answered, _pool = await wait(analyzer)
    assert not answered and analyzer.asked == 0
    snap = await file_checks.snapshot_files(StubPool(analyzer), ["a.py"], 5.0)  # type: ignore[arg-type]
    assert snap.stale and snap.stale_reason is not None


def test_a_server_offering_no_pull_and_no_workspace_mode_is_not_asked_file_by_file() -> None:
    # clangd, gopls: configured "pull" but offering none, every question
    # waited its bound (120 s each; a C run took 480 s and failed).
    basedpyright = StubAnalyzer([])
    assert file_checks.answers_per_file(StubPool(basedpyright))  # type: ignore[arg-type]
    clangd = StubAnalyzer([])
    clangd.spec.diagnostic_mode_setting = None
    clangd.pull = False
    assert not file_checks.answers_per_file(StubPool(clangd))  # type: ignore[arg-type]
    clangd.pull = True  # offers pulls: asked
    assert file_checks.answers_per_file(StubPool(clangd))  # type: ignore[arg-type]


async def test_the_texts_before_a_command_are_the_large_workspaces_memory_when_it_has_one() -> None:
    """Old: every file was read from the disk again, though a large
    workspace's pool keeps them all (kept up to date by the changes)."""

    def read(path: str) -> str | None:
        raise AssertionError(f"{path} read from the disk again")

    memory = TextMemory({"a.py": "one\n", "b.py": ""}.get)
    memory.remember(["a.py", "b.py"])
    pool = SimpleNamespace(texts=memory, existing={"a.py", "b.py"}, read=read)
    texts = await file_checks.read_texts(pool)  # type: ignore[arg-type]
    memory.changed("a.py", "two\n")  # the command's change
    assert (texts("a.py"), texts("b.py"), texts("c.py")) == ("one\n", "", None)

    small = SimpleNamespace(texts=None, existing={"a.py"}, read={"a.py": "disk\n"}.get)
    assert (await file_checks.read_texts(small))("a.py") == "disk\n"  # type: ignore[arg-type]


class _Navigated(_Questions):
    """Records the text it had of a file when asked for a definition."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.navigated = asyncio.Event()

    def text_document_definition_async(self, params: Any) -> asyncio.Future[Any]:
        uri = params.text_document.uri
        texts = [
            p.text_document.text if kind.endswith("didOpen") else p.content_changes[-1].text
            for kind, p in self.sent
            if kind.endswith(("didOpen", "didChange")) and p.text_document.uri == uri
        ]
        self.seen.append(texts[-1])
        self.navigated.set()
        answer = asyncio.get_running_loop().create_future()
        answer.set_result([])
        return answer


async def test_a_navigation_question_during_a_commands_baseline_waits_for_the_texts_as_they_are(
    root: Path,
) -> None:
    """Old (review14b): while a command's baseline ran in the background,
    the model's next turn navigated on the earlier texts shown to the
    servers: references at the old lines, a rename refused ("changed after
    the language server computed the rename")."""
    (root / "a.py").write_text("x = 1\n")
    pool = AnalyzerPool(root, [DEFAULT_ANALYZERS[1]], workspace_max_files=0, quiet_ms=0)
    await pool.prepare()
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    client = _Navigated()
    analyzer.client = cast(Any, client)
    analyzer.alive = True
    analyzer.capabilities = {"definitionProvider": True}
    pool.analyzers = [analyzer]
    pool._started.set()
    analyzer.open("a.py")
    navigator = PoolNavigator(pool)
    navigator._indexed = True  # a later turn: the servers settled once
    baseline = asyncio.ensure_future(
        file_checks.snapshot_files_with(pool, {"a.py": "old = 1\n"}, ["a.py"], 5.0)
    )
    question = await client.question(1)  # the earlier text shown
    waiting = asyncio.Event()
    gone = pool.shown_earlier.gone

    async def watched(timeout_s: float) -> bool:
        waiting.set()
        return await gone(timeout_s)

    pool.shown_earlier.gone = watched  # type: ignore[method-assign]
    navigated = asyncio.ensure_future(navigator.definition("a.py", Position(0, 0)))
    either = [asyncio.ensure_future(e.wait()) for e in (waiting, client.navigated)]
    await asyncio.wait(either, timeout=5, return_when=asyncio.FIRST_COMPLETED)
    question.set_result(SimpleNamespace(kind="full", result_id="1", items=[]))
    await asyncio.wait_for(baseline, 5)
    assert await asyncio.wait_for(navigated, 5) == []
    assert client.seen == ["x = 1\n"]  # as it is, not as it was
    for e in either:
        e.cancel()


async def test_earlier_texts_are_shown_until_the_last_showing_ends_and_the_wait_is_bounded() -> (
    None
):
    shown = file_checks.EarlierTexts()
    assert await shown.gone(0.01)
    with shown.showing():
        with shown.showing():
            pass
        assert shown.shown
        assert not await shown.gone(0.01)  # bounded: still shown
    assert not shown.shown and await shown.gone(0.01)
