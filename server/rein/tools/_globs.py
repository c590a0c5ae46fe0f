"""Glob patterns as regular expressions, and a small ``.gitignore`` matcher.

One translator serves three users: the ``glob`` tool, the sandbox's deny
globs and ``.gitignore`` rules. Paths are workspace-relative POSIX strings.

Deny globs (:func:`match_path`) match like ``.gitignore`` lines without
negation, and more broadly: a pattern matches at any depth unless it starts
with ``/`` (``.git/**`` covers ``vendor/lib/.git/hooks/pre-commit``,
``/build/**`` only the root's ``build``), a match on a directory covers
what is inside it, and case is ignored (``.ENV``, ``Secrets.yaml``).

Glob syntax: ``*`` and ``?`` never cross ``/``; ``**`` as a whole path
component matches zero or more directories; ``[abc]``, ``[!a-z]`` classes;
``\\x`` escapes; ``{a,b}`` alternatives (not nested) where ``braces=True``.

``.gitignore`` rules follow git's documentation: blank lines and ``#``
comments are skipped, ``!`` negates, a trailing ``/`` matches directories
only, a pattern with a ``/`` before its end is anchored to the directory of
its ``.gitignore`` and one without matches a name at any depth below it. The
last matching rule wins, and rules of deeper files come after shallower ones.
Not read: ``.git/info/exclude`` and the global excludes file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["IgnoreRule", "glob_regex", "match_path", "parse_gitignore", "path_ignored"]


def _translate(pattern: str, braces: bool) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                at_component_start = i == 0 or pattern[i - 1] == "/"
                if at_component_start and j == n:
                    out.append(".*")
                    i = j
                    continue
                if at_component_start and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            start = i + 1
            negate = pattern[start : start + 1] in ("!", "^")
            if negate:
                start += 1
            # A "]" right after the opening bracket is a member, not the end.
            end = pattern.find("]", start + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = "".join("\\" + ch if ch in "\\[]^" else ch for ch in pattern[start:end])
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "{" and braces:
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_translate(o, False) for o in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def glob_regex(
    pattern: str, *, anchored: bool = True, braces: bool = True, ignore_case: bool = False
) -> re.Pattern[str]:
    """Compile ``pattern``. Anchored patterns match the whole relative path;
    unanchored ones match a trailing run of path components (a name at any
    depth)."""
    prefix = "" if anchored else "(?:.*/)?"
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    # \Z, not $: "$" also matches before a final newline ("*.py" took "a.py\n").
    return re.compile(f"^{prefix}{_translate(pattern, braces)}\\Z", flags)


def match_path(pattern: str, path: str) -> bool:
    """Deny-glob matching: ``pattern`` matches ``path`` or one of its parent
    directories, at any depth unless the pattern starts with ``/`` (then from
    the root), ignoring case. Safer than ``.gitignore``'s rule (a ``/`` inside
    a pattern anchors it there): a protected name is protected wherever a
    repository nests it."""
    anchored = pattern.startswith("/")
    regex = glob_regex(pattern.strip("/"), anchored=anchored, ignore_case=True)
    parts = path.split("/")
    return any(regex.match("/".join(parts[:end])) for end in range(len(parts), 0, -1))


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One line of a ``.gitignore`` in directory ``base`` ("" for the root)."""

    base: str
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    #: The glob without "!", the leading "/" and the trailing "/".
    pattern: str
    #: Matched from ``base`` (it had a "/"), not as a name at any depth.
    anchored: bool

    def rooted(self) -> str:
        """This rule as a line of an ignore file at the workspace root."""
        prefix = f"{self.base}/" if self.base else ""
        anywhere = "" if self.anchored else "**/"
        return (
            f"{'!' if self.negated else ''}/{prefix}{anywhere}{self.pattern}"
            f"{'/' if self.dir_only else ''}"
        )

    def matches(self, path: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not path.startswith(self.base + "/"):
                return False
            path = path[len(self.base) + 1 :]
        return bool(self.regex.match(path))


def parse_gitignore(text: str, base: str = "") -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip("\n\r")
        if not line or line.startswith("#"):
            continue
        # Trailing spaces are dropped unless escaped with a backslash.
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        if not line:
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        rules.append(
            IgnoreRule(
                base=base,
                regex=glob_regex(line, anchored=anchored, braces=False),
                negated=negated,
                dir_only=dir_only,
                pattern=line,
                anchored=anchored,
            )
        )
    return rules


def path_ignored(rules: list[IgnoreRule] | tuple[IgnoreRule, ...], path: str, is_dir: bool) -> bool:
    """True when the last rule matching ``path`` ignores it. Callers walk top
    down and do not enter ignored directories, which is how git keeps files
    inside an excluded directory excluded whatever later rules say."""
    ignored = False
    for rule in rules:
        if rule.matches(path, is_dir):
            ignored = not rule.negated
    return ignored
