"""Runs: ``rein/prompt`` (with its work-done progress), ``rein/steer``,
``rein/followUp``, ``rein/abort``, and the commands that start or abort
runs (``rein.fix``, ``rein.explain``, ``rein.ask``: one handler, the kind
as its parameter; ``rein.abort``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.harness.events import Event
    from rein.lsp.params import Attachment
    from rein.lsp.server import ReinServer
    from rein.session import Session
    from rein.session.setup_files import Prompted

__all__ = ["abort", "abort_command", "code_run", "follow_up", "prompt", "steer"]


async def prompt(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp import code_actions
    from rein.lsp.params import PromptParams, parse
    from rein.session import result_json

    parsed = parse(PromptParams, params, "rein/prompt")
    # Everything that can reject the request comes before a session is
    # made: a rejected prompt leaves nothing behind.
    command = _command_prompt(server, parsed.text)
    text = code_actions.with_context(command.text, parsed.context)
    text = await _attached(server, text, parsed.attachments)
    await server.open_store()
    isolated = server.isolated.manager(parsed.session_id) if parsed.session_id else None
    if parsed.session_id is not None:
        found = server.isolated.session(parsed.session_id) or await server.load_session(
            parsed.session_id
        )
        if found is None:
            raise errors.no_session("rein/prompt", parsed.session_id)
        if found.closing:
            raise errors.session_closing("rein/prompt", parsed.session_id)
        session = found
    else:
        session = server.new_session(mode=command.mode(parsed.mode), title=parsed.text)
    session.refuse_if_running()  # before the progress begins (BusyError: InvalidRequest)
    token = parsed.work_done_token
    unsubscribe = None
    if token is not None:
        server.work_done_progress.begin(
            token, lsp.WorkDoneProgressBegin(title="Rein", message="starting", cancellable=True)
        )
        unsubscribe = session.agent.subscribe(_progress_listener(server, token))
    try:
        result = await (
            isolated.run_prompt(session, text) if isolated else server.run_prompt(session, text)
        )
    finally:
        if unsubscribe is not None and token is not None:
            unsubscribe()
            server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="done"))
            # pygls keeps every token it saw begin; this work is over.
            server.work_done_progress.tokens.pop(token, None)
    return result_json(session.id, result, session.last_changes, session.last_reviews)


def _command_prompt(server: ReinServer, text: str, method: str = "rein/prompt") -> Prompted:
    """A ``/name args`` text as its command's prompt (InvalidParams naming
    ``text`` for an unknown command, listing the known ones): the same for
    ``rein/prompt``, ``rein/steer`` and ``rein/followUp``."""
    from rein.bring.commands import CommandError
    from rein.session.setup_files import Prompted, prompted

    if not text.startswith("/"):  # no command: the workspace's files are not read
        return Prompted(text)
    try:
        return prompted(server.config, server.root, text)
    except CommandError as exc:
        raise JsonRpcInvalidParams(f"{method}: invalid params: text: {exc}") from None


async def steer(server: ReinServer, params: Any) -> dict[str, Any]:
    return await _queue(server, params, "rein/steer")


async def follow_up(server: ReinServer, params: Any) -> dict[str, Any]:
    return await _queue(server, params, "rein/followUp")


async def abort(server: ReinServer, params: Any) -> dict[str, Any]:
    from rein.lsp.params import AbortParams, parse

    parsed = parse(AbortParams, params, "rein/abort")
    session = await _session(server, parsed.session_id, "rein/abort")
    return {"aborted": session is not None and session.abort("aborted by the user")}


async def code_run(
    server: ReinServer, args: tuple[Any, ...], kind: Literal["fix", "explain", "ask"]
) -> dict[str, Any]:
    """``rein.fix``, ``rein.explain`` and ``rein.ask``: a run started in the
    background on the code the argument names."""
    await server.ready()
    from rein.lsp import code_actions

    return code_actions.start(server, kind, args)


async def abort_command(server: ReinServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """``rein.abort``: the run of one session (``{sessionId}`` or the id),
    or every run."""
    target = args[0] if args else None
    session_id = target.get("sessionId") if isinstance(target, dict) else target
    aborted = [
        s.id
        for s in server.sessions.values()
        if (session_id in (None, s.id)) and s.abort("aborted by the user")
    ]
    return {"aborted": aborted}


async def _session(server: ReinServer, session_id: str, method: str) -> Session | None:
    """The session in memory; None for one only in the store (evicted, or
    stored before the server restarted: it runs nothing); InvalidParams for
    an unknown one."""
    session = server.sessions.get(session_id) or server.isolated.session(session_id)
    if session is None:
        if server.manager.was_evicted(session_id) or await _stored(server, session_id):
            return None
        raise errors.no_session(method, session_id)
    return session


async def _stored(server: ReinServer, session_id: str) -> bool:
    await server.ready()  # the store is the configured one (storagePath)
    store = await server.manager.open_store()
    return store is not None and await store.get_session(session_id) is not None


async def _queue(server: ReinServer, params: Any, method: str) -> dict[str, Any]:
    """rein/steer and rein/followUp: queue the text on the active run (a
    ``/name args`` text as its command's prompt, as rein/prompt runs it)."""
    from rein.lsp.params import FollowUpParams, SteerParams, parse

    parsed = parse(SteerParams if method == "rein/steer" else FollowUpParams, params, method)
    text = _command_prompt(server, parsed.text, method).text
    session = await _session(server, parsed.session_id, method)
    if session is not None and session.closing:
        raise errors.session_closing(method, parsed.session_id)
    if session is None or not session.busy:
        return {"queued": False, "reason": "no run is active; send rein/prompt instead"}
    if method == "rein/steer":
        session.agent.steer(text)
    else:
        session.agent.follow_up(text)
    return {"queued": True}


def _progress_listener(server: ReinServer, token: str | int) -> Any:
    def listener(event: Event) -> None:
        if event.type == "turn_end":
            from rein.harness.cost.spend import spend_line

            line = spend_line(event.run_usage, event.context, event.run_cost)
            server.work_done_progress.report(
                token, lsp.WorkDoneProgressReport(message=f"turn {event.turn} · {line}")
            )
        elif event.type == "gate_start":
            server.work_done_progress.report(
                token, lsp.WorkDoneProgressReport(message=f"checking: {event.gate}")
            )

    return listener


async def _attached(server: ReinServer, text: str, attachments: Sequence[Attachment]) -> str:
    """The prompt text with its attachments' tagged blocks (rein.lsp.attachments)."""
    if not attachments:
        return text
    from rein.lsp.attachments import with_attachments

    workspace, _ = server.adapters()
    return await with_attachments(
        text,
        attachments,
        workspace,
        workspace.relative,
        str(server.root),
        server.config.approval.deny_globs,
        server.config.tool_settings().secret_files,
    )
