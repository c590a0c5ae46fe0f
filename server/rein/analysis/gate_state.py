"""The analyzer gate's baselines as stored with a session whose changes are
not validated yet (restored when it resumes: its next verdict judges them
against the state before their first change)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rein.analysis.baselines import FileBaseline
from rein.harness.ports import Diagnostic
from rein.harness.redaction import redact

__all__ = ["MAX_STORED_TEXT", "exported", "imported"]

#: A stored baseline keeps a file's text up to this size (else no line map).
MAX_STORED_TEXT = 1_000_000


def exported(
    files: Mapping[str, FileBaseline], late: Mapping[str, tuple[Diagnostic, ...]]
) -> dict[str, Any]:
    """The per-file baselines and the importers' (``late``), as JSON (a
    file's text only up to :data:`MAX_STORED_TEXT` chars)."""
    return {
        "files": [
            {
                "path": b.path,
                "text": b.text if b.text is None or len(b.text) <= MAX_STORED_TEXT else None,
                "settled": b.settled,
                "renamed_from": b.renamed_from,
                "existed": b.existed,
                "diagnostics": [d.model_dump(mode="json") for d in b.diagnostics],
            }
            for b in files.values()
        ],
        "late": {path: [d.model_dump(mode="json") for d in found] for path, found in late.items()},
    }


def imported(
    data: Mapping[str, Any],
) -> tuple[dict[str, FileBaseline], dict[str, tuple[Diagnostic, ...]]]:
    """What :func:`exported` gave: the per-file baselines and ``late``, each
    message redacted (a session saved before diagnostics were redacted as
    they enter holds raw ones: compared raw with today's redacted message,
    an old error would read as new, and it would be stored back raw)."""
    files: dict[str, FileBaseline] = {}
    for item in data.get("files", []):
        diagnostics = tuple(_diagnostic(d) for d in item["diagnostics"])
        files[item["path"]] = FileBaseline(
            item["path"],
            item.get("text"),
            diagnostics,
            bool(item.get("settled", True)),
            renamed_from=item.get("renamed_from"),
            existed=bool(item.get("existed", True)),
        )
    late = {
        path: tuple(_diagnostic(d) for d in found) for path, found in data.get("late", {}).items()
    }
    return files, late


def _diagnostic(data: Mapping[str, Any]) -> Diagnostic:
    diagnostic = Diagnostic.model_validate(data)
    message = redact(diagnostic.message)
    return (
        diagnostic
        if message == diagnostic.message
        else diagnostic.model_copy(update={"message": message})
    )
