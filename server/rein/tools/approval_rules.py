"""Approvals that stick: rules the person kept with "always allow", for the
session (in memory) or the workspace (in the session store).

A rule is ``{kind, pattern}``:

* ``command``: a command prefix of words (``npm test``, ``git status``).
  A command line is split into its commands on ``&&``, ``||``, ``;``, ``|``
  and newlines, quotes respected (:func:`split_command`); it is allowed when
  EVERY command starts with the words of some rule. A line with anything
  else a shell would run or redirect (``$(...)``, backticks, ``>``, ``<``,
  ``&``, parentheses, a ``VAR=value`` prefix) or that does not parse (an
  open quote) is never allowed by rules: the person is asked.
* ``write``: a glob over workspace-relative paths (``src/**``, ``*.md``;
  ``*`` does not cross ``/``).
* ``mcp``: ``server`` (all its tools) or ``server/tool``.

:class:`RuleBook` is one session's view: its own rules and the
workspace's. The approval check (:func:`rein.tools.approval.check_approval`)
asks it before asking the person, and keeps what the person chose to
remember.
"""

from __future__ import annotations

import re
import shlex
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rein.harness.ports import ApprovalRule, ApprovalRuleKind, RememberScope
from rein.tools._globs import glob_regex

__all__ = [
    "MemoryRules",
    "RuleBook",
    "RuleStore",
    "StoredRule",
    "UnsafeCommand",
    "command_allowed",
    "rule_matches",
    "split_command",
    "suggest_rules",
    "validate_pattern",
]

_SEPARATORS = frozenset({"&&", "||", "|"})
_PUNCTUATION = ";&|<>()\n"
#: A word that makes the shell run or expand something beyond the words.
_EXPANDS = re.compile(r"\$\(|`|<\(|>\(")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class UnsafeCommand(ValueError):
    """A command line rules cannot vouch for (the person is asked)."""


