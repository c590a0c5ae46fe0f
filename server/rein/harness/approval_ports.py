"""The approval ports: what a tool call asks the person (:class:`ApprovalRequest`),
the answers (:class:`ApprovalAnswer`, the rules one may keep:
:class:`ApprovalRule`), who answers (:class:`Approver`), the rules a session
keeps (:class:`ApprovalRuleBook`), and the person's channel for ``ask_user``
(:class:`UserChannel`). :mod:`rein.harness.ports` lists them with the other
ports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = [
    "ApprovalAnswer",
    "ApprovalClass",
    "ApprovalRequest",
    "ApprovalRule",
    "ApprovalRuleBook",
    "ApprovalRuleKind",
    "Approver",
    "RememberScope",
    "UserChannel",
]

ApprovalClass = Literal["read", "write", "command", "mcp"]


#: What a sticky approval rule allows: a command line's commands, file
#: writes by path glob, MCP tools (``server`` or ``server/tool``).
ApprovalRuleKind = Literal["command", "write", "mcp"]
#: How long a remembered approval lasts: the session, or the workspace
#: (stored).
RememberScope = Literal["session", "workspace"]


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """A rule the person may keep instead of answering again
    (``rein.tools.approval_rules`` matches them)."""

    kind: ApprovalRuleKind
    pattern: str


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    tool: str
    approval_class: ApprovalClass
    title: str
    detail: str
    #: What the call acts on, for rules that remember an answer ("always
    #: allow"): the path of a file tool, the whole command line of a
    #: command; None: the tool as a whole.
    subject: str | None = None
    #: The id of the tool call that asks (None outside a tool call).
    tool_call_id: str | None = None
    #: The rules "always allow" would keep (empty: none can be kept): for
    #: a command line, each of its commands not yet allowed, exactly as
    #: written.
    rules: tuple[ApprovalRule, ...] = ()
    #: The wider choice the person may make instead ("commands starting with
    #: `git log`": ``git log *``); empty when none is wider than ``rules``.
    prefix_rules: tuple[ApprovalRule, ...] = ()


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """An approval with more than yes or no: keep the request's rules for
    the session or the workspace."""

    approved: bool
    remember: RememberScope | None = None
    #: Keep the request's ``prefix_rules`` (the person chose the wider
    #: rule) instead of its ``rules``.
    prefix: bool = False


class Approver(Protocol):
    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer: ...


class ApprovalRuleBook(Protocol):
    """The approval rules a session keeps (``rein.tools.approval_rules``)."""

    async def uncovered(
        self, kind: ApprovalRuleKind, subject: str
    ) -> tuple[ApprovalRule, ...] | None:
        """None when the rules allow ``subject`` (a command line, a
        workspace-relative path, ``server/tool``); else the rules that
        would allow it (empty when no rule can)."""
        ...

    async def remember(self, scope: RememberScope, rules: Sequence[ApprovalRule]) -> None: ...


class UserChannel(Protocol):
    async def ask(self, question: str) -> str | None:
        """The person's answer, or None when there is none (no client support,
        dismissed)."""
        ...
