"""Approval rules (:mod:`rein.lsp.approval_registry`): ``rein/approvals`` lists the
rules the person kept, ``rein/approvals/revoke`` drops one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

if TYPE_CHECKING:
    from rein.lsp.approval_registry import ApprovalsServer

__all__ = ["approvals", "revoke"]


async def approvals(server: ApprovalsServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import ApprovalsParams, parse

    parsed = parse(ApprovalsParams, params, "rein/approvals")
    await server.open_store()
    return {"rules": await server.approvals.rules(parsed.session_id)}


async def revoke(server: ApprovalsServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import RevokeApprovalParams, parse

    parsed = parse(RevokeApprovalParams, params, "rein/approvals/revoke")
    await server.open_store()
    if not await server.approvals.revoke(parsed.id):
        raise JsonRpcInvalidParams(
            f"rein/approvals/revoke: invalid params: id: no rule {parsed.id[:80]!r}"
        )
    return {"revoked": True}
