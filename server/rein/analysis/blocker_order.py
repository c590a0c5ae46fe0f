"""The order of a verdict's blockers: the cause first.

One broken file can make dozens of errors elsewhere (an unclosed parenthesis
in a module turns every ``from module import name`` into "unknown import
symbol"). The repair prompt shows the first few blockers in full, so they
must be the causes: errors in the files the run changed before errors in
other files, and syntax errors before the rest within each; then, a module
the run deleted or renamed away being a cause, imports that no longer
resolve before what follows from them (the names they brought, used)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypeVar

from rein.harness.ports import Diagnostic

__all__ = ["by_cause", "is_syntax_error", "is_unresolved_import"]

T = TypeVar("T")

#: Rule codes analyzers give a file they could not parse.
SYNTAX_CODES = frozenset({"invalid-syntax", "syntax", "E999"})
#: The sources whose every finding is a parse error (gopls's parser).
SYNTAX_SOURCES = frozenset({"syntax"})


#: How TypeScript's parser words its errors (codes 1xxx): "',' expected.",
#: "Unterminated string literal.", "Invalid character.", "Unexpected token."
#: Not every 1xxx code is the parser's: 1192 "Module ... has no default
#: export.", 1308 (await outside async), 1378, 1484 and 1485 (type-only
#: imports) are the checker's, about a file that parses.
_TS_PARSER_WORDS = ("Unterminated", "Invalid character", "Unexpected", "Expected ")


def _typescript_parse_error(code: str, message: str) -> bool:
    """A TypeScript finding of its parser: a 1xxx code worded as one."""
    if not (len(code) == 4 and code.startswith("1") and code.isdigit()):
        return False
    return message.rstrip().endswith(" expected.") or message.startswith(_TS_PARSER_WORDS)


def is_syntax_error(d: Diagnostic) -> bool:
    """A parse error: ruff's ``invalid-syntax`` (E999 in old versions), or a
    message that says so; gopls's (source ``syntax``); TypeScript's
    parser's errors (:func:`_typescript_parse_error`: "',' expected."); shellcheck's parse
    errors (SC1xxx at error severity: SC1046 "Couldn't find 'fi'"; its
    SC1090/SC1091 about sourced files are warnings and notes); clang's
    ``expected_*`` ("Expected ';' after expression")."""
    code = d.code or ""
    if code in SYNTAX_CODES or d.message.startswith("SyntaxError"):
        return True
    source = (d.source or "").lower()
    if source in SYNTAX_SOURCES:
        return True
    if source == "typescript":
        return _typescript_parse_error(code, d.message)
    if source == "shellcheck":
        return code.startswith("SC1") and d.severity == 1
    if source == "clang":
        return code.startswith("expected_")
    return False


def is_unresolved_import(d: Diagnostic) -> bool:
    """An import the analyzer could not resolve (basedpyright's
    ``reportMissingImports``: 'Import "pkg.mod" could not be resolved')."""
    return d.code == "reportMissingImports" or (
        d.message.startswith("Import ") and d.message.endswith("could not be resolved")
    )


def by_cause(
    groups: Sequence[tuple[Diagnostic, T]], touched: Collection[str]
) -> list[tuple[Diagnostic, T]]:
    """``groups`` (a diagnostic and what goes with it) ordered cause first:
    syntax errors in changed files, other errors in changed files, syntax
    errors elsewhere, unresolved imports elsewhere, the rest; by path and
    line within each (stable)."""

    def rank(item: tuple[Diagnostic, T]) -> tuple[bool, bool, bool, str, int, int]:
        d = item[0]
        return (
            d.path not in touched,
            not is_syntax_error(d),
            not is_unresolved_import(d),
            d.path,
            d.line,
            d.character,
        )

    return sorted(groups, key=rank)
