"""Approvals that stick: rules the person kept with "always allow", for the
session (in memory) or the workspace (in the session store).

A rule is ``{kind, pattern}``:

* ``command``: one command exactly as written (``rm -rf build``: the same
  words, quoted the same way), or, when the person chose the wider rule, a
  known program and its subcommand then ``*`` (``git log *``,
  :mod:`rein.tools._command_prefixes`): that command with any more words,
  as long as none is an option the program's list does not name, names a
  path outside the workspace or in git's internals, or expands anything
  (:func:`unsafe_extra`). A command line is split into its
  commands on ``&&``, ``||``, ``;``, ``|`` and newlines, quotes respected
  (:mod:`rein.tools._shell_words`); it is allowed when EVERY command is
  allowed by some rule. A line with anything else a shell would run, expand
  or redirect (``$(...)``, backticks, ``$VAR``, ``${...}``, ``>``, ``<``,
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

import posixpath
import re
import shlex
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rein.harness.ports import ApprovalRule, ApprovalRuleKind, RememberScope
from rein.tools._command_prefixes import Options, option_allowed, prefix_head
from rein.tools._globs import glob_regex
from rein.tools._shell_words import UnsafeCommand, Word, parse_line
from rein.tools.sandbox import Sandbox

__all__ = [
    "PREFIX_MARK",
    "MemoryRules",
    "RuleBook",
    "RuleStore",
    "StoredRule",
    "UnsafeCommand",
    "command_allowed",
    "rule_matches",
    "split_command",
    "suggest_rules",
    "unsafe_extra",
    "validate_pattern",
    "widen",
]

#: The last word of a prefix rule: the command may go on (``git log *``).
PREFIX_MARK = "*"


def split_command(line: str) -> list[list[str]]:
    """The commands of ``line`` as lists of words (quotes removed), split on
    ``&&``, ``||``, ``;``, ``|`` and newlines outside quotes. UnsafeCommand
    for a line rules cannot vouch for (:mod:`rein.tools._shell_words`)."""
    return [[word.text for word in words] for words in parse_line(line)]


def _raw(words: Sequence[Word]) -> list[str]:
    return [word.raw for word in words]


@dataclass(frozen=True, slots=True)
class _Pattern:
    """A command rule read: its words as written, and whether more may follow."""

    words: tuple[str, ...]
    prefix: bool


def _read_pattern(pattern: str) -> _Pattern | None:
    try:
        (words,) = parse_line(pattern)
    except (UnsafeCommand, ValueError):
        return None  # not one command a rule can be (a bad stored row)
    raw = tuple(_raw(words))
    if len(raw) > 1 and raw[-1] == PREFIX_MARK:
        return _Pattern(raw[:-1], prefix=True)
    return _Pattern(raw, prefix=False)


def _outside(candidate: str, root: str | None) -> bool:
    if candidate.startswith("~") or ".." in candidate.split("/"):
        return True
    if not candidate.startswith("/"):
        return False
    if root is None:
        return True
    full = posixpath.normpath(candidate)
    base = root.rstrip("/") or "/"
    return not (full == base or full.startswith(base.rstrip("/") + "/"))


def _git_internals(candidate: str, root: str | None) -> bool:
    """``candidate`` names a path in git's internals: through a ``.git``
    at any depth, or (inside the workspace ``root``) one
    :meth:`Sandbox.git_internals` calls a bare repository's layout."""
    if any(part.lower() == ".git" for part in candidate.split("/")):
        return True
    if root is None or not candidate or candidate.startswith("-"):
        return False
    full = posixpath.normpath(posixpath.join(root, candidate))
    rel = posixpath.relpath(full, root)
    if rel == "." or rel.startswith(".."):
        return False
    return Sandbox(root).git_internals(rel) is not None


def unsafe_extra(word: Word, root: str | None, options: Options | None = None) -> str | None:
    """Why an extra word (after a prefix rule's words) still needs the
    person: it is an option ``options`` does not name (any option, without
    them), it names a path outside the workspace ``root`` (absolute
    elsewhere, ``..``, ``~``; also after ``=``, ``:``, ``@`` or ``,``, and
    in a short option's value) or in git's internals (``.git``), or the
    shell would expand it (a tilde, a brace, a glob: ``*``, ``?``, ``[``,
    which may match a file named like an option)."""
    if word.tilde:
        return f"{word.raw} expands ~"
    if word.brace:
        return f"{word.raw} expands braces"
    if word.glob:
        return f"{word.raw} is a glob (the shell may expand it to any name)"
    text = word.text
    if not option_allowed(text, options or Options(frozenset())):
        return f"{word.raw} is an option a rule does not allow"
    candidates = {text, *re.split(r"[=:@,]", text)}
    if re.match(r"^-[A-Za-z]", text) and len(text) > 2:
        candidates.add(text[2:])
    for candidate in candidates:
        if _outside(candidate, root):
            return f"{word.raw} names a path outside the workspace"
    for candidate in candidates:
        if _git_internals(candidate, root):
            return f"{word.raw} names a path in git's internals"
    return None


