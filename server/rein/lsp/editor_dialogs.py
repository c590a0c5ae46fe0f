"""The editor asks the person: :class:`EditorApprover` backs ``rein/confirm``
and :class:`EditorUserChannel` ``rein/askUser``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from rein.harness.errors import ToolError
from rein.harness.ports import ApprovalAnswer, ApprovalRequest
from rein.lsp.channel import method_not_found
from rein.lsp.client_timeout import ClientTimeout

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = ["EditorApprover", "EditorUserChannel"]

log = logging.getLogger(__name__)

NO_CONFIRM = (
    "this editor cannot ask the person (it does not support rein/confirm), so calls "
    "that need approval are denied"
)


class EditorApprover:
    """``rein/confirm``; a client without it makes "ask" fall back to deny,
    and so does no answer within ``approval.timeoutMs`` (the model reads why)."""

    def __init__(self, client: ClientChannel, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        if not self.client.supports("rein/confirm"):
            raise ToolError(NO_CONFIRM)
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "tool": request.tool,
            "title": request.title,
            "detail": request.detail,
        }
        if request.rules:
            # "Always allow" keeps all of them; ``rule`` is the first, shown.
            rules = [{"kind": r.kind, "pattern": r.pattern} for r in request.rules]
            params["rule"] = rules[0]
            params["rules"] = rules
        if request.prefix_rules:
            # The wider choice ("commands starting with ..."): kept instead
            # of ``rules`` when the answer says ``"prefix": true``.
            params["prefixRules"] = [
                {"kind": r.kind, "pattern": r.pattern} for r in request.prefix_rules
            ]
        try:
            result = await self.client.request("rein/confirm", params)
        except ClientTimeout as exc:
            raise ToolError(
                f"nobody answered the approval request within {exc.seconds:g} s "
                "(approval.timeoutMs), so the call is refused"
            ) from None
        except JsonRpcException as exc:
            if method_not_found(exc):
                raise ToolError(NO_CONFIRM) from None
            log.info("rein/confirm failed: %s", exc)
            return False
        approved = bool(isinstance(result, dict) and result.get("approved"))
        remember = result.get("remember") if isinstance(result, dict) else None
        if remember is None or not approved:
            return approved
        if remember not in ("session", "workspace"):
            log.warning(
                'rein/confirm: remember must be "session" or "workspace", not %r; '
                "the call is approved this once",
                remember,
            )
            return approved
        prefix = result.get("prefix") is True and bool(request.prefix_rules)
        return ApprovalAnswer(approved=True, remember=remember, prefix=prefix)


class EditorUserChannel:
    """``rein/askUser``; None when the client has no answer or no support,
    or none within ``approval.timeoutMs``."""

    def __init__(self, client: ClientChannel, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def ask(self, question: str) -> str | None:
        if not self.client.supports("rein/askUser"):
            return None
        try:
            result = await self.client.request(
                "rein/askUser", {"sessionId": self.session_id, "question": question}
            )
        except ClientTimeout as exc:
            log.warning("%s: the question stays unanswered", exc)
            return None
        except JsonRpcException:
            return None
        answer = result.get("answer") if isinstance(result, dict) else None
        return answer if isinstance(answer, str) and answer.strip() else None
