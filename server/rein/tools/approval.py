"""Approvals: a policy per tool class, the person's answer through the
Approver port, and denials the model can read.

The policy of a class ("read", "write", "command") is "allow", "ask" or
"deny" (writes also "review": applied like "allow", and the person keeps
or undoes them after the run, ``rein.checkpoints.review``), from the session's :class:`~rein.tools.settings.ApprovalSettings`
(``rein.approval``; validated with the configuration, so a tool never sees
an invalid one). "ask" goes through ``ctx.env.approver``; without one the
call is denied. A denial is a :class:`ToolResult` with ``is_error=True``
saying what was denied and why, so the model can choose another way.

Before asking, the session's approval rules (``ctx.env.approval_rules``,
:mod:`rein.tools.approval_rules`) may allow the call's ``subject``; the
request offers the rules that would (each command exactly as written) and,
where there is one, the wider choice (``git log *``: a known program and
its subcommand with more words, :mod:`rein.tools._command_prefixes`); an answer that says to remember them
(``ApprovalAnswer.remember``, ``prefix`` for the wider choice) keeps them
for the session or the workspace.
"""

from __future__ import annotations

import logging

from rein.harness.errors import ToolError
from rein.harness.ports import (
    ApprovalAnswer,
    ApprovalClass,
    ApprovalRequest,
    ApprovalRule,
    ApprovalRuleKind,
)
from rein.harness.tools import ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools.approval_rules import widen
from rein.tools.settings import settings_of

__all__ = ["check_approval"]

log = logging.getLogger(__name__)

_WHAT = {
    "read": "reading files",
    "write": "changing files",
    "command": "running commands",
    "mcp": "calling MCP tools",
}


def _subject_of(subject: tuple[ApprovalRuleKind, str] | None) -> str | None:
    """What a request is about, for answers kept per subject (an ACP
    client's "always reject"): a command line, a path, ``server/tool``."""
    return None if subject is None else subject[1]


def _git_internals(
    ctx: ToolContext, subject: tuple[ApprovalRuleKind, str] | None, writes: tuple[str, ...]
) -> tuple[str, str] | None:
    """The path of a write into git's internals and why, or None."""
    paths = [*writes, *([subject[1]] if subject is not None and subject[0] == "write" else [])]
    if not paths:
        return None
    _, sandbox = sandbox_of(ctx)
    for path in paths:
        why = sandbox.git_internals(path)
        if why is not None:
            return path, why
    return None


def _secret_write(
    ctx: ToolContext,
    approval_class: ApprovalClass,
    subject: tuple[ApprovalRuleKind, str] | None,
    about: str | None,
    writes: tuple[str, ...],
) -> tuple[str, str] | None:
    """The path of a write to a secret file (``tools.secretFiles``) and the
    glob that names it, or None: such a write asks every time."""
    if approval_class != "write":
        return None
    paths = [*writes, *(p for p in (about,) if p), *([subject[1]] if subject else [])]
    if not paths:
        return None
    _, sandbox = sandbox_of(ctx)
    for path in paths:
        glob = sandbox.secret_by(path)
        if glob is not None:
            return path, glob
    return None


def _denied(text: str, reason: str) -> ToolResult:
    return ToolResult(text, is_error=True, details={"denied": True, "reason": reason})


