"""An in-process stand-in for basedpyright's LSP client side, checking the
open files only (a large workspace), for the analyzer pool's unit tests:
the client of a basedpyright :class:`~rein.disk.analyzer_server._Analyzer`
that publishes a document's diagnostics when it is opened or changed,
never republishes the files importing it by itself (a server still busy
with them: under load basedpyright publishes an importer seconds after the
changed file, with nothing open in between), and answers a pull
(``textDocument/diagnostic``) by checking the file then, against the texts
it was shown.

What it checks: ``from mod.path import name`` needs ``def name`` or
``class name`` in the module's text as shown (else the disk's);
``"name" is unknown import symbol`` otherwise.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from tests.fakes.lsp_client import RecordingLanguageClient

__all__ = ["FileByFileServer", "basedpyright_over", "pool_over_file_by_file"]

_IMPORT = re.compile(r"^from\s+([\w.]+)\s+import\s+(\w+)", re.MULTILINE)


class FileByFileServer(RecordingLanguageClient):
    """See the module. ``publish`` (set by the test) is the analyzer's
    ``on_publish``."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.shown: dict[str, str] = {}  #: uri -> the text shown
        self.versions: dict[str, int] = {}
        self.publish: Callable[[lsp.PublishDiagnosticsParams], None] | None = None
        self.pulls: list[str] = []  #: the uris pulled, in order
        #: Called with a pull's uri as it is asked (a test's hook: what
        #: happens meanwhile, e.g. the watcher's change of another file).
        self.on_pull: Callable[[str], None] | None = None
        #: While set and not yet set free, answers are held (checked when
        #: asked, given once it is set): a server still working on them.
        self.hold: asyncio.Event | None = None
        self._held: set[asyncio.Future[None]] = set()
        self._results = 0

    # ------------------------------------------------------------ documents

    def text_document_did_open(self, params: Any) -> None:
        super().text_document_did_open(params)
        doc = params.text_document
        self.shown[doc.uri], self.versions[doc.uri] = doc.text, doc.version
        self._publish_soon(doc.uri)

    def text_document_did_change(self, params: Any) -> None:
        super().text_document_did_change(params)
        doc = params.text_document
        self.shown[doc.uri] = params.content_changes[-1].text
        self.versions[doc.uri] = doc.version
        self._publish_soon(doc.uri)

    def text_document_did_close(self, params: Any) -> None:
        super().text_document_did_close(params)
        self.shown.pop(params.text_document.uri, None)

    def text_document_diagnostic_async(self, params: Any) -> asyncio.Future[Any]:
        uri = params.text_document.uri
        self.pulls.append(uri)
        if self.on_pull is not None:
            self.on_pull(uri)
        items = self.check(uri)
        self._results += 1
        answer = asyncio.get_running_loop().create_future()
        report = lsp.FullDocumentDiagnosticReport(items=items, result_id=str(self._results))
        if self.hold is None:
            asyncio.get_running_loop().call_soon(answer.set_result, report)
        else:
            held = asyncio.ensure_future(self._answer_when(self.hold, answer, report))
            self._held.add(held)
            held.add_done_callback(self._held.discard)
        return answer

    @staticmethod
    async def _answer_when(
        free: asyncio.Event, answer: asyncio.Future[Any], report: lsp.FullDocumentDiagnosticReport
    ) -> None:
        await free.wait()
        answer.set_result(report)

    def publish_now(self, uri: str, *, on_disk: bool = False) -> None:
        """Publish ``uri``'s diagnostics at once: checked against the texts
        shown, or (``on_disk``) against the files' contents, as a check
        begun before another text was shown would have found them."""
        shown = self.shown
        if on_disk:
            self.shown = {uri: shown[uri]}
        try:
            params = self._params(uri, self.check(uri))
        finally:
            self.shown = shown
        self._deliver(params)

    # -------------------------------------------------------------- checking

    def check(self, uri: str) -> list[lsp.Diagnostic]:
        """The diagnostics of the document at ``uri`` in the texts shown now."""
        text = self.shown.get(uri, "")
        found: list[lsp.Diagnostic] = []
        for line, row in enumerate(text.splitlines()):
            match = _IMPORT.match(row)
            if match is None:
                continue
            module, name = match.groups()
            source = self._text_of(module.replace(".", "/") + ".py")
            if re.search(rf"^(def|class)\s+{name}\b", source, re.MULTILINE) is None:
                found.append(
                    lsp.Diagnostic(
                        range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(row))),
                        message=f'"{name}" is unknown import symbol',
                        severity=lsp.DiagnosticSeverity.Error,
                        source="basedpyright",
                    )
                )
        return found

    def _text_of(self, path: str) -> str:
        uri = (self.root / path).as_uri()
        if uri in self.shown:
            return self.shown[uri]
        file = self.root / path
        return file.read_text() if file.exists() else ""

    def _params(self, uri: str, items: list[lsp.Diagnostic]) -> lsp.PublishDiagnosticsParams:
        return lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=items, version=self.versions.get(uri)
        )

    def _publish_soon(self, uri: str) -> None:
        params = self._params(uri, self.check(uri))
        asyncio.get_running_loop().call_soon(self._deliver, params)

    def _deliver(self, params: lsp.PublishDiagnosticsParams) -> None:
        if self.publish is not None:
            self.publish(params)


async def pool_over_file_by_file(
    root: Path,
) -> tuple[AnalyzerPool, _Analyzer, FileByFileServer]:
    """An open-files analyzer pool of ``root`` whose one analyzer
    (basedpyright's) talks to a :class:`FileByFileServer`, started."""
    pool = AnalyzerPool(root, [DEFAULT_ANALYZERS[1]], workspace_max_files=0)
    await pool.prepare()
    server = FileByFileServer(pool.root)
    analyzer = basedpyright_over(pool, server)
    pool._started.set()
    return pool, analyzer, server


def basedpyright_over(pool: AnalyzerPool, server: FileByFileServer) -> _Analyzer:
    """basedpyright's analyzer in ``pool``, alive, its client ``server``
    (which publishes to it)."""
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    server.publish = analyzer.on_publish
    analyzer.client = server  # type: ignore[assignment]
    analyzer.alive = True
    pool.analyzers.append(analyzer)
    return analyzer
