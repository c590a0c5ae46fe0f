"""Approvals through the ACP client: ``session/request_permission``.

A call whose policy is "ask" (``rein.approval``) becomes a permission
request naming the tool call (its id, a title, the kind of tool, the detail
Rein shows elsewhere) with the options "Allow" (allow_once), "Reject"
(reject_once) and "Always reject" (reject_always), and, when the session's
approval rules (:class:`~rein.tools.approval_rules.RuleBook`, the same rule
book ``rein serve`` uses) could keep the answer, "Always allow" naming what
it keeps (allow_always: each command exactly as written, the folder of a
write, the MCP tool) and, when there is a wider choice, "Always allow
commands starting with ..." (a second allow_always, ``allow_always_prefix``:
``git log *``). An "always allow" answer keeps those rules for the session;
the approval check asks the rule book before asking again. "Always reject"
refuses the same tool on the same subject (the whole command line, the
path, the MCP tool; else the tool) for the rest of the session, without
asking. Another session asks again.

A cancelled request (the client cancels pending requests when the prompt
is cancelled) refuses the call; so does no answer within the bound
(``approval.timeoutMs``) and an error answer: those say why.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate, ToolKind

from rein.acp._client_calls import ClientCallError, ask_client
from rein.acp.context import ClientLink
from rein.harness.errors import ToolError
from rein.harness.ports import ApprovalAnswer, ApprovalClass, ApprovalRequest, ApprovalRule

__all__ = ["ALLOW", "ALWAYS", "ALWAYS_PREFIX", "REJECT", "REJECT_ALWAYS", "PermissionApprover"]

log = logging.getLogger(__name__)

#: The option ids; an id's kind is the ACP option kind.
ALLOW = "allow_once"
ALWAYS = "allow_always"
ALWAYS_PREFIX = "allow_always_prefix"
REJECT = "reject_once"
REJECT_ALWAYS = "reject_always"

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


def _shown(rules: Sequence[ApprovalRule]) -> str:
    return ", ".join(f"`{r.pattern}`" for r in rules)


def _always_name(rules: Sequence[ApprovalRule]) -> str:
    """What "Always allow" keeps, in its name."""
    if all(r.kind == "command" for r in rules):
        what = "this exact command" if len(rules) == 1 else "these exact commands"
        return f"Always allow {what}: {_shown(rules)}"
    if all(r.kind == "write" for r in rules):
        return f"Always allow writes to {_shown(rules)}"
    return f"Always allow {_shown(rules)}"


def _prefix_name(rules: Sequence[ApprovalRule]) -> str:
    starts = ", ".join(
        f"`{r.pattern.removesuffix(' *')}`" if r.pattern.endswith(" *") else f"`{r.pattern}`"
        for r in rules
    )
    return f"Always allow commands starting with {starts}"


def options_for(request: ApprovalRequest) -> list[PermissionOption]:
    """The options of ``request``: "always allow" only when rules can keep it."""
    options = [PermissionOption(option_id=ALLOW, name="Allow", kind="allow_once")]
    if request.rules:
        options.append(
            PermissionOption(
                option_id=ALWAYS, name=_always_name(request.rules), kind="allow_always"
            )
        )
    if request.rules and request.prefix_rules:
        options.append(
            PermissionOption(
                option_id=ALWAYS_PREFIX,
                name=_prefix_name(request.prefix_rules),
                kind="allow_always",
            )
        )
    options += [
        PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
        PermissionOption(option_id=REJECT_ALWAYS, name="Always reject", kind="reject_always"),
    ]
    return options


class PermissionApprover:
    """The harness ``Approver`` of one ACP session. ``timeout_s`` bounds the
    wait for the person's answer (``approval.timeoutMs``)."""

    def __init__(self, link: ClientLink, session_id: str, *, timeout_s: float) -> None:
        self.link = link
        self.session_id = session_id
        self.timeout_s = timeout_s
        #: (tool, subject) the person answered "always reject".
        self.rejected: set[tuple[str, str]] = set()

    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        key = (request.tool, request.subject or request.tool)
        if key in self.rejected:
            return False
        tool_call = ToolCallUpdate(
            tool_call_id=request.tool_call_id or f"rein-approval-{uuid.uuid4().hex[:12]}",
            title=request.title,
            kind=_KIND_OF_TOOL.get(request.tool, _KIND_OF_CLASS[request.approval_class]),
            status="pending",
            raw_input=_raw_input(request),
        )
        options = options_for(request)
        try:
            answer = await ask_client(
                "session/request_permission",
                lambda: self.link.conn.request_permission(
                    session_id=self.session_id, tool_call=tool_call, options=options
                ),
                bound_s=self.timeout_s,
            )
        except ClientCallError as exc:
            bound = " (approval.timeoutMs)" if exc.timed_out else ""
            raise ToolError(f"{exc}{bound}, so the call is refused") from exc
        outcome = answer.outcome
        if not isinstance(outcome, AllowedOutcome):
            return False  # cancelled: the prompt was cancelled
        chosen = outcome.option_id
        if chosen not in {option.option_id for option in options}:
            raise ToolError(
                f"the editor chose an option Rein did not offer ({chosen!r}), "
                "so the call is refused"
            )
        if chosen == ALWAYS:
            return ApprovalAnswer(approved=True, remember="session")
        if chosen == ALWAYS_PREFIX:
            return ApprovalAnswer(approved=True, remember="session", prefix=True)
        if chosen == REJECT_ALWAYS:
            self.rejected.add(key)
        return chosen == ALLOW


def _raw_input(request: ApprovalRequest) -> dict[str, Any]:
    raw: dict[str, Any] = {"tool": request.tool, "detail": request.detail}
    if request.subject is not None:
        raw["subject"] = request.subject
    return raw