async def check_approval(
    ctx: ToolContext,
    approval_class: ApprovalClass,
    *,
    title: str,
    detail: str,
    action: str,
    force_ask: bool = False,
    why_ask: str = "",
    mcp: tuple[str, str] | None = None,
    subject: tuple[ApprovalRuleKind, str] | None = None,
    about: str | None = None,
    writes: tuple[str, ...] = (),
    exact_only: bool = False,
) -> ToolResult | None:
    """``None`` when the call may go ahead, else the denial to return.

    ``action`` completes "the person declined to ..." (e.g. "run `make`").
    ``force_ask`` asks even when the policy allows (a protected file), unless
    the policy denies; ``why_ask`` says why in the denial texts. ``mcp``
    (server, tool) of an MCP call: an ``approval.mcpAllow`` rule naming it
    allows the call without asking (unless the policy denies).
    ``subject`` (kind, value): what an approval rule would allow (the
    command line, the workspace-relative path, ``server/tool``). ``about``:
    what the request names as its subject when ``subject`` does not
    (:attr:`ApprovalRequest.subject`: a read's path, a move's source).
    ``writes``: the workspace-relative paths a write changes besides a
    ``write`` subject (a move's target). A write into git's internals
    (:meth:`~rein.tools.sandbox.Sandbox.git_internals`) asks like a
    protected file, every time: no rule can allow it; so does a write to a
    secret file (``tools.secretFiles``), a move's source included. ``exact_only``: no
    rule the person kept skips the question, and none is offered to keep
    (a kept rule would never be consulted: the question comes every time).
    """
    permit = ctx.permit
    if permit is not None and permit.decision == "ask" and not force_ask:
        # A hook asks the person about this call.
        force_ask, why_ask = True, permit.reason or "a hook asks about this call"
        detail = f"Asked because {why_ask}.\n\n{detail}"
        # The person is asked: neither a kept rule nor approval.mcpAllow answers for them.
        about = about or (subject[1] if subject is not None else None)
        subject, mcp = None, None
    internals = _git_internals(ctx, subject, writes)
    if internals is not None:
        path, why = internals
        force_ask, subject = True, None
        why_ask = why_ask or f"{path}: {why}"
        about = about or path
        detail = f"Asked because {path}: {why}.\n\n{detail}"
    secret = _secret_write(ctx, approval_class, subject, about, writes)
    if secret is not None:
        path, glob = secret
        force_ask, subject, exact_only = True, None, True
        why_ask = why_ask or f"{path} is a secret file (tools.secretFiles: {glob!r})"
        about = about or path
        detail = f"Asked because {path} is a secret file (tools.secretFiles).\n\n{detail}"
    approval = settings_of(ctx).approval
    policy = approval.policy(approval_class)
    setting = f"approval.{approval_class}"
    if policy == "deny":
        return _denied(
            f"Denied: {_WHAT[approval_class]} is switched off in this session "
            f'({setting} is "deny"), so you cannot {action}. Find another way, or tell '
            "the person what you need and why.",
            "policy",
        )
    if policy in ("allow", "review") and not force_ask:
        return None
    if permit is not None and permit.decision == "allow" and not force_ask:
        return None  # a trusted hook allowed it: not asked (a protected file still is)
    if mcp is not None and approval.mcp_allowed(*mcp):
        return None
    rules = ctx.env.approval_rules
    offered: tuple[ApprovalRule, ...] = ()
    if exact_only:
        pass  # asked every time: nothing kept answers, so nothing is offered to keep
    elif rules is not None and subject is not None:
        uncovered = await rules.uncovered(*subject)
        if uncovered is None:
            return None  # a rule the person kept allows it
        offered = uncovered
    because = why_ask or f'{setting} is "{policy}"'
    approver = ctx.env.approver
    if approver is None:
        return _denied(
            f"Denied: to {action} the person's approval is needed ({because}), and no one "
            "can approve in this session. Find another way, or tell the person what you "
            "need and why.",
            "no_approver",
        )
    request = ApprovalRequest(
        tool=ctx.name,
        approval_class=approval_class,
        title=title,
        detail=detail,
        subject=about or _subject_of(subject),
        tool_call_id=ctx.tool_call_id,
        rules=offered,
        prefix_rules=() if exact_only else widen(offered),
    )
    try:
        answer = await approver.confirm(request)
    except ToolError as exc:
        return _denied(
            f"Denied: {exc}. Find another way, or tell the person what you need.",
            "approver_unavailable",
        )
    except Exception as exc:
        log.exception("approver failed for %s", ctx.name)
        return _denied(
            f"Denied: asking the person for approval to {action} failed ({exc}). "
            "Find another way, or tell the person what you need.",
            "approver_error",
        )
    approved = answer.approved if isinstance(answer, ApprovalAnswer) else bool(answer)
    if approved:
        if isinstance(answer, ApprovalAnswer) and answer.remember and offered:
            assert rules is not None
            kept = request.prefix_rules if answer.prefix and request.prefix_rules else offered
            try:
                await rules.remember(answer.remember, kept)
            except Exception:
                # The call was approved: it goes ahead; the rule is not kept.
                log.exception("could not keep the approval rules %s", kept)
        return None
    return _denied(
        f"Denied: the person declined to let you {action}. Do not repeat the same call; "
        "try another approach, or explain in your answer what you wanted to do and why.",
        "declined",
    )
