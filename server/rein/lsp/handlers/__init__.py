"""Every LSP method and command of ``rein serve``, in one table, and the
one :func:`register` that puts them on a server.

A handler is a module-level function ``(server, params)`` (a command's
params are its arguments, a tuple), grouped by concern: :mod:`.lifecycle`
(the server's life and its configuration), :mod:`.documents`, :mod:`.runs`,
:mod:`.sessions`, :mod:`.isolated`, :mod:`.review`, :mod:`.checkpoints`, :mod:`.preview`,
:mod:`.models`, :mod:`.approvals`, :mod:`.lm`, :mod:`.setup`. Handlers raise Rein's
errors; :func:`register` maps them to JSON-RPC errors for every handler
(:mod:`rein.lsp.errors`). docs/protocol.md documents every method and
command of the table (tests/lsp/test_handler_table.py checks both ways).

The handler modules import only pygls and lsprotocol when loaded; the rest
of Rein is imported when a handler first runs, so the server answers
``initialize`` fast (``rein bench lsp``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from rein.lsp import errors
from rein.lsp.handlers import (
    approvals,
    checkpoints,
    documents,
    isolated,
    lifecycle,
    lm,
    models,
    preview,
    review,
    runs,
    sessions,
    setup,
)

__all__ = ["COMMANDS", "METHODS", "Route", "register"]


class Route(NamedTuple):
    """One method (or command) and its handler; ``options`` are the LSP
    registration options pygls announces for it."""

    name: str
    handler: Callable[..., Any]
    options: Any = None


#: Every method (requests and notifications) the server handles.
METHODS: tuple[Route, ...] = (
    # the server's life and its configuration
    Route(lsp.INITIALIZE, lifecycle.initialize),
    Route(lsp.INITIALIZED, lifecycle.initialized),
    Route(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION, lifecycle.did_change_configuration),
    Route(lsp.SHUTDOWN, lifecycle.shutdown),
    Route(lsp.EXIT, lifecycle.exit_),
    # the editor's documents
    Route(lsp.TEXT_DOCUMENT_DID_CHANGE, documents.did_change),
    Route(lsp.TEXT_DOCUMENT_DID_SAVE, documents.did_save),
    Route("rein/diagnosticsChanged", documents.diagnostics_changed),
    Route(lsp.TEXT_DOCUMENT_CODE_ACTION, documents.code_action, documents.CODE_ACTION_OPTIONS),
    # runs
    Route("rein/prompt", runs.prompt),
    Route("rein/steer", runs.steer),
    Route("rein/followUp", runs.follow_up),
    Route("rein/abort", runs.abort),
    Route("rein/newSession", isolated.new_session),
    Route("rein/applyIsolated", isolated.apply_isolated),
    Route("rein/isolatedSessions", isolated.isolated_sessions),
    Route("rein/isolatedHunks", isolated.isolated_hunks),
    # sessions and what the server holds
    Route("rein/sessions", sessions.sessions),
    Route("rein/session", sessions.session),
    Route("rein/closeSession", sessions.close_session),
    Route("rein/serverState", sessions.server_state),
    Route("rein/mcpServers", sessions.mcp_servers),
    Route("rein/commands", sessions.commands),
    Route("rein/setup", setup.setup),
    # review and checkpoints
    Route("rein/review", review.review),
    Route("rein/reviewDecide", review.review_decide),
    Route("rein/checkpoints", checkpoints.checkpoints),
    Route("rein/restore", checkpoints.restore),
    Route("rein/checkpointContent", checkpoints.content),
    # the preview
    Route("rein/preview", preview.preview),
    # the model picker and the editor's models
    Route("rein/models", models.models),
    Route("rein/setModel", models.set_model),
    Route("rein/lm/delta", lm.lm_delta),
    Route("rein/lm/consent", lm.lm_consent),
    # approval rules
    Route("rein/approvals", approvals.approvals),
    Route("rein/approvals/revoke", approvals.revoke),
)

#: Every ``workspace/executeCommand`` command.
COMMANDS: tuple[Route, ...] = (
    Route("rein.fix", partial(runs.code_run, kind="fix")),
    Route("rein.explain", partial(runs.code_run, kind="explain")),
    Route("rein.ask", partial(runs.code_run, kind="ask")),
    Route("rein.abort", runs.abort_command),
    Route("rein.preview.start", partial(preview.preview_command, action="start")),
    Route("rein.preview.stop", partial(preview.preview_command, action="stop")),
    Route("rein.preview.restart", partial(preview.preview_command, action="restart")),
)


def register(server: LanguageServer) -> None:
    """Register every method and command of the table on ``server``."""
    for route in METHODS:
        server.feature(route.name, route.options)(_mapped(route, command=False))
    for route in COMMANDS:
        server.command(route.name)(_mapped(route, command=True))


def _mapped(route: Route, *, command: bool) -> Callable[..., Any]:
    """The handler as pygls calls it (``ls`` first: pygls passes the server
    to a first parameter of that name; a command's arguments spread), with
    Rein's errors mapped to JSON-RPC errors (:func:`rein.lsp.errors.as_jsonrpc`)."""
    handler, name = route.handler, route.name

    def params_of(args: tuple[Any, ...]) -> Any:
        return args if command else args[0]

    def failure(exc: Exception) -> Exception | None:
        return errors.as_jsonrpc(exc, name)

    if inspect.iscoroutinefunction(handler):

        async def handle_async(ls: Any, *args: Any) -> Any:
            try:
                return await handler(ls, params_of(args))
            except Exception as exc:
                mapped = failure(exc)
                if mapped is None:
                    raise
                raise mapped from exc

        return handle_async

    def handle(ls: Any, *args: Any) -> Any:
        try:
            return handler(ls, params_of(args))
        except Exception as exc:
            mapped = failure(exc)
            if mapped is None:
                raise
            raise mapped from exc

    return handle
