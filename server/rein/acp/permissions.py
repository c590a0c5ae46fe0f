"""Approvals through the ACP client: ``session/request_permission``.

A call whose policy is "ask" (``rein.approval``) becomes a permission
request naming the tool call (its id, a title, the kind of tool, the detail
Rein shows elsewhere) with four options: "Allow" (allow_once), "Always
allow" (allow_always), "Reject" (reject_once) and "Always reject"
(reject_always). An "always" answer becomes a rule of the session, kept in
memory for as long as the approver (one per session): later requests for
the same tool and subject (the program a command runs, the path a file tool
acts on; else the tool as a whole) are answered by the rule without asking.
Another session asks again.

A cancelled request (the client cancels pending requests when the prompt
is cancelled) refuses the call; so does no answer within the bound
(``approval.timeoutMs``) and an error answer: those say why.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate, ToolKind

from rein.acp._client_calls import ClientCallError, ask_client
from rein.acp.context import ClientLink
from rein.harness.errors import ToolError
from rein.harness.ports import ApprovalClass, ApprovalRequest

__all__ = ["PERMISSION_OPTIONS", "PermissionApprover"]

log = logging.getLogger(__name__)

#: The options every request offers; the option id is its kind.
PERMISSION_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
)
_ANSWERS = {option.option_id: option.kind for option in PERMISSION_OPTIONS}

_KIND_OF_TOOL: dict[str, ToolKind] = {
    "edit_file": "edit",
    "write_file": "edit",
    "delete_file": "delete",
    "move_file": "move",
    "run_command": "execute",
    "read_file": "read",
}
_KIND_OF_CLASS: dict[ApprovalClass, ToolKind] = {
    "read": "read",
    "write": "edit",
    "command": "execute",
    "mcp": "other",
}


class PermissionApprover:
    """The harness ``Approver`` of one ACP session. ``timeout_s`` bounds the
    wait for the person's answer (``approval.timeoutMs``)."""

    def __init__(self, link: ClientLink, session_id: str, *, timeout_s: float) -> None:
        self.link = link
        self.session_id = session_id
        self.timeout_s = timeout_s
        #: (tool, subject) -> allowed, from the "always" answers.
        self.rules: dict[tuple[str, str], bool] = {}

    async def confirm(self, request: ApprovalRequest) -> bool:
        key = (request.tool, request.subject or request.tool)
        if key in self.rules:
            return self.rules[key]
        tool_call = ToolCallUpdate(
            tool_call_id=request.tool_call_id or f"rein-approval-{uuid.uuid4().hex[:12]}",
            title=request.title,
            kind=_KIND_OF_TOOL.get(request.tool, _KIND_OF_CLASS[request.approval_class]),
            status="pending",
            raw_input=_raw_input(request),
        )
        try:
            answer = await ask_client(
                "session/request_permission",
                lambda: self.link.conn.request_permission(
                    session_id=self.session_id,
                    tool_call=tool_call,
                    options=list(PERMISSION_OPTIONS),
                ),
                bound_s=self.timeout_s,
            )
        except ClientCallError as exc:
            bound = " (approval.timeoutMs)" if exc.timed_out else ""
            raise ToolError(f"{exc}{bound}, so the call is refused") from exc
        outcome = answer.outcome
        if not isinstance(outcome, AllowedOutcome):
            return False  # cancelled: the prompt was cancelled
        kind = _ANSWERS.get(outcome.option_id)
        if kind is None:
            raise ToolError(
                f"the editor chose an option Rein did not offer ({outcome.option_id!r}), "
                "so the call is refused"
            )
        allowed = kind.startswith("allow")
        if kind.endswith("always"):
            self.rules[key] = allowed
        return allowed


def _raw_input(request: ApprovalRequest) -> dict[str, Any]:
    raw: dict[str, Any] = {"tool": request.tool, "detail": request.detail}
    if request.subject is not None:
        raw["subject"] = request.subject
    return raw
