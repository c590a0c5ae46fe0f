"""An analyzer that publishes, fell silent and still owes a file (in
process, no analyzer runs): basedpyright in open-files mode never published
django's ``contrib/sites/models.py`` and three importers again after the
module was renamed away and back (the warm probes' ``sed`` case), and the
verdict ended stale at the settle bound. It answers a pull of such a file:
the file is asked for by pull once the analyzer is silent, and the verdict
has its diagnostics."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from lsprotocol import types as lsp

from rein.disk import silent_files
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from tests.fakes.lsp_client import RecordingLanguageClient

#: The waits' bound here: a wait that runs it out fails the test.
BOUND_S = 2.0
#: The settle bound of the tests that run it out: long enough that a
#: loaded machine's stall (CI under xdist at a load of 8-10) does not end
#: it before the pool's first pull, which is what those tests count.
OWED_MS = 1200
#: Their wait's bound: past the settle bound, with room for that stall.
OWED_BOUND_S = 5.0

_ERROR = lsp.Diagnostic(
    range=lsp.Range(lsp.Position(0, 4), lsp.Position(0, 9)),
    message='"undefined" is not defined',
    severity=lsp.DiagnosticSeverity.Error,
    source="basedpyright",
)


class _PulledClient(RecordingLanguageClient):
    """Never publishes; answers the pulls with ``reports`` in turn, the last
    one again and again (never, when None)."""

    def __init__(self, *reports: lsp.FullDocumentDiagnosticReport | None) -> None:
        super().__init__()
        self.reports = list(reports)
        self.pulls: list[str] = []
        self.asked = asyncio.Event()

    def text_document_diagnostic_async(self, params: lsp.DocumentDiagnosticParams) -> Any:
        self.pulls.append(params.text_document.uri)
        self.asked.set()
        report = self.reports[min(len(self.pulls), len(self.reports)) - 1]
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if report is not None:
            answer.set_result(report)
        return answer


async def _pool(
    root: Path,
    *reports: lsp.FullDocumentDiagnosticReport | None,
    owed_limit_ms: int,
    spec: AnalyzerSpec = DEFAULT_ANALYZERS[1],
) -> tuple[AnalyzerPool, _Analyzer, _PulledClient]:
    (root / "a.py").write_text("x = undefined\n")
    pool = AnalyzerPool(
        root,
        [spec],
        workspace_max_files=0,
        quiet_ms=0,
        owed_limit_ms=owed_limit_ms,
    )
    await pool.prepare()
    pool.owed.silent.silent_s = 0.05
    analyzer = _Analyzer(spec, "basedpyright-langserver", pool)
    client = _PulledClient(*reports)
    analyzer.client = cast(Any, client)
    analyzer.alive = True
    pool.analyzers = [analyzer]
    pool._started.set()
    analyzer.open("a.py")
    return pool, analyzer, client


async def test_a_file_never_published_is_pulled_and_the_verdict_has_its_diagnostics(
    root: Path,
) -> None:
    report = lsp.FullDocumentDiagnosticReport(items=[_ERROR], result_id="3")
    pool, analyzer, client = await _pool(root, report, owed_limit_ms=600_000)
    assert not analyzer.pull  # it publishes: pulled only because it went silent
    assert await pool.wait_idle(BOUND_S)
    assert client.pulls == [(root / "a.py").as_uri()]
    snap = await pool.snapshot(None)
    assert not snap.stale
    assert [(d.path, d.message) for d in snap.diagnostics] == [
        ("a.py", '"undefined" is not defined')
    ]
    # Settled: a later wait asks nothing more.
    assert await pool.wait_idle(BOUND_S)
    assert len(client.pulls) == 1


async def test_an_answer_without_an_analysis_is_asked_again_until_it_analysed(
    root: Path,
) -> None:
    # No result id: the server answered without knowing the file (a
    # workspace still being set up); asked again once silent, it knows it.
    unknown = lsp.FullDocumentDiagnosticReport(items=[])
    report = lsp.FullDocumentDiagnosticReport(items=[_ERROR], result_id="4")
    pool, _analyzer, client = await _pool(root, unknown, report, owed_limit_ms=600_000)
    assert await pool.wait_idle(BOUND_S)
    assert len(client.pulls) == 2
    snap = await pool.snapshot(None)
    assert not snap.stale
    assert [d.message for d in snap.diagnostics] == ['"undefined" is not defined']


async def test_never_analysed_it_is_stale_at_the_settle_bound(root: Path) -> None:
    unknown = lsp.FullDocumentDiagnosticReport(items=[])
    pool, _analyzer, client = await _pool(root, unknown, owed_limit_ms=OWED_MS)
    assert await pool.wait_idle(OWED_BOUND_S)
    assert len(client.pulls) >= 2  # asked again, within the bound only
    snap = await pool.snapshot(None)
    assert snap.stale
    assert snap.stale_reason is not None
    assert snap.stale_reason.startswith("diagnostics are missing: basedpyright ")
    assert f"a.py within {OWED_MS / 1000} s" in snap.stale_reason


async def test_a_pull_not_answered_is_bounded_by_what_is_left_of_the_settle_bound(
    root: Path,
) -> None:
    pool, _analyzer, client = await _pool(root, None, owed_limit_ms=OWED_MS)
    assert await pool.wait_idle(OWED_BOUND_S)
    assert len(client.pulls) == 1  # asked once, not again and again
    snap = await pool.snapshot(None)
    assert snap.stale
    assert snap.stale_reason is not None
    # Asked once silent (0.05 s) at the earliest: what was left of the
    # settle bound, at most that bound less 0.05 s, and the reason names it.
    found = re.search(
        r"did not answer the diagnostics of a\.py within ([0-9.]+) s \((.*)\)$", snap.stale_reason
    )
    assert found is not None, snap.stale_reason
    assert 0 < float(found[1]) <= OWED_MS / 1000 - pool.owed.silent.silent_s
    assert found[2] == silent_files.BOUND == "what was left of gates.analyzer.settleTimeoutMs"


async def test_a_publish_while_the_pull_is_out_settles_the_file(root: Path) -> None:
    # The pull not answered (queued behind its analysis), the server
    # publishes the file: that settles it. Old: taken for an answer without
    # an analysis, owed again, asked again, and stale when the pull timed
    # out, though published.
    pool, analyzer, client = await _pool(root, None, owed_limit_ms=400)
    silent = time.monotonic() + 0.1  # past silent_s (0.05 s)
    pool.owed.expire(pool.analyzers, silent)
    await asyncio.wait_for(client.asked.wait(), BOUND_S)
    pull = analyzer.pulls.latest["a.py"]
    analyzer.on_publish({"uri": (root / "a.py").as_uri(), "version": 1, "diagnostics": []})
    pool.owed.expire(pool.analyzers, silent)
    assert "a.py" not in analyzer.awaiting  # not owed again
    await asyncio.wait_for(pull, BOUND_S)  # its bound, what was left of 0.4 s
    assert "a.py" not in analyzer.unanswered  # its timeout says nothing
    assert not (await pool.snapshot(None)).stale
    assert len(client.pulls) == 1


@pytest.mark.parametrize(
    ("pull", "mode"),
    [(False, None), (True, None)],
    ids=["publishes only (bash)", "configured pull, offers none (clangd, gopls)"],
)
async def test_a_server_that_offers_no_pull_is_not_asked(
    root: Path, pull: bool, mode: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Old: asked; its question waited out the bound and then left the file
    # stale, though the server published it meanwhile.
    spec = replace(DEFAULT_ANALYZERS[1], name="other", pull=pull, diagnostic_mode_setting=mode)
    pool, analyzer, _client = await _pool(root, None, owed_limit_ms=400, spec=spec)
    asked: list[str] = []
    monkeypatch.setattr(analyzer, "repull", lambda path, *_bound: asked.append(path))
    pool.owed.expire(pool.analyzers, time.monotonic() + 0.1)
    assert asked == []
    analyzer.capabilities = {"diagnosticProvider": {"interFileDependencies": True}}
    pool.owed.expire(pool.analyzers, time.monotonic() + 0.1)
    assert asked == ["a.py"]  # it offers them: asked


async def test_an_analyzer_checking_a_file_for_a_question_is_not_silent(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old: basedpyright checking a file for a cold gate's pull (it shows
    no progress meanwhile: 26 s for toolz's itertoolz.py and its importers
    at a load of 12) was taken for silent: every file it owed was pulled,
    queued ahead of the gate's next questions, and replaced those out (only
    a file's latest question counts). Once the question is done, it can be
    silent again."""
    pool, analyzer, client = await _pool(root, None, owed_limit_ms=600_000)
    analyzer.repull("a.py", 0.3, "the gate's bound")  # the gate's question, not answered
    question = analyzer.pulls.latest["a.py"]
    asked: list[str] = []
    monkeypatch.setattr(analyzer, "repull", lambda path, *_bound: asked.append(path))
    pool.owed.expire(pool.analyzers, time.monotonic() + 0.2)  # silent 0.05 s, within 0.3 s
    assert asked == []
    await asyncio.wait_for(question, BOUND_S)  # its bound ran out
    analyzer.change("a.py", "y = 1\n")  # owed again, nothing asked
    pool.owed.expire(pool.analyzers, time.monotonic() + 1.0)
    assert asked == ["a.py"]


