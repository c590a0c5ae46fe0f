"""Every LSP registration of Rein, in one module. Handlers parse params,
call the server and the harness, and convert the result."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from rein.lsp import approvals, lm, models
from rein.lsp._framing import DEFAULT_MAX_BYTES
from rein.lsp.server import ReinServer, RequestFailed

if TYPE_CHECKING:
    from rein.harness.events import Event
    from rein.lsp.params import Attachment
    from rein.session import Session

# Handlers import the rest of Rein when first called, so the server answers
# ``initialize`` having imported only pygls and lsprotocol (rein bench lsp).
FIX, EXPLAIN, ASK, ABORT = "rein.fix", "rein.explain", "rein.ask", "rein.abort"

__all__ = ["create_server"]

log = logging.getLogger(__name__)


def _shown(value: str, limit: int = 80) -> str:
    """A client's value quoted in an error message, bounded."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _session(server: ReinServer, session_id: str, method: str) -> Session | None:
    """The session in memory; None for one evicted to the store (it runs
    nothing); InvalidParams for an unknown one."""
    session = server.sessions.get(session_id)
    if session is None:
        if server.manager.was_evicted(session_id):
            return None
        raise JsonRpcInvalidParams(
            f"{method}: invalid params: sessionId: no session {_shown(session_id)}"
        )
    return session


def _progress_listener(server: ReinServer, token: str | int) -> Any:
    def listener(event: Event) -> None:
        if event.type == "turn_end":
            from rein.harness.spend import spend_line

            line = spend_line(event.run_usage, event.context, event.run_cost)
            server.work_done_progress.report(
                token, lsp.WorkDoneProgressReport(message=f"turn {event.turn} · {line}")
            )
        elif event.type == "gate_start":
            server.work_done_progress.report(
                token, lsp.WorkDoneProgressReport(message=f"checking: {event.gate}")
            )

    return listener


