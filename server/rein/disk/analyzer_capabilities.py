"""What the analyzer pool tells a language server it can do, as its client
(``initialize``'s ``capabilities``): configuration and watched files as the
spec asks, work-done progress, didSave, diagnostics (pushed, and pulled when
the spec pulls), and hierarchical document symbols (an outline with each
symbol's whole range, which ``find_definition`` shows the lines of)."""

from __future__ import annotations

from lsprotocol import types as lsp

from rein.disk.analyzer_specs import AnalyzerSpec

__all__ = ["client_capabilities"]


def client_capabilities(spec: AnalyzerSpec) -> lsp.ClientCapabilities:
    return lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(
            configuration=spec.workspace_configuration,
            workspace_folders=True,
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            ),
        ),
        window=lsp.WindowClientCapabilities(work_done_progress=spec.work_done_progress),
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                version_support=True, related_information=False
            ),
            diagnostic=lsp.DiagnosticClientCapabilities(related_document_support=False)
            if spec.pull
            else None,
            document_symbol=lsp.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
        ),
    )
