"""One question for a file's diagnostics to an analyzer server (the pull
model: ``textDocument/diagnostic``, or tsserver's report), bounded, and
asked again where the server asks for it (``ServerCancelled``) or, for
tsserver, until it loaded its project; and which question counts, a
file's latest (:class:`LatestPulls`). What the answer means for the file
is :mod:`rein.disk.pull_answers`'s."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.analyzer_notices import Registrations
from rein.disk.analyzer_requests import AnalyzerTimeout
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.ts_diagnostics import tsserver_report

__all__ = ["LatestPulls", "answers_pulls", "ask_diagnostics"]

log = logging.getLogger(__name__)


class LatestPulls:
    """The questions out, and each file's latest: only its answer, or its
    timeout, counts for the file (an earlier question, asked again since
    while the file's version stayed the same, may have been answered on
    another text that another file was shown meanwhile). A question
    replaced by a newer one is not out any more (the server may never
    answer it; nothing waits on it), nor is one past its working window
    when a question asked after it was answered first (the server is not
    working on it: it dropped it)."""

    def __init__(self) -> None:
        self.latest: dict[str, asyncio.Future[None]] = {}
        #: The version of the file each latest question asks about.
        self.version: dict[str, int] = {}
        #: question -> when it was asked, and until when (monotonic
        #: seconds) it shows the server working on it (:attr:`working_until`).
        self.out: dict[asyncio.Future[None], tuple[float, float]] = {}

    def ask(
        self,
        path: str,
        question: Coroutine[Any, Any, None],
        working_s: float,
        version: int | None = None,
    ) -> None:
        """Run ``question``, ``path``'s latest from now on; it shows the
        server working for ``working_s`` at most. With ``version``, only its
        answer settles the file at that version (:meth:`asking_at`)."""
        task = asyncio.ensure_future(question)
        replaced = self.latest.get(path)
        if replaced is not None:
            self.out.pop(replaced, None)
        self.latest[path] = task
        if version is None:
            self.version.pop(path, None)
        else:
            self.version[path] = version
        now = time.monotonic()
        self.out[task] = (now, now + working_s)
        task.add_done_callback(lambda done: self.out.pop(done, None))

    def working_until(self, now: float) -> float | None:
        """Until when a question out shows the server working on it (None:
        none does at ``now``): one not answered within its bound, or the
        request bound, says no more that it is working (it may have been
        dropped)."""
        until = max((u for _a, u in self.out.values()), default=now)
        return until if until > now else None

    def overdue(self, now: float) -> bool:
        """A question is out past its working window: the server may be
        checking a file for it still (basedpyright at a cold start under
        load: over 10 s, showing nothing), or it dropped it."""
        return any(until <= now for _asked, until in self.out.values())

    def asking(self, path: str) -> bool:
        """``path``'s latest question is out: asked again, it would be
        replaced (and the new one queued behind whatever is out)."""
        question = self.latest.get(path)
        return question is not None and question in self.out

    def asking_at(self, path: str, version: int | None) -> bool:
        """``path``'s latest question is out, asked about ``version`` to be
        settled by its answer alone: not by a publish meanwhile (a check
        the server began before the question, with other texts shown, can
        publish after it)."""
        return version is not None and self.asking(path) and self.version.get(path) == version

    def answered(self, question: asyncio.Future[None] | None) -> None:
        """``question`` was answered: the questions asked before it and
        past their working window are not out any more (the server answered
        a later one first: it dropped them, it is not working on them)."""
        asked = self.out.get(question) if question is not None else None
        if asked is None:
            return
        now = time.monotonic()
        for other, (when, until) in list(self.out.items()):
            if when < asked[0] and until <= now:
                del self.out[other]

    def is_latest(self, path: str, question: asyncio.Future[None] | None) -> bool:
        """``question`` (a task :meth:`ask` ran) is ``path``'s latest, or
        ``path`` has none."""
        return self.latest.get(path, question) is question

    def clear(self) -> None:
        """A new server: the old one's questions are not its own."""
        self.latest.clear()
        self.version.clear()


def answers_pulls(
    spec: AnalyzerSpec, capabilities: dict[str, Any], registrations: Registrations, *, pulled: bool
) -> bool:
    """A server answers textDocument/diagnostic: it is ``pulled`` anyway, it
    offers it (``diagnosticProvider``, at initialize or registered later),
    or it is configured to be pulled and has a whole-workspace mode
    (basedpyright, which publishes so and registers the method only later).
    clangd and gopls (configured "pull", offering none) and a server that
    only publishes are not: a question would wait out its bound."""
    if spec.tsserver:
        return False
    offered = bool(capabilities.get("diagnosticProvider")) or registrations.has(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC
    )
    return pulled or offered or bool(spec.pull and spec.diagnostic_mode_setting)


async def ask_diagnostics(
    client: LanguageClient,
    spec: AnalyzerSpec,
    root: Path,
    path: str,
    previous_result_id: str | None,
    bounded: Callable[[str, Awaitable[Any]], Awaitable[Any]],
    unchanged: Callable[[], bool],
) -> tuple[Any, str | None]:
    """The report for ``path`` and None, or None and why there is none (no
    answer within the bound ``bounded`` applies, or every attempt failed).
    tsserver is asked again after a timeout while ``unchanged()``."""
    uri = (root / path).as_uri()
    attempts = 6 if spec.tsserver else 3
    failed: Exception | None = None
    for attempt in range(attempts):
        try:
            request = (
                tsserver_report(client, root / path)
                if spec.tsserver
                else client.text_document_diagnostic_async(
                    lsp.DocumentDiagnosticParams(
                        text_document=lsp.TextDocumentIdentifier(uri=uri),
                        previous_result_id=previous_result_id,
                    )
                )
            )
            return await bounded(f"the diagnostics of {path}", request), None
        except AnalyzerTimeout as exc:
            if spec.tsserver and attempt < attempts - 1 and unchanged():
                continue  # tsserver answers once it loaded the project: asked again
            return None, str(exc)
        except Exception as exc:  # ServerCancelled: the server asks to retry
            log.debug("%s: pull diagnostics for %s failed: %s", spec.name, path, exc)
            failed = exc
            await asyncio.sleep(0.05)
    return None, f"{spec.name}: {failed}"