def create_server(max_message_bytes: int = DEFAULT_MAX_BYTES) -> ReinServer:
    server = ReinServer(max_message_bytes)
    lm.register(server)
    models.register(server)
    approvals.register(server)

    # ---------------------------------------------------------- lifecycle

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: ReinServer, params: lsp.InitializeParams) -> None:
        ls.set_initialization_options(params.initialization_options)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: ReinServer, params: lsp.InitializedParams) -> None:
        try:
            if not await _pull_configuration(ls):
                ls.apply_configuration({}, "initializationOptions")
        finally:
            ls.configured_event().set()
        ls.disk_watcher()
        await ls.open_store()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: ReinServer, params: lsp.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("rein"), dict):
            ls.apply_configuration(settings["rein"], "settings")
        else:
            await _pull_configuration(ls)

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: ReinServer, params: Any) -> None:
        await ls.shutdown_sessions()

    @server.feature(lsp.EXIT)
    def exit_(ls: ReinServer, params: Any) -> None:
        ls.kill_preview()  # without a shutdown request first

    # ------------------------------------------------------- document sync

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ReinServer, params: lsp.DidChangeTextDocumentParams) -> None:
        workspace, _ = ls.adapters()
        if workspace.on_did_change(params.text_document.uri) is not None:
            ls.auto_repair.on_person_edit(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ReinServer, params: lsp.DidSaveTextDocumentParams) -> None:
        workspace, _ = ls.adapters()
        if workspace.own_save(params.text_document.uri):
            return  # Rein saved its own edit: not the person's save
        ls.auto_repair.on_save(params.text_document.uri)

    @server.feature("rein/diagnosticsChanged")
    def diagnostics_changed(ls: ReinServer, params: Any) -> None:
        from rein.lsp.params import DiagnosticsChangedParams, parse

        try:
            parsed = parse(DiagnosticsChangedParams, params, "rein/diagnosticsChanged")
        except JsonRpcInvalidParams as exc:
            log.warning("%s", exc)
            return
        ls.on_diagnostics_changed(parsed.uris, parsed.versions)

    # ----------------------------------------------------- custom requests

    @server.feature("rein/prompt")
    async def prompt(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import code_actions
        from rein.lsp.params import PromptParams, parse
        from rein.session import SessionBusyError, result_json

        parsed = parse(PromptParams, params, "rein/prompt")
        # Everything that can reject the request comes before a session is
        # made: a rejected prompt leaves nothing behind.
        text = code_actions.with_context(parsed.text, parsed.context)
        text = await _attached(ls, text, parsed.attachments)
        await ls.open_store()
        if parsed.session_id is not None:
            found = await ls.load_session(parsed.session_id)
            if found is None:
                raise JsonRpcInvalidParams(
                    f"rein/prompt: invalid params: sessionId: no session {_shown(parsed.session_id)}"
                )
            session = found
        else:
            session = ls.new_session(mode=parsed.mode, title=parsed.text)
        if session.busy:
            raise JsonRpcInvalidRequest(
                f"rein/prompt: session {session.id} is already running a task; use "
                "rein/steer to redirect it or rein/followUp to queue this message"
            )
        token = parsed.work_done_token
        unsubscribe = None
        if token is not None:
            ls.work_done_progress.begin(
                token, lsp.WorkDoneProgressBegin(title="Rein", message="starting", cancellable=True)
            )
            unsubscribe = session.agent.subscribe(_progress_listener(ls, token))
        try:
            result = await ls.run_prompt(session, text)
        except SessionBusyError as exc:
            raise JsonRpcInvalidRequest(f"rein/prompt: {exc}") from exc
        finally:
            if unsubscribe is not None and token is not None:
                unsubscribe()
                ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))
                # pygls keeps every token it saw begin; this work is over.
                ls.work_done_progress.tokens.pop(token, None)
        return result_json(session.id, result, session.last_changes, session.last_reviews)

    @server.feature("rein/steer")
    def steer(ls: ReinServer, params: Any) -> dict[str, Any]:
        return _queue(ls, params, "rein/steer")

    @server.feature("rein/followUp")
    def follow_up(ls: ReinServer, params: Any) -> dict[str, Any]:
        return _queue(ls, params, "rein/followUp")

    @server.feature("rein/abort")
    def abort(ls: ReinServer, params: Any) -> dict[str, Any]:
        from rein.lsp.params import AbortParams, parse

        parsed = parse(AbortParams, params, "rein/abort")
        session = _session(ls, parsed.session_id, "rein/abort")
        return {"aborted": session is not None and session.abort("aborted by the user")}

    @server.feature("rein/sessions")
    async def sessions(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp.params import SessionsParams, parse

        parse(SessionsParams, params, "rein/sessions")
        return {"sessions": await ls.manager.summaries()}

    @server.feature("rein/session")
    async def session(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp.params import SessionParams, parse
        from rein.session.manager import summary

        parsed = parse(SessionParams, params, "rein/session")
        found = await ls.load_session(parsed.session_id)
        if found is None:
            raise JsonRpcInvalidParams(
                f"rein/session: invalid params: sessionId: no session {_shown(parsed.session_id)}"
            )
        return {
            **summary(found),
            "messages": [m.model_dump(mode="json") for m in found.agent.messages],
        }

    @server.feature("rein/review")
    async def review(ls: ReinServer, params: Any) -> dict[str, Any]:
        """The session's changes under review, per run, file and hunk."""
        from rein.lsp.params import ReviewParams, parse
        from rein.session.reviews import review_json

        parsed = parse(ReviewParams, params, "rein/review")
        session = await _reviewed_session(ls, parsed.session_id, "rein/review")
        assert session.reviewer is not None
        async with _review_errors("rein/review"):
            return review_json(await session.reviewer.runs(parsed.run_id))

    @server.feature("rein/reviewDecide")
    async def review_decide(ls: ReinServer, params: Any) -> dict[str, Any]:
        """Keep or undo a run's changes: all, one file, or one hunk."""
        from rein.lsp.params import ReviewDecideParams, parse
        from rein.session.reviews import decide_in_session, decide_json

        parsed = parse(ReviewDecideParams, params, "rein/reviewDecide")
        session = await _reviewed_session(ls, parsed.session_id, "rein/reviewDecide")
        async with _review_errors("rein/reviewDecide"):
            result = await decide_in_session(
                session,
                parsed.run_id,
                parsed.decision,
                parsed.path,
                parsed.hunk,
                in_use=ls.manager.in_use(session.id),
            )
        return decide_json(result)

    @server.feature("rein/checkpoints")
    async def checkpoints(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import checkpoints

        return await checkpoints.checkpoints(ls, params)

    @server.feature("rein/restore")
    async def restore(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import checkpoints

        return await checkpoints.restore(ls, params)

    @server.feature("rein/checkpointContent")
    async def checkpoint_content(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import checkpoints

        return await checkpoints.content(ls, params)

    @server.feature("rein/serverState")
    def server_state(ls: ReinServer, params: Any) -> dict[str, Any]:
        from rein.lsp.params import SessionsParams, parse

        parse(SessionsParams, params, "rein/serverState")
        return ls.state()

    @server.feature("rein/mcpServers")
    def mcp_servers(ls: ReinServer, params: Any) -> dict[str, Any]:
        from rein.lsp.params import McpServersParams, parse

        parse(McpServersParams, params, "rein/mcpServers")
        return ls.mcp.snapshot()

    @server.feature("rein/preview")
    async def preview(ls: ReinServer, params: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp.params import PreviewParams, parse

        parsed = parse(PreviewParams, params, "rein/preview")
        return await ls.preview.handle(parsed.action)

    # ------------------------------------------------------- code actions

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite]
        ),
    )
    def code_action(ls: ReinServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        from rein.lsp import code_actions

        return code_actions.actions_for(params)

    @server.command(FIX)
    async def fix(ls: ReinServer, *args: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import code_actions

        return code_actions.start(ls, "fix", args)

    @server.command(EXPLAIN)
    async def explain(ls: ReinServer, *args: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import code_actions

        return code_actions.start(ls, "explain", args)

    @server.command(ASK)
    async def ask(ls: ReinServer, *args: Any) -> dict[str, Any]:
        await ls.ready()
        from rein.lsp import code_actions

        return code_actions.start(ls, "ask", args)

    @server.command(ABORT)
    async def abort_command(ls: ReinServer, *args: Any) -> dict[str, Any]:
        target = args[0] if args else None
        session_id = target.get("sessionId") if isinstance(target, dict) else target
        aborted = [
            s.id
            for s in ls.sessions.values()
            if (session_id in (None, s.id)) and s.abort("aborted by the user")
        ]
        return {"aborted": aborted}

    @server.command("rein.preview.start")
    async def preview_start(ls: ReinServer, *args: Any) -> dict[str, Any]:
        await ls.ready()
        return await ls.preview.handle("start")

    @server.command("rein.preview.stop")
    async def preview_stop(ls: ReinServer, *args: Any) -> dict[str, Any]:
        await ls.ready()
        return await ls.preview.handle("stop")

    @server.command("rein.preview.restart")
    async def preview_restart(ls: ReinServer, *args: Any) -> dict[str, Any]:
        await ls.ready()
        return await ls.preview.handle("restart")

    return server


async def _reviewed_session(ls: ReinServer, session_id: str, method: str) -> Session:
    """The session, with its reviewer; InvalidParams for an unknown
    session, RequestFailed when it keeps no checkpoints."""
    await ls.ready()
    await ls.open_store()
    session = await ls.load_session(session_id)
    if session is None:
        raise JsonRpcInvalidParams(
            f"{method}: invalid params: sessionId: no session {_shown(session_id)}"
        )
    if session.reviewer is None:
        raise RequestFailed(
            f"{method}: session {session.id} keeps no checkpoints (checkpoints.enabled is "
            "false), so it has no changes to review"
        )
    return session


@asynccontextmanager
async def _review_errors(method: str) -> AsyncIterator[None]:
    """A review request that cannot be done is RequestFailed, saying why."""
    from rein.harness.errors import ReviewError, StoreError
    from rein.session import SessionBusyError

    try:
        yield
    except (ReviewError, StoreError, SessionBusyError) as exc:
        raise RequestFailed(f"{method}: {exc}") from exc


async def _attached(ls: ReinServer, text: str, attachments: Sequence[Attachment]) -> str:
    """The prompt text with its attachments' tagged blocks (rein.lsp.attachments)."""
    if not attachments:
        return text
    from rein.lsp.attachments import with_attachments

    workspace, _ = ls.adapters()
    return await with_attachments(
        text,
        attachments,
        workspace,
        workspace.relative,
        str(ls.root),
        ls.config.approval.deny_globs,
    )


def _queue(ls: ReinServer, params: Any, method: str) -> dict[str, Any]:
    """rein/steer and rein/followUp: queue the text on the active run."""
    from rein.lsp.params import FollowUpParams, SteerParams, parse

    parsed = parse(SteerParams if method == "rein/steer" else FollowUpParams, params, method)
    session = _session(ls, parsed.session_id, method)
    if session is None or not session.busy:
        return {"queued": False, "reason": "no run is active; send rein/prompt instead"}
    if method == "rein/steer":
        session.agent.steer(parsed.text)
    else:
        session.agent.follow_up(parsed.text)
    return {"queued": True}


async def _pull_configuration(ls: ReinServer) -> bool:
    """Ask the client for the ``rein`` section and apply it; False when the
    client cannot be asked."""
    caps = ls.client_capabilities
    if caps.workspace is None or not caps.workspace.configuration:
        return False
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="rein")])
            ),
            10,
        )
    except Exception as exc:
        log.warning("workspace/configuration failed: %s", exc)
        return False
    section = result[0] if result else None
    ls.apply_configuration(section or {}, "settings")
    return True
