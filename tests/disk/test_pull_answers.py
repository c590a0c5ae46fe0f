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

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool


class StubClient:
    """Each diagnostics question gets a future the test answers."""

    def __init__(self) -> None:
        self.questions: list[asyncio.Future[Any]] = []
        self.both_asked = asyncio.Event()

    def text_document_diagnostic_async(self, params: Any) -> asyncio.Future[Any]:
        self.questions.append(asyncio.get_running_loop().create_future())
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


async def test_an_earlier_questions_answer_is_not_taken_for_the_latest(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("from pkg import name\n")
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    client = StubClient()
    analyzer.client = client  # type: ignore[assignment]
    analyzer.alive = True
    analyzer.versions["m.py"] = 1
    analyzer.repull("m.py", 5.0)
    first_pull = analyzer._latest_pull["m.py"]
    analyzer.repull("m.py", 5.0)  # asked again before the first answer
    latest_pull = analyzer._latest_pull["m.py"]
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
