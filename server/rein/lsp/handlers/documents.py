"""The editor's documents: a person's edit and save (auto-repair), the
editor's diagnostics changing, and the code actions offered on a range."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["CODE_ACTION_OPTIONS", "code_action", "diagnostics_changed", "did_change", "did_save"]

log = logging.getLogger(__name__)

CODE_ACTION_OPTIONS = lsp.CodeActionOptions(
    code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite]
)


def did_change(server: ReinServer, params: lsp.DidChangeTextDocumentParams) -> None:
    workspace, _ = server.adapters()
    if workspace.on_did_change(params.text_document.uri) is not None:
        server.auto_repair.on_person_edit(params.text_document.uri)


def did_save(server: ReinServer, params: lsp.DidSaveTextDocumentParams) -> None:
    workspace, _ = server.adapters()
    if workspace.own_save(params.text_document.uri):
        return  # Rein saved its own edit: not the person's save
    server.auto_repair.on_save(params.text_document.uri)


def diagnostics_changed(server: ReinServer, params: Any) -> None:
    from rein.lsp.params import DiagnosticsChangedParams, parse

    try:
        parsed = parse(DiagnosticsChangedParams, params, "rein/diagnosticsChanged")
    except JsonRpcInvalidParams as exc:
        log.warning("%s", exc)
        return
    server.on_diagnostics_changed(parsed.uris, parsed.versions)


def code_action(server: ReinServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    from rein.lsp import code_actions

    return code_actions.actions_for(params)
