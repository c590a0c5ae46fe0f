"""A module's text as the coverage index compares it
(:mod:`rein.testgate.coverage_index`): its content hash; its *functions*
(every function and method, nested ones inside their outer one,
decorators left out), each by the hash of its syntax tree; its
*skeleton*: everything else, what runs at import (imports, constants,
class bodies, decorators, module-level statements), and a memoized
function's code (its cache serves tests that never run it). The syntax trees are
compared, not the text: a comment or a moved line changes nothing."""

from __future__ import annotations

import ast
import bisect
import hashlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["MODULE", "FileModel", "digest", "model_of"]

#: The function a line outside every function maps to (the skeleton).
MODULE = "<module>"


@dataclass(frozen=True, slots=True)
class FileModel:
    """A module's text as the index compares it (see the module docstring)."""

    sha: str
    skeleton: str
    #: Qualified name (``C.f``; ``f#2`` for a second ``f`` there) -> its hash.
    functions: Mapping[str, str]
    #: (first line with decorators, last line, qualified name), sorted.
    spans: tuple[tuple[int, int, str], ...]

    def function_at(self, line: int) -> str:
        """The function holding ``line``, :data:`MODULE` for none (the
        spans never overlap: a nested function is inside its outer one's)."""
        at = bisect.bisect_right(self.spans, (line, sys.maxsize, "")) - 1
        if at >= 0 and self.spans[at][0] <= line <= self.spans[at][1]:
            return self.spans[at][2]
        return MODULE


def _memoized(decorators: Sequence[ast.expr]) -> bool:
    """A cache's decorator (``functools.cache``, ``lru_cache(...)``,
    ``cached_property``, ``cachetools.cached``, a ``memoize``): the
    function runs under the first test that calls it, and its result
    serves the later ones, whose records never show it ran. Its code is
    then the skeleton's: a change of it is no function's alone."""
    for decorator in decorators:
        node = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        else:
            continue
        if "cache" in name.lower() or "memo" in name.lower():
            return True
    return False


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def model_of(text: str, parse: Callable[[str], ast.Module] = ast.parse) -> FileModel | None:
    """``text``'s model; None when it does not parse. ``parse``: its tree
    (a shared one, :class:`~rein.testgate.parses.Parses`: the decorators
    taken off a function while it is hashed are put back)."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    functions: dict[str, str] = {}
    spans: list[tuple[int, int, str]] = []
    skeleton: list[str] = []

    def walk(body: Sequence[ast.stmt], prefix: str) -> list[str]:
        parts: list[str] = []
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name, again = prefix + node.name, 1
                while name in functions:  # an overload, a property's setter
                    again += 1
                    name = f"{prefix}{node.name}#{again}"
                decorators = node.decorator_list
                node.decorator_list = []
                try:
                    functions[name] = digest(ast.dump(node))
                finally:  # the tree may be shared: put back, even on a RecursionError
                    node.decorator_list = decorators
                start = min([node.lineno, *(d.lineno for d in decorators)])
                spans.append((start, node.end_lineno or node.lineno, name))
                kept = functions[name] if _memoized(decorators) else ""
                parts.append(f"def {name} {[ast.dump(d) for d in decorators]} {kept}")
            elif isinstance(node, ast.ClassDef):
                head = [ast.dump(x) for x in (*node.bases, *node.keywords, *node.decorator_list)]
                inner = walk(node.body, f"{prefix}{node.name}.")
                parts.append(f"class {node.name} {head} [{', '.join(inner)}]")
            else:
                parts.append(ast.dump(node))
        return parts

    try:
        skeleton = walk(tree.body, "")
    except RecursionError:
        return None
    return FileModel(digest(text), digest("\n".join(skeleton)), functions, tuple(sorted(spans)))
