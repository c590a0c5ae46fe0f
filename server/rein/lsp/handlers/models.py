"""The model picker (:mod:`rein.lsp.model_choices`): ``rein/models`` lists the
models a person can choose, ``rein/setModel`` changes a session's model,
or every session's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

if TYPE_CHECKING:
    from rein.lsp.model_choices import ModelsHandlerServer

__all__ = ["models", "set_model"]


async def models(server: ModelsHandlerServer, params: Any) -> dict[str, Any]:
    from rein.lsp._lm_params import ModelsParams
    from rein.lsp.model_choices import editor_models, entry
    from rein.lsp.params import parse

    parsed = parse(ModelsParams, params, "rein/models")
    await server.ready()
    if parsed.session_id is not None and (
        parsed.session_id not in server.sessions
        and await server.load_session(parsed.session_id) is None
    ):
        # Not the model of a new session, as if the id had been left out.
        raise JsonRpcInvalidParams(
            f"rein/models: invalid params: sessionId: no session {parsed.session_id!r}"
        )
    configured = server.config.model
    current = server.model_choices.current(parsed.session_id)
    name = configured.model or "(the provider's default)"
    listed = [entry(configured.provider, configured.model, name, "config")]
    found, problem = await editor_models(server)
    # The configured vscode-lm model is listed once, as configured, with
    # the name the editor gives it.
    same = configured.provider == "vscode-lm"
    for item in found:
        if same and item["model"] == configured.model:
            listed[0]["label"] = item["label"]
        else:
            listed.append(item)
    result: dict[str, Any] = {
        "current": {"provider": current.provider, "model": current.model},
        "models": listed,
    }
    if problem is not None:
        result["vscodeLmError"] = problem
    return result


async def set_model(server: ModelsHandlerServer, params: Any) -> dict[str, Any]:
    from rein.harness.errors import ConfigError
    from rein.lsp._lm_params import Choice, SetModelParams
    from rein.lsp.params import parse

    parsed = parse(SetModelParams, params, "rein/setModel")
    await server.ready()
    choice = Choice(parsed.provider, parsed.model)
    if parsed.session_id is not None:
        # One in the store is loaded (the server restarted, or it was evicted).
        session = server.sessions.get(parsed.session_id) or await server.load_session(
            parsed.session_id
        )
        if session is None:
            raise JsonRpcInvalidParams(
                f"rein/setModel: invalid params: sessionId: no session {parsed.session_id!r}"
            )
        sessions, everywhere = [session], False
    elif parsed.new_sessions is False:
        raise JsonRpcInvalidParams(
            "rein/setModel: invalid params: newSessions: false needs a sessionId "
            "(without one the choice is for every session and the new ones)"
        )
    else:
        sessions, everywhere = list(server.sessions.values()), True
    try:
        server.model_choices.choose(choice, sessions, everywhere, parsed.new_sessions is True)
    except ConfigError as exc:
        # The chosen model is the request's params: they are what is invalid.
        raise JsonRpcInvalidParams(f"rein/setModel: invalid params: {exc}") from exc
    return {"ok": True}
