"""An editor whose analyzer publishes progressively, for the tests of the
editor's settle rule (tests/lsp/test_editor_gates.py).

:class:`ProgressiveEditor` is the :class:`tests.fakes.Editor` with its own
analyzer instead of the ruff pool: for a file it analyses it publishes the
syntax layer at once (Python's own parser) and the semantic layer (real ruff,
undefined names) ``delay_s`` later, each with a ``rein/diagnosticsChanged``,
the way basedpyright publishes a first result and the semantic one later.
Between the two its ``rein/diagnostics`` answer says ``pending: true``.

Like VS Code's ``workspace.openTextDocument``, it opens (and so analyses) a
file when it is asked about it with ``rein/diagnostics``; files nobody opened
or asked about are not analysed (an editor's servers analyse open documents).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInternalError
from pytest_lsp import LanguageClient

from tests.fakes.editor import Editor

__all__ = ["ProgressiveEditor"]

RUFF = str(Path(sys.executable).parent / "ruff")


def _range(line: int, character: int, end_line: int, end_character: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": character},
        "end": {"line": end_line, "character": end_character},
    }


def syntax_layer(rel: str, text: str) -> list[dict[str, Any]]:
    try:
        compile(text, rel, "exec")
    except SyntaxError as exc:
        line = max((exc.lineno or 1) - 1, 0)
        col = max((exc.offset or 1) - 1, 0)
        return [
            {
                "range": _range(line, col, line, col + 1),
                "severity": 1,
                "source": "syntax",
                "message": str(exc.msg),
            }
        ]
    return []


def semantic_layer(rel: str, text: str) -> list[dict[str, Any]]:
    """Undefined names, by real ruff (F821)."""
    done = subprocess.run(
        [
            RUFF,
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "F821",
            "--output-format",
            "json",
            "--stdin-filename",
            rel,
            "-",
        ],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    out = []
    for item in json.loads(done.stdout or "[]"):
        start, end = item["location"], item["end_location"]
        out.append(
            {
                "range": _range(
                    start["row"] - 1, start["column"] - 1, end["row"] - 1, end["column"] - 1
                ),
                "severity": 1,
                "code": item["code"],
                "source": "semantic",
                "message": item["message"],
            }
        )
    return out


class ProgressiveEditor(Editor):
    """See the module docstring. :meth:`drop_diagnostics` makes it a
    client without ``rein/diagnostics``."""

    def __init__(
        self,
        client: LanguageClient,
        root: Path,
        *,
        delay_s: float = 0.3,
        syntax_delay_s: float = 0.05,
    ) -> None:
        super().__init__(client, root)
        self.delay_s = delay_s
        self.syntax_delay_s = syntax_delay_s
        #: rel -> what the analyzer published last
        self.published: dict[str, list[dict[str, Any]]] = {}
        #: files whose semantic layer is still to come
        self.pending: set[str] = set()
        #: files opened because Rein asked about them
        self.opened_on_request: list[str] = []
        #: (rel, layer) in publishing order
        self.publishes: list[tuple[str, str]] = []
        self._late: dict[str, asyncio.TimerHandle] = {}
        #: set: rein/diagnostics answers with this internal error
        self.failure: str | None = None

    def text(self, rel: str) -> str | None:
        if rel in self.docs:
            return self.docs[rel][1]
        path = self.root / rel
        return path.read_text() if path.is_file() else None

    def analyse(self, rel: str) -> None:
        """Publish the syntax layer soon (``syntax_delay_s``: after the edit's
        answer reached the server, as a real analyzer's first result does)
        and the semantic one ``delay_s`` after the change."""
        old = self._late.pop(rel, None)
        if old is not None:
            old.cancel()
        self.pending.add(rel)
        self._late[rel] = asyncio.get_running_loop().call_later(
            self.syntax_delay_s, self._publish_syntax, rel
        )

    def _publish_syntax(self, rel: str) -> None:
        text = self.text(rel)
        self._late.pop(rel, None)
        if text is None:
            self.published.pop(rel, None)
            self.pending.discard(rel)
            self.diagnostics_changed([rel])
            return
        syntax = syntax_layer(rel, text)
        semantic = semantic_layer(rel, text) if not syntax else []
        self.published[rel] = syntax
        self.publishes.append((rel, "syntax"))
        self.diagnostics_changed([rel])
        if syntax:
            self.pending.discard(rel)
            return
        self._late[rel] = asyncio.get_running_loop().call_later(
            self.delay_s - self.syntax_delay_s, self._publish_semantic, rel, syntax + semantic
        )

    def _publish_semantic(self, rel: str, diagnostics: list[dict[str, Any]]) -> None:
        self._late.pop(rel, None)
        self.published[rel] = diagnostics
        self.pending.discard(rel)
        self.publishes.append((rel, "semantic"))
        self.diagnostics_changed([rel])

    # ------------------------------------------------------------ the editor

    def open(self, rel: str) -> None:
        super().open(rel)
        self.analyse(rel)

    def _analyze(self, *rels: str) -> None:
        # An applied edit opens its document (as VS Code does): analysed.
        self.generation += 1
        for rel in rels:
            self.analyse(rel)

    def drop_diagnostics(self) -> None:
        """Become a client without ``rein/diagnostics`` (after wire): pygls
        answers MethodNotFound, which pytest-lsp would report as an error of
        the test; here it is the expected answer."""
        self.client.protocol.fm.features.pop("rein/diagnostics")
        self.client.report_server_error = lambda error, source: None  # type: ignore[method-assign]

    def fail_diagnostics(self, message: str) -> None:
        """Answer ``rein/diagnostics`` with an internal error from now on."""
        self.failure = message
        self.client.report_server_error = lambda error, source: None  # type: ignore[method-assign]

    async def diagnostics(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.failure is not None:
            raise JsonRpcInternalError(self.failure)
        wanted = params.get("uris")
        rels = [self.rel(u) for u in wanted] if wanted is not None else sorted(self.published)
        for rel in rels:
            if rel not in self.published and rel not in self.pending and self.text(rel):
                self.opened_on_request.append(rel)
                self.analyse(rel)
        answer: dict[str, Any] = {
            "items": [{"uri": self.uri(r), "diagnostics": self.published.get(r, [])} for r in rels]
        }
        if any(r in self.pending for r in rels):
            answer["pending"] = True
        return answer
