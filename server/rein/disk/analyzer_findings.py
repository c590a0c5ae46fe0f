"""What one analyzer server last said of each file: its diagnostics (from a
publish or a pull's answer), or why they are missing (a question not
answered within its bound), whether its last answer came without an
analysis, and the result id of its last analysed answer. Whether the
diagnostics are still owed is the analyzer's
(:class:`~rein.disk.analyzer_server._Analyzer`)."""

from __future__ import annotations

from typing import Any

from rein.disk._lsp_diagnostics import diagnostic_from_json, diagnostic_from_lsp
from rein.harness.ports import Diagnostic

__all__ = ["Findings"]


class Findings:
    """One server's findings by path (``name``: the server's, the
    diagnostics' source; ``workspace_mode``: it has a whole-workspace mode,
    so an answer without a result id came without an analysis)."""

    def __init__(self, name: str, *, workspace_mode: bool) -> None:
        self.name = name
        self.workspace_mode = workspace_mode
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        #: path -> the JSON items of its last publish: an unchanged publish
        #: (basedpyright re-checking an importer) keeps the same Diagnostic
        #: objects, so the gate can skip files whose findings are the
        #: baseline's own objects.
        self._published_items: dict[str, list[Any]] = {}
        #: path -> why its diagnostics are missing (a request not answered
        #: within the bound), until it answers or publishes for it again.
        self.unanswered: dict[str, str] = {}
        #: Paths whose latest pull was answered without an analysis (no
        #: result id from a server with a workspace mode), nothing since.
        self.answered_blind: set[str] = set()
        #: path -> the result id of its last analysed answer.
        self.result_ids: dict[str, str] = {}
        #: Paths whose next word must come from an analysis: what it holds
        #: of them is its answer while it was shown other texts
        #: (:func:`~rein.disk.file_checks.snapshot_files_with`).
        self._must_analyse: set[str] = set()
        #: path -> how many publishes it has had (a pull's question notes
        #: it: published meanwhile, :meth:`publishes`).
        self._publishes: dict[str, int] = {}

    def publishes(self, path: str) -> int:
        """How many publishes ``path`` has had."""
        return self._publishes.get(path, 0)

    def expect_analysis(self, path: str) -> None:
        """What it holds of ``path`` is of texts shown no more: its next
        answer without an analysis leaves ``path`` unanswered (stale), not
        clean."""
        self._must_analyse.add(path)

    def published(self, path: str, items: list[Any], *, structured: bool) -> None:
        """A publish for ``path``: its ``items`` as JSON, or as lsprotocol's
        objects (``structured``)."""
        if structured:
            self.diagnostics[path] = [diagnostic_from_lsp(path, d, self.name) for d in items]
        elif items != self._published_items.get(path) or path not in self.diagnostics:
            self.diagnostics[path] = [diagnostic_from_json(path, d, self.name) for d in items]
            self._published_items[path] = items
        self.unanswered.pop(path, None)
        self.answered_blind.discard(path)
        self._must_analyse.discard(path)
        self._publishes[path] = self._publishes.get(path, 0) + 1

    def blind(self, report: Any) -> bool:
        """A pull's ``report`` came without an analysis of the file."""
        return not getattr(report, "result_id", None) and self.workspace_mode

    def answered(self, path: str, report: Any) -> None:
        """A pull's answer for ``path`` (lsprotocol's report, or tsserver's)."""
        result_id = getattr(report, "result_id", None)
        if result_id:
            self.result_ids[path] = result_id
        if self.blind(report):
            self.answered_blind.add(path)
        else:
            self.answered_blind.discard(path)
        self.unanswered.pop(path, None)
        if getattr(report, "kind", None) != "unchanged":
            items = getattr(report, "items", None) or []
            self.diagnostics[path] = [diagnostic_from_lsp(path, d, self.name) for d in items]
        if path in self._must_analyse:
            self._must_analyse.discard(path)
            if self.blind(report):
                # Empty because it did not analyse it (not set up yet): not
                # known, never clean. Asked again (file_checks.wait_files) or
                # published, it is had.
                self.unanswered[path] = (
                    f"{self.name} answered for {path} without having analysed it, "
                    "after it was shown another text"
                )

    def analysed(self, path: str) -> bool:
        """Its last answer for ``path`` came from an analysis."""
        return not self.workspace_mode or path in self.result_ids

    def dropped(self, path: str) -> None:
        """``path``'s diagnostics are no part of any snapshot (a closed file's)."""
        self.diagnostics.pop(path, None)
        self._published_items.pop(path, None)

    def forget(self, path: str) -> None:
        """All but its result id (closed or deleted)."""
        self.dropped(path)
        self.unanswered.pop(path, None)
        self.answered_blind.discard(path)
        self._must_analyse.discard(path)

    def clear(self) -> None:
        """A new server: the old one's findings and result ids are not its own."""
        self.diagnostics.clear()
        self._published_items.clear()
        self.unanswered.clear()
        self.answered_blind.clear()
        self.result_ids.clear()
        self._must_analyse.clear()
