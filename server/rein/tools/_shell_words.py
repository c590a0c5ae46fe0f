"""The words of a bash command line, as approval rules need them.

:func:`parse_line` splits a line into its commands (on ``&&``, ``||``,
``;``, ``|`` and newlines outside quotes) and each command into
:class:`Word` s that keep both what the shell passes on (``text``: quotes
removed) and what was written (``raw``: quotes kept), so ``rm '*'`` and
``rm *`` are told apart. A line whose meaning rules cannot see is refused
with :class:`UnsafeCommand`: it redirects (``>``, ``<``), backgrounds
(``&``), opens a subshell, expands a parameter (``$VAR``, ``${...}``) or
substitutes a command (``$(...)``, backticks) — inside double quotes too —,
starts with an assignment (``VAR=value``, ``VAR+=value``, ``VAR[i]=value``),
holds a character a person may not see as written (a control character
other than tab and newline, such as ``\r``; a Unicode space, format or
bidi character, such as U+00A0 or U+202E), or does not parse (an open
quote).

An unquoted ``#`` at the start of a word begins a comment to the end of the
line, as in bash: quotes in it open nothing, and the next line is a command
of its own.

A word also says what the shell would still expand in it (unquoted):
a glob (``*``, ``?``, ``[``), a brace (``{a,b}``), a tilde (``~`` at its
start or after ``=`` or ``:``). Rules that allow extra words look at those.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rein.harness.errors import ReinError

__all__ = ["UnsafeCommand", "Word", "parse_line"]

_OPERATORS = frozenset(";&|<>()")
_SEPARATORS = frozenset({"&&", "||", "|"})
#: What bash splits words on (not ``\r``, which is refused, nor U+00A0).
_BLANKS = frozenset(" \t")
#: What a backslash escapes inside double quotes (else it stays).
_DQ_ESCAPES = frozenset('$`"\\\n')
#: ``NAME=``, ``NAME+=``, ``NAME[index]=``: bash takes the word for an assignment.
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
#: Unicode categories of characters a person may not see as written.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})


class UnsafeCommand(ReinError, ValueError):
    """A command line rules cannot vouch for (the person is asked)."""


@dataclass(frozen=True, slots=True)
class Word:
    #: The word the program receives (quotes removed).
    text: str
    #: The word as written (quotes kept).
    raw: str
    #: It holds an unquoted ``*``, ``?`` or ``[`` (a glob).
    glob: bool = False
    #: It holds an unquoted ``{`` (a brace expansion).
    brace: bool = False
    #: It holds an unquoted ``~`` at its start or after ``=`` or ``:``.
    tilde: bool = False


class _WordBuilder:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.raw: list[str] = []
        self.started = False
        self.glob = self.brace = self.tilde = False

    def add(self, text: str, raw: str) -> None:
        self.text.append(text)
        self.raw.append(raw)
        self.started = True

    def unquoted(self, char: str) -> None:
        if char in "*?[":
            self.glob = True
        elif char == "{":
            self.brace = True
        elif char == "~" and (not self.text or self.text[-1][-1:] in ("=", ":")):
            self.tilde = True
        self.add(char, char)

    def word(self) -> Word:
        return Word("".join(self.text), "".join(self.raw), self.glob, self.brace, self.tilde)


def _dollar(line: str, i: int) -> UnsafeCommand:
    if line.startswith("$(", i):
        return UnsafeCommand("the command line substitutes a command")
    return UnsafeCommand("the command line expands a variable")


def _single_quoted(line: str, i: int, word: _WordBuilder) -> int:
    end = line.find("'", i + 1)
    if end < 0:
        raise UnsafeCommand("cannot parse the command line: No closing quotation")
    word.add(line[i + 1 : end], line[i : end + 1])
    return end + 1


def _double_quoted(line: str, i: int, word: _WordBuilder) -> int:
    j = i + 1
    text: list[str] = []
    while j < len(line):
        char = line[j]
        if char == '"':
            word.add("".join(text), line[i : j + 1])
            return j + 1
        if char == "\\" and j + 1 < len(line):
            following = line[j + 1]
            if following == "\n":
                j += 2
                continue
            text.append(following if following in _DQ_ESCAPES else "\\" + following)
            j += 2
            continue
        if char == "$":
            raise _dollar(line, j)
        if char == "`":
            raise UnsafeCommand("the command line substitutes a command")
        text.append(char)
        j += 1
    raise UnsafeCommand("cannot parse the command line: No closing quotation")


def _hidden(line: str) -> str | None:
    """The first character of ``line`` a person may not see as written."""
    for char in line:
        if char not in " \t\n" and unicodedata.category(char) in _HIDDEN:
            return char
    return None


def _tokens(line: str) -> list[Word | str]:
    """Words, and the operators between them (as strings)."""
    hidden = _hidden(line)
    if hidden is not None:
        raise UnsafeCommand(f"the command line holds the character {hidden!r}")
    tokens: list[Word | str] = []
    word = _WordBuilder()

    def end_word() -> None:
        nonlocal word
        if word.started:
            tokens.append(word.word())
        word = _WordBuilder()

    i = 0
    while i < len(line):
        char = line[i]
        if char in _BLANKS:
            end_word()
            i += 1
        elif char == "#" and not word.started:
            end = line.find("\n", i)  # a comment, to the end of the line
            i = len(line) if end < 0 else end
        elif char == "\n":
            end_word()
            tokens.append(";")
            i += 1
        elif char in _OPERATORS:
            end_word()
            j = i
            while j < len(line) and line[j] in _OPERATORS:
                j += 1
            tokens.append(line[i:j])
            i = j
        elif char == "\\":
            if i + 1 >= len(line):
                raise UnsafeCommand("cannot parse the command line: a lone backslash at its end")
            if line[i + 1] == "\n":  # a continued line
                i += 2
                continue
            word.add(line[i + 1], line[i : i + 2])
            i += 2
        elif char == "'":
            i = _single_quoted(line, i, word)
        elif char == '"':
            i = _double_quoted(line, i, word)
        elif char == "$":
            raise _dollar(line, i)
        elif char == "`":
            raise UnsafeCommand("the command line substitutes a command")
        else:
            word.unquoted(char)
            i += 1
    end_word()
    return tokens


def parse_line(line: str) -> list[list[Word]]:
    """The commands of ``line``, each a list of words. UnsafeCommand for a
    line whose meaning rules cannot see (see the module's docstring)."""
    commands: list[list[Word]] = [[]]
    for token in _tokens(line):
        if isinstance(token, Word):
            commands[-1].append(token)
        elif token in _SEPARATORS or set(token) <= {";"}:
            commands.append([])
        else:
            raise UnsafeCommand(f"the command line uses {token!r}")
    found = [c for c in commands if c]
    if not found:
        raise UnsafeCommand("the command line is empty")
    for words in found:
        if _ASSIGNMENT.match(words[0].raw):
            raise UnsafeCommand(f"the command sets a variable ({words[0].raw})")
    return found
