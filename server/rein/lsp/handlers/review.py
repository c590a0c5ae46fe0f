"""The review of a session's changes: ``rein/review`` (per run, file and
hunk) and ``rein/reviewDecide`` (keep or undo them). Rein's errors (an
unknown run, a path not under review, a busy session, a store that cannot
be used) are RequestFailed (:mod:`rein.lsp.errors`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rein.lsp import errors

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer
    from rein.session import Session

__all__ = ["review", "review_decide"]


async def review(server: ReinServer, params: Any) -> dict[str, Any]:
    """The session's changes under review, per run, file and hunk."""
    from rein.lsp.params import ReviewParams, parse
    from rein.session.reviews import review_json

    parsed = parse(ReviewParams, params, "rein/review")
    session = await _reviewed_session(server, parsed.session_id, "rein/review")
    assert session.reviewer is not None
    return review_json(await session.reviewer.runs(parsed.run_id))


async def review_decide(server: ReinServer, params: Any) -> dict[str, Any]:
    """Keep or undo a run's changes: all, one file, or one hunk."""
    from rein.lsp.params import ReviewDecideParams, parse
    from rein.session.reviews import decide_in_session, decide_json

    parsed = parse(ReviewDecideParams, params, "rein/reviewDecide")
    session = await _reviewed_session(server, parsed.session_id, "rein/reviewDecide")
    result = await decide_in_session(
        session,
        parsed.run_id,
        parsed.decision,
        parsed.path,
        parsed.hunk,
        in_use=server.manager.in_use(session.id),
    )
    return decide_json(result)


async def _reviewed_session(server: ReinServer, session_id: str, method: str) -> Session:
    """The session, with its reviewer; InvalidParams for an unknown
    session, CheckpointsOffError (RequestFailed) when it keeps none."""
    await server.ready()
    await server.open_store()
    session = await server.load_session(session_id)
    if session is None:
        raise errors.no_session(method, session_id)
    if session.reviewer is None:
        from rein.harness.errors import CheckpointsOffError

        raise CheckpointsOffError(
            f"session {session.id} keeps no checkpoints (checkpoints.enabled is "
            "false), so it has no changes to review"
        )
    return session