def split_command(line: str) -> list[list[str]]:
    """The commands of ``line`` as lists of words, split on ``&&``, ``||``,
    ``;``, ``|`` and newlines outside quotes. UnsafeCommand for a line that
    does not parse or that redirects, substitutes or backgrounds."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"  # a newline separates commands, like ;
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise UnsafeCommand(f"cannot parse the command line: {exc}") from None
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or (token and set(token) <= {";", "\n"}):
            commands.append([])
        elif token and set(token) <= set(_PUNCTUATION):
            raise UnsafeCommand(f"the command line uses {token!r}")
        elif _EXPANDS.search(token):
            raise UnsafeCommand("the command line substitutes a command")
        else:
            commands[-1].append(token)
    commands = [c for c in commands if c]
    if not commands:
        raise UnsafeCommand("the command line is empty")
    for words in commands:
        if _ASSIGNMENT.match(words[0]):
            raise UnsafeCommand(f"the command sets a variable ({words[0]})")
    return commands


def _prefix_words(pattern: str) -> list[str]:
    return shlex.split(pattern)


def command_allowed(words: Sequence[str], patterns: Sequence[str]) -> bool:
    """``words`` start with the words of one of the command ``patterns``."""
    for pattern in patterns:
        prefix = _prefix_words(pattern)
        if prefix and list(words[: len(prefix)]) == prefix:
            return True
    return False


def _write_matches(pattern: str, path: str) -> bool:
    return glob_regex(pattern).match(path) is not None


def _mcp_matches(pattern: str, subject: str) -> bool:
    return subject == pattern or subject.startswith(pattern + "/")


def rule_matches(kind: ApprovalRuleKind, pattern: str, subject: str) -> bool:
    """One rule allows one subject (for commands: one command's words
    joined by spaces; use :func:`command_allowed` for a whole line)."""
    if kind == "command":
        return command_allowed(shlex.split(subject), [pattern])
    if kind == "write":
        return _write_matches(pattern, subject)
    return _mcp_matches(pattern, subject)


def _command_prefix(words: Sequence[str]) -> str:
    """The suggested rule of one command: the program and its subcommand
    when the second word is one (``npm test``, ``git status``; ``python -m
    pytest`` keeps the module); otherwise the whole command (``rm -rf
    build``), never a bare program that would allow all its uses."""
    if len(words) > 2 and words[1] == "-m":
        return shlex.join(words[:3])
    if len(words) > 1 and re.fullmatch(r"[A-Za-z][\w:-]*", words[1]):
        return shlex.join(words[:2])
    return shlex.join(words)


def suggest_rules(kind: ApprovalRuleKind, subject: str) -> tuple[ApprovalRule, ...]:
    """The rules that would allow ``subject`` (a command line: one per
    command; empty when rules cannot allow it)."""
    if kind == "command":
        try:
            commands = split_command(subject)
        except UnsafeCommand:
            return ()
        patterns = list(dict.fromkeys(_command_prefix(words) for words in commands))
        return tuple(ApprovalRule("command", p) for p in patterns)
    if kind == "write":
        parent, _, name = subject.rpartition("/")
        return (ApprovalRule("write", f"{parent}/**" if parent else name),)
    return (ApprovalRule("mcp", subject),)


def validate_pattern(kind: ApprovalRuleKind, pattern: str) -> str:
    """``pattern`` stripped; ValueError saying what is wrong with it."""
    pattern = pattern.strip()
    if not pattern:
        raise ValueError("the pattern is empty")
    if kind == "command":
        try:
            words = split_command(pattern)
        except UnsafeCommand as exc:
            raise ValueError(str(exc)) from None
        if len(words) != 1:
            raise ValueError("a command rule is one command (no &&, ||, ; or |)")
    elif kind == "write" and (pattern.startswith("/") or ".." in pattern.split("/")):
        raise ValueError("a write rule is a workspace-relative glob")
    return pattern


@dataclass(frozen=True, slots=True)
class StoredRule:
    id: str
    scope: RememberScope
    kind: ApprovalRuleKind
    pattern: str
    created_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "scope": self.scope, "kind": self.kind, "pattern": self.pattern}


def new_rule_id() -> str:
    return f"rule_{uuid.uuid4().hex[:12]}"


class RuleStore(Protocol):
    """Where rules of one scope live (memory, or the session store)."""

    async def list(self) -> list[StoredRule]: ...

    async def add(self, kind: ApprovalRuleKind, pattern: str) -> StoredRule: ...

    async def remove(self, rule_id: str) -> bool: ...


class MemoryRules:
    """Rules kept in memory (a session's; the workspace's without a store)."""

    def __init__(self, scope: RememberScope) -> None:
        self.scope: RememberScope = scope
        self._rules: list[StoredRule] = []

    async def list(self) -> list[StoredRule]:
        return list(self._rules)

    async def add(self, kind: ApprovalRuleKind, pattern: str) -> StoredRule:
        for rule in self._rules:
            if (rule.kind, rule.pattern) == (kind, pattern):
                return rule
        rule = StoredRule(new_rule_id(), self.scope, kind, pattern)
        self._rules.append(rule)
        return rule

    async def remove(self, rule_id: str) -> bool:
        kept = [r for r in self._rules if r.id != rule_id]
        removed = len(kept) != len(self._rules)
        self._rules = kept
        return removed


class RuleBook:
    """One session's rules and the workspace's (the ``ApprovalRuleBook``
    port of :class:`rein.harness.tools.ToolEnvironment`)."""

    def __init__(self, workspace: RuleStore | None = None) -> None:
        self.session = MemoryRules("session")
        self.workspace = workspace

    def _stores(self) -> list[RuleStore]:
        return [self.session] + ([self.workspace] if self.workspace is not None else [])

    async def rules(self) -> list[StoredRule]:
        found: list[StoredRule] = []
        for store in self._stores():
            found += await store.list()
        return found

    async def uncovered(
        self, kind: ApprovalRuleKind, subject: str
    ) -> tuple[ApprovalRule, ...] | None:
        """None when the rules allow ``subject``; else the rules that would
        (empty when none can)."""
        patterns = [r.pattern for r in await self.rules() if r.kind == kind]
        if kind != "command":
            if any(rule_matches(kind, p, subject) for p in patterns):
                return None
            return suggest_rules(kind, subject)
        try:
            commands = split_command(subject)
        except UnsafeCommand:
            return ()
        missing = [words for words in commands if not command_allowed(words, patterns)]
        if not missing:
            return None
        suggested = dict.fromkeys(_command_prefix(words) for words in missing)
        return tuple(ApprovalRule("command", p) for p in suggested)

    async def remember(self, scope: RememberScope, rules: Sequence[ApprovalRule]) -> None:
        store: RuleStore = self.session
        if scope == "workspace":
            if self.workspace is None:
                raise ValueError("this session has no workspace rules")
            store = self.workspace
        for rule in rules:
            await store.add(rule.kind, rule.pattern)

    async def revoke(self, rule_id: str) -> bool:
        for store in self._stores():
            if await store.remove(rule_id):
                return True
        return False