def command_allowed(
    words: Sequence[Word | str], patterns: Sequence[str], root: str | None = None
) -> bool:
    """One command is allowed by one of the command ``patterns``: a pattern
    is the whole command as written (``rm -rf build``), or a known program
    and subcommand then `` *`` (``git log *``: any more words that
    :func:`unsafe_extra` lets through). A prefix rule for anything else (kept
    by an earlier version: ``find src *``) allows nothing."""
    parsed = [w if isinstance(w, Word) else Word(w, shlex.quote(w)) for w in words]
    raw = _raw(parsed)
    for pattern in patterns:
        rule = _read_pattern(pattern)
        if rule is None:
            continue
        if not rule.prefix:
            if tuple(raw) == rule.words:
                return True
            continue
        known = prefix_head(rule.words)
        if known is None or known[0] != rule.words:
            continue
        head = len(rule.words)
        if tuple(raw[:head]) == rule.words and all(
            unsafe_extra(word, root, known[1]) is None for word in parsed[head:]
        ):
            return True
    return False


def _write_matches(pattern: str, path: str) -> bool:
    return glob_regex(pattern).match(path) is not None


def _mcp_matches(pattern: str, subject: str) -> bool:
    return subject == pattern or subject.startswith(pattern + "/")


def rule_matches(
    kind: ApprovalRuleKind, pattern: str, subject: str, root: str | None = None
) -> bool:
    """One rule allows one subject (for commands: one command; use
    :meth:`RuleBook.uncovered` for a whole line)."""
    if kind == "command":
        try:
            commands = parse_line(subject)
        except UnsafeCommand:
            return False
        return len(commands) == 1 and command_allowed(commands[0], [pattern], root)
    if kind == "write":
        return _write_matches(pattern, subject)
    return _mcp_matches(pattern, subject)


def _exact_rule(words: Sequence[Word]) -> str | None:
    """The rule of exactly this command: its words as written. None when
    that would read as a prefix rule (its last word is a bare ``*``)."""
    raw = _raw(words)
    if len(raw) > 1 and raw[-1] == PREFIX_MARK:
        return None
    return " ".join(raw)


def _prefix_rule(words: Sequence[Word]) -> str | None:
    """The wider rule the person may choose instead of the exact one: a
    known program and its subcommand, then `` *`` (``git log *``,
    ``npm run build *``, ``python -m pytest *``, ``pytest *``;
    :func:`rein.tools._command_prefixes.prefix_head`). None for anything
    else (``rm -rf build``, ``find src``, ``sudo rm``, ``git push``)."""
    known = prefix_head(_raw(words))
    return None if known is None else " ".join([*known[0], PREFIX_MARK])


def _command_rules(commands: Sequence[Sequence[Word]]) -> tuple[ApprovalRule, ...]:
    exact = [_exact_rule(words) for words in commands]
    if any(pattern is None for pattern in exact):
        return ()
    return tuple(ApprovalRule("command", p) for p in dict.fromkeys(exact) if p is not None)


def suggest_rules(kind: ApprovalRuleKind, subject: str) -> tuple[ApprovalRule, ...]:
    """The rules that would allow exactly ``subject`` (a command line: one
    per command, each the whole command; empty when rules cannot allow it)."""
    if kind == "command":
        try:
            commands = parse_line(subject)
        except UnsafeCommand:
            return ()
        return _command_rules(commands)
    if kind == "write":
        parent, _, name = subject.rpartition("/")
        return (ApprovalRule("write", f"{parent}/**" if parent else name),)
    return (ApprovalRule("mcp", subject),)


def widen(rules: Sequence[ApprovalRule]) -> tuple[ApprovalRule, ...]:
    """The wider choice next to exact command ``rules``: each command that
    has a subcommand as its prefix rule (``git log -5`` -> ``git log *``),
    the others as they are. Empty when nothing would be wider."""
    wider: list[ApprovalRule] = []
    for rule in rules:
        pattern = None
        if rule.kind == "command":
            try:
                (words,) = parse_line(rule.pattern)
            except (UnsafeCommand, ValueError):
                words = []
            pattern = _prefix_rule(words) if words else None
        wider.append(ApprovalRule("command", pattern) if pattern else rule)
    found = tuple(dict.fromkeys(wider))
    return found if found != tuple(rules) else ()


def validate_pattern(kind: ApprovalRuleKind, pattern: str) -> str:
    """``pattern`` stripped; ValueError saying what is wrong with it."""
    pattern = pattern.strip()
    if not pattern:
        raise ValueError("the pattern is empty")
    if kind == "command":
        try:
            words = parse_line(pattern)
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

    def __init__(self, workspace: RuleStore | None = None, *, root: str | None = None) -> None:
        self.session = MemoryRules("session")
        self.workspace = workspace
        #: The workspace folder: a prefix rule's extra words may name paths
        #: inside it (None: every absolute path asks).
        self.root = root

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
            commands = parse_line(subject)
        except UnsafeCommand:
            return ()
        missing = [words for words in commands if not command_allowed(words, patterns, self.root)]
        if not missing:
            return None
        return _command_rules(missing)

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
