"""Whether ``rename_symbol``'s new name can be a name in the language of the
file the symbol is in: letters, digits and ``_`` not starting with a digit
(``$`` too in JavaScript and TypeScript), and not one of the language's
reserved words. A language server renames to whatever it is given (the
typescript server turned ``const shout`` into ``const class``, which does
not parse); the rename is refused before the server is asked. In
JavaScript and TypeScript a reserved word is a legal member name (a method,
a property, a field: ``Map.prototype.delete``, ``{ default: ... }``): there
the rename is refused only when the symbol's declaration, found by the
server's definition and outline (:func:`declares_member`), is not a member.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from rein.harness.errors import ToolError
from rein.harness.navigation_ports import (
    CodeRange,
    CodeSymbol,
    NavigationUnavailable,
    Navigator,
    Position,
)

__all__ = ["MEMBER_KINDS", "check_new_name", "declares_member", "member_may_be_named"]

#: The outline kinds (LSP ``SymbolKind``, lower case) of a member, whose
#: name may be a reserved word in JavaScript and TypeScript.
MEMBER_KINDS = frozenset({"method", "property", "field", "enummember"})

#: A name: letters, digits, _ and $ (JavaScript's), not starting with a digit.
_NAME = re.compile(r"^(?:[^\W\d]|\$)[\w$]*$")

_JS = frozenset(
    # ECMAScript's reserved words, with those of strict mode (modules are).
    "await break case catch class const continue debugger default delete do else enum "
    "export extends false finally for function if implements import in instanceof "
    "interface let new null package private protected public return static super switch "
    "this throw true try typeof var void while with yield".split()
)
_GO = frozenset(
    "break case chan const continue default defer else fallthrough for func go goto if "
    "import interface map package range return select struct switch type var".split()
)
_C = frozenset(
    "auto break case char const continue default do double else enum extern float for "
    "goto if inline int long register restrict return short signed sizeof static struct "
    "switch typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool "
    "_Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local".split()
)
_CPP = _C | frozenset(
    "alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t "
    "class compl concept const_cast consteval constexpr constinit co_await co_return "
    "co_yield decltype delete dynamic_cast explicit export false friend mutable namespace "
    "new noexcept not not_eq nullptr operator or or_eq private protected public "
    "reinterpret_cast requires static_assert static_cast template this thread_local throw "
    "true try typeid typename using virtual wchar_t xor xor_eq".split()
)
_PYTHON = frozenset(keyword.kwlist)

#: Extension -> (the language's name, its reserved words, whether ``$`` is a name's).
_LANGUAGES: dict[str, tuple[str, frozenset[str], bool]] = {
    **{ext: ("Python", _PYTHON, False) for ext in (".py", ".pyi")},
    **{
        ext: ("JavaScript/TypeScript", _JS, True)
        for ext in (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
    },
    ".go": ("Go", _GO, False),
    **{ext: ("C", _C, False) for ext in (".c", ".h")},
    **{ext: ("C++", _CPP, False) for ext in (".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx")},
}


def member_may_be_named(path: str, new_name: str) -> bool:
    """Whether ``new_name`` is refused in ``path`` only as a reserved word
    of JavaScript/TypeScript (a member may have it: :func:`declares_member`)."""
    language = _LANGUAGES.get(PurePosixPath(path).suffix.lower())
    return language is not None and language[1] is _JS and new_name in _JS


def _within(place: Position, where: CodeRange) -> bool:
    return where.start <= place <= where.end


def _declared(
    symbols: Sequence[CodeSymbol], where: CodeRange, parent: CodeSymbol | None = None
) -> tuple[CodeSymbol, CodeSymbol | None] | None:
    """The innermost of ``symbols`` whose name's range holds the start of
    ``where`` (a definition: the TypeScript server's is the name's), with
    its parent."""
    for symbol in symbols:
        inner = _declared(symbol.children, where, symbol)
        if inner is not None:
            return inner
        if _within(where.start, symbol.location.range):
            return symbol, parent
    return None


async def declares_member(navigator: Navigator, path: str, position: Position) -> bool:
    """Whether the symbol at ``position`` of ``path`` is declared as a member
    (:data:`MEMBER_KINDS`, or any child of an enum: typescript-language-server
    calls an enum member a constant) in the server's outline of its
    definition's file; False when the server cannot say."""
    try:
        definitions = await navigator.definition(path, position)
        if not definitions:
            return False
        where = definitions[0]
        found = _declared(await navigator.document_symbols(where.path), where.range)
    except NavigationUnavailable:
        return False
    if found is None:
        return False
    symbol, parent = found
    return symbol.kind in MEMBER_KINDS or (parent is not None and parent.kind == "enum")


def check_new_name(path: str, new_name: str) -> None:
    """A ToolError when ``new_name`` cannot name a symbol of ``path``'s
    language (a file of another language: only the shape of a name)."""
    if not _NAME.match(new_name):
        raise ToolError(f"new_name {new_name!r} is not a name (letters, digits, _, $).")
    language = _LANGUAGES.get(PurePosixPath(path).suffix.lower())
    if language is None:
        return
    name, reserved, dollar = language
    if new_name in reserved:
        member = " (a method or property may have it, a binding may not)" if dollar else ""
        raise ToolError(
            f"new_name {new_name!r} is a reserved word in {name}{member}; nothing changed."
        )
    if "$" in new_name and not dollar:
        raise ToolError(f"new_name {new_name!r} is not a {name} name (a $); nothing changed.")