async def test_a_question_the_server_dropped_does_not_keep_other_files_from_being_asked(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old (review14b): a pull out counted the analyzer as working until its
    bound, what was left of the settle bound for a silent file's, so one
    question the server dropped kept every other file owed from being
    asked until then: they ended stale, never asked. It counts within the
    request bound only."""
    pool, analyzer, client = await _pool(root, None, owed_limit_ms=600_000)
    pool.owed.expire(pool.analyzers, time.monotonic() + 0.1)  # a.py asked by pull
    await asyncio.wait_for(client.asked.wait(), BOUND_S)  # never answered
    (root / "b.py").write_text("y = 1\n")
    analyzer.open("b.py")  # owed, never published
    asked: list[str] = []
    monkeypatch.setattr(analyzer, "repull", lambda path, *_bound: asked.append(path))
    pool.owed.expire(pool.analyzers, time.monotonic() + 0.1)
    assert asked == []  # a.py's question shows it working
    # Silent for much longer than a request's bound: b.py is asked.
    pool.owed.expire(pool.analyzers, time.monotonic() + 2 * pool.request_timeout_s)
    assert asked == ["b.py"]


async def test_a_question_replaced_by_a_newer_one_is_not_out(root: Path) -> None:
    """Old: a file's pull replaced by a newer question stayed out (it shows
    the server working) though nothing waits on its answer."""
    pool, analyzer, _client = await _pool(root, None, owed_limit_ms=600_000)
    analyzer.repull("a.py", 0.3, "the gate's bound")
    first = analyzer.pulls.latest["a.py"]
    analyzer.repull("a.py", 0.3, "the gate's bound")
    assert not first.done()
    assert list(analyzer.pulls.out) == [analyzer.pulls.latest["a.py"]]


async def test_past_its_window_a_question_out_gets_one_probe_not_every_owed_file(
    root: Path,
) -> None:
    """Old (cold16): past the request bound a question out (basedpyright
    checking a file for a cold gate's question: over 10 s at a cold start
    under load) no longer showed the analyzer working, and every file it
    owed was pulled, the gate's own files among them (their questions
    replaced): 31 pulls of every toolz file in ``rein bench gates --corpus
    --cold``. Now one owed file is asked, the gate's question stays; the
    probe answered first, that question is taken as dropped and the rest
    are asked."""
    report = lsp.FullDocumentDiagnosticReport(items=[], result_id="1")
    pool, analyzer, client = await _pool(root, None, report, owed_limit_ms=600_000)
    request_s, pool.request_timeout_s = pool.request_timeout_s, 0.0
    analyzer.repull("a.py", 600.0, "the gate's bound")  # never answered; past its window at once
    pool.request_timeout_s = request_s
    gate = analyzer.pulls.latest["a.py"]
    for name in ("b.py", "c.py"):
        (root / name).write_text("y = 1\n")
        analyzer.open(name)  # owed, never published
    pool.owed.expire(pool.analyzers, time.monotonic() + 1.0)
    latest = analyzer.pulls.latest
    assert sorted(latest) == ["a.py", "b.py"]  # a probe; c.py not asked
    assert latest["a.py"] is gate  # not replaced
    probe = latest["b.py"]
    pool.owed.expire(pool.analyzers, time.monotonic() + 1.0)
    assert sorted(latest) == ["a.py", "b.py"]  # the probe is out: working
    await asyncio.wait_for(probe, BOUND_S)  # answered
    assert "b.py" not in analyzer.awaiting
    assert not analyzer.pulls.asking("a.py")  # answered after it: dropped
    pool.owed.expire(pool.analyzers, time.monotonic() + 1.0)
    assert sorted(latest) == ["a.py", "b.py", "c.py"]
    assert latest["a.py"] is not gate  # asked again
    assert client.pulls[:2] == [(root / "a.py").as_uri(), (root / "b.py").as_uri()]
