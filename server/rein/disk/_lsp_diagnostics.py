"""An analyzer's diagnostic, as it sent it (its JSON, or lsprotocol's
object) -> Rein's :class:`~rein.harness.ports.Diagnostic`, its message
redacted as it enters (a type checker's message quotes a literal:
``Literal['sk-...']``): the gates' verdicts, the baselines a session stores
with its unvalidated changes and the comparisons between them all see the
one redacted text."""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from rein.harness.ports import Diagnostic
from rein.harness.redaction import redact

__all__ = ["diagnostic_from_json", "diagnostic_from_lsp"]


def diagnostic_from_json(path: str, d: dict[str, Any], source: str) -> Diagnostic:
    """A diagnostic as the analyzer sent it (JSON) -> Rein's."""
    start = d["range"]["start"]
    end = d["range"]["end"]
    code = d.get("code")
    severity = d.get("severity")
    return Diagnostic(
        path=path,
        line=start["line"],
        character=start["character"],
        end_line=end["line"],
        end_character=end["character"],
        severity=int(severity) if severity is not None else 1,
        code=str(code) if code is not None else None,
        source=d.get("source") or source,
        message=redact(d.get("message", "")),
    )


def diagnostic_from_lsp(path: str, d: lsp.Diagnostic, source: str) -> Diagnostic:
    code = d.code
    return Diagnostic(
        path=path,
        line=d.range.start.line,
        character=d.range.start.character,
        end_line=d.range.end.line,
        end_character=d.range.end.character,
        severity=int(d.severity) if d.severity is not None else 1,
        code=str(code) if code is not None else None,
        source=d.source or source,
        message=redact(d.message),
    )
