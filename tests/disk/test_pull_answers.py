"""A pull's answer counts only when it is the file's latest question (in
process, a stub client): a cold verdict asks every file again after
another file was shown another text, with an earlier question possibly
still unanswered, and that earlier answer (given on the earlier text) was
taken for the new one: the verdict after a command's repair still blocked
on an importer's error the repair had fixed (toolz, ``has_keywords``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rein.disk import file_checks
from rein.disk.analyzer_pull import LatestPulls
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_status import missing_diagnostics
from tests.fakes.lsp_client import RecordingLanguageClient


class StubClient:
    """Each diagnostics question gets a future the test answers."""

    def __init__(self) -> None:
        self.questions: list[asyncio.Future[Any]] = []
        self.both_asked = asyncio.Event()
        self.asked = asyncio.Event()

    def text_document_diagnostic_async(self, params: Any) -> asyncio.Future[Any]:
        self.questions.append(asyncio.get_running_loop().create_future())
        self.asked.set()
        if len(self.questions) == 2:
            self.both_asked.set()
        return self.questions[-1]


def _report(message: str, result_id: str) -> SimpleNamespace:
    item = SimpleNamespace(
        range=SimpleNamespace(
            start=SimpleNamespace(line=0, character=0), end=SimpleNamespace(line=0, character=1)
        ),
        severity=1,
        code="reportAttributeAccessIssue",
        source="basedpyright",
        message=message,
    )
    return SimpleNamespace(kind="full", result_id=result_id, items=[item])


def _asked(tmp_path: Path, text: str, bound_s: float) -> tuple[_Analyzer, StubClient]:
    """basedpyright's analyzer over a stub client, with ``m.py`` (``text``)
    open and asked for once, within ``bound_s``."""
    (tmp_path / "m.py").write_text(text)
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    client = StubClient()
    analyzer.client = client  # type: ignore[assignment]
    analyzer.alive = True
    analyzer.versions["m.py"] = 1
    analyzer.repull("m.py", bound_s)
    return analyzer, client


async def test_an_earlier_questions_answer_is_not_taken_for_the_latest(tmp_path: Path) -> None:
    analyzer, client = _asked(tmp_path, "from pkg import name\n", 5.0)
    first_pull = analyzer.pulls.latest["m.py"]
    analyzer.repull("m.py", 5.0)  # asked again before the first answer
    latest_pull = analyzer.pulls.latest["m.py"]
    await asyncio.wait_for(client.both_asked.wait(), 5)
    earlier, latest = client.questions

    earlier.set_result(_report('"name" is unknown import symbol', "1"))
    await asyncio.wait_for(first_pull, 5)
    assert "m.py" in analyzer.awaiting  # still owed: the latest is not answered
    assert "m.py" not in analyzer.diagnostics

    latest.set_result(SimpleNamespace(kind="full", result_id="2", items=[]))
    await asyncio.wait_for(latest_pull, 5)
    assert "m.py" not in analyzer.awaiting
    assert analyzer.diagnostics["m.py"] == []
    assert analyzer.analysed("m.py")


def _asked_twice(tmp_path: Path, first_bound_s: float) -> tuple[_Analyzer, StubClient]:
    return _asked(tmp_path, "x = 1\n", first_bound_s)


async def test_an_earlier_questions_timeout_does_not_make_the_file_stale(tmp_path: Path) -> None:
    # Old: the earlier question's timeout left the file stale and no longer
    # owed, though the latest question was still out (and answered later).
    analyzer, client = _asked_twice(tmp_path, 0.05)
    first_pull = analyzer.pulls.latest["m.py"]
    analyzer.repull("m.py", 5.0)
    latest_pull = analyzer.pulls.latest["m.py"]
    await asyncio.wait_for(client.both_asked.wait(), 5)
    await asyncio.wait_for(first_pull, 5)  # its 0.05 s bound
    assert "m.py" in analyzer.awaiting  # the latest is still out
    assert "m.py" not in analyzer.unanswered
    client.questions[1].set_result(SimpleNamespace(kind="full", result_id="2", items=[]))
    await asyncio.wait_for(latest_pull, 5)
    assert "m.py" not in analyzer.awaiting
    assert "m.py" not in analyzer.unanswered
    assert analyzer.diagnostics["m.py"] == []


async def test_a_question_to_the_server_before_a_restart_is_not_taken(tmp_path: Path) -> None:
    # Old: the answer of the server that was stopped was taken for the new one's.
    analyzer, old = _asked_twice(tmp_path, 5.0)
    pull = analyzer.pulls.latest["m.py"]
    analyzer.client = StubClient()  # type: ignore[assignment]  # restarted
    await asyncio.wait_for(old.asked.wait(), 5)  # asked of the server it was asked of
    old.questions[0].set_result(_report('"name" is unknown import symbol', "1"))
    await asyncio.wait_for(pull, 5)
    assert "m.py" in analyzer.awaiting
    assert "m.py" not in analyzer.diagnostics


def test_a_deleted_open_file_whose_pull_timed_out_is_not_stale(tmp_path: Path) -> None:
    # Old: change() of the deleted file kept its timeout (only close()
    # dropped it): file by file, every later snapshot with it was stale.
    (tmp_path / "gone.py").write_text("x = 1\n")
    pool = AnalyzerPool(tmp_path)
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    analyzer.client = RecordingLanguageClient()  # type: ignore[assignment]
    analyzer.alive = True
    analyzer.open("gone.py")
    analyzer.not_answered("gone.py", 1, "basedpyright did not answer within 10 s")
    (tmp_path / "gone.py").unlink()
    analyzer.change("gone.py")
    assert analyzer.unanswered == {}
    assert missing_diagnostics([analyzer], {"gone.py"}) is None


async def test_an_answer_without_an_analysis_after_a_publish_leaves_the_publish(
    tmp_path: Path,
) -> None:
    # Old: the answer (no result id: the server did not analyse the file)
    # replaced the findings the server had just published with none.
    analyzer, client = _asked_twice(tmp_path, 5.0)
    pull = analyzer.pulls.latest["m.py"]
    await asyncio.wait_for(client.asked.wait(), 5)
    error = {
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
        "message": "published",
        "severity": 1,
    }
    uri = (tmp_path / "m.py").as_uri()
    analyzer.on_publish({"uri": uri, "version": 1, "diagnostics": [error]})
    client.questions[0].set_result(SimpleNamespace(kind="full", result_id=None, items=[]))
    await asyncio.wait_for(pull, 5)
    assert [d.message for d in analyzer.diagnostics["m.py"]] == ["published"]
    assert "m.py" not in analyzer.answered_blind


async def test_an_answer_without_an_analysis_after_other_texts_were_shown_is_stale(
    tmp_path: Path,
) -> None:
    """snapshot_files_with pulls the asked files again once the real texts
    are shown again (``file_checks.pull_again``): an empty answer without a
    result id (the server had not analysed the file) is not taken as clean
    (review20a G); an analysed one, asked again, is had."""
    (tmp_path / "m.py").write_text("from pkg import name\n")
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    client = StubClient()
    analyzer.client = client  # type: ignore[assignment]
    analyzer.alive = True
    analyzer.versions["m.py"] = 1
    # What it said while the earlier texts were shown.
    analyzer.findings.answered("m.py", SimpleNamespace(kind="full", result_id="1", items=[]))
    file_checks.pull_again([analyzer], ["m.py"])
    pull = analyzer.pulls.latest["m.py"]
    await asyncio.wait_for(client.asked.wait(), 5)
    client.questions[0].set_result(SimpleNamespace(kind="full", result_id=None, items=[]))
    await asyncio.wait_for(pull, 5)
    assert "m.py" not in analyzer.awaiting
    why = missing_diagnostics([analyzer], {"m.py"})
    assert why is not None and "without having analysed it" in why, why
    # Asked again (wait_files), analysed: had.
    analyzer.repull("m.py", 5.0)
    pull = analyzer.pulls.latest["m.py"]
    await asyncio.wait_for(client.both_asked.wait(), 5)
    client.questions[1].set_result(_report('"name" is unknown import symbol', "2"))
    await asyncio.wait_for(pull, 5)
    assert missing_diagnostics([analyzer], {"m.py"}) is None
    assert [d.message for d in analyzer.diagnostics["m.py"]] == ['"name" is unknown import symbol']


async def test_a_files_latest_question_is_named_not_read_off_the_running_task() -> None:
    """Whether a question is a file's latest is told of the question named
    (the pull captures its own task), from any task: here the test's."""
    pulls = LatestPulls()
    answered = asyncio.Event()

    async def question() -> None:
        await answered.wait()

    pulls.ask("m.py", question(), 10.0)
    earlier = pulls.latest["m.py"]
    pulls.ask("m.py", question(), 10.0)
    latest = pulls.latest["m.py"]
    assert pulls.is_latest("m.py", latest) and not pulls.is_latest("m.py", earlier)
    assert pulls.is_latest("n.py", earlier)  # n.py has none
    answered.set()
    await asyncio.wait_for(asyncio.gather(earlier, latest), 5)
    assert not pulls.out
