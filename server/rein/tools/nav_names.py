"""Whether ``rename_symbol``'s new name can be a name in the language of the
file the symbol is in: letters, digits and ``_`` not starting with a digit
(``$`` too in JavaScript and TypeScript), and not one of the language's
reserved words. A language server renames to whatever it is given (the
typescript server turned ``const shout`` into ``const class``, which does
not parse); the rename is refused before the server is asked.
"""

from __future__ import annotations

import keyword
import re
from pathlib import PurePosixPath

from rein.harness.errors import ToolError

__all__ = ["check_new_name"]

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
        raise ToolError(f"new_name {new_name!r} is a reserved word in {name}; nothing changed.")
    if "$" in new_name and not dollar:
        raise ToolError(f"new_name {new_name!r} is not a {name} name (a $); nothing changed.")
