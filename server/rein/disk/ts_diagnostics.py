"""typescript-language-server's diagnostics of one file, asked for instead
of waited for (the typescript preset's ``diagnostics: "tsserver"``).

The server publishes a file's findings pass by pass (syntax, semantic,
suggestion), each publish the union with the other passes' latest and none
with a version: the first publish after a change can still carry the old
text's type errors, and a busy machine can keep the semantic pass back
longer than any quiet period. Its ``typescript.tsserverRequest`` command
runs tsserver's ``syntacticDiagnosticsSync`` and ``semanticDiagnosticsSync``
on the text tsserver has now (the changes sent before the request), so
their answers are the file's findings for that text. They come back as a
full LSP diagnostic report, the shape a ``textDocument/diagnostic`` answer
has; suggestions (hints: unused names, deprecations) are not asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

__all__ = ["tsserver_report"]

_COMMANDS = ("syntacticDiagnosticsSync", "semanticDiagnosticsSync")
_SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "suggestion": lsp.DiagnosticSeverity.Hint,
    "message": lsp.DiagnosticSeverity.Information,
}


def _position(location: dict[str, Any]) -> lsp.Position:
    # tsserver counts lines and offsets from 1.
    return lsp.Position(line=int(location["line"]) - 1, character=int(location["offset"]) - 1)


def _diagnostic(item: dict[str, Any]) -> lsp.Diagnostic:
    return lsp.Diagnostic(
        range=lsp.Range(start=_position(item["start"]), end=_position(item["end"])),
        message=str(item.get("text", "")),
        severity=_SEVERITY.get(str(item.get("category")), lsp.DiagnosticSeverity.Error),
        code=item.get("code"),
        source="typescript",
    )


async def tsserver_report(client: Any, file: Path) -> lsp.FullDocumentDiagnosticReport:
    """``file``'s syntactic and semantic diagnostics, asked of tsserver
    through the language server (``client``: its pygls LanguageClient)."""
    items: list[lsp.Diagnostic] = []
    for command in _COMMANDS:
        answer = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(
                command="typescript.tsserverRequest", arguments=[command, {"file": str(file)}]
            )
        )
        body = answer.get("body") if isinstance(answer, dict) else None
        if not isinstance(answer, dict) or not answer.get("success") or not isinstance(body, list):
            raise RuntimeError(f"tsserver's {command} failed: {str(answer)[:200]}")
        items += [_diagnostic(item) for item in body]
    return lsp.FullDocumentDiagnosticReport(items=items)
