"""A module's text as the coverage index compares it
(:mod:`rein.testgate.coverage_index`): its content hash; its *functions*
(every function and method, nested ones inside their outer one,
decorators left out), each by the hash of its syntax tree; its
*skeleton*: everything else, what runs at import (imports, constants,
class bodies, decorators, module-level statements), and a memoized
function's code (its cache serves tests that never run it); and what each
function names, from which :func:`memo_reach` tells what a memoized
function may call (its cache serves those calls' results too). The syntax
trees are compared, not the text: a comment or a moved line changes
nothing."""

from __future__ import annotations

import ast
import bisect
import hashlib
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "MODULE",
    "FileModel",
    "digest",
    "function_nodes",
    "memo_reach",
    "model_of",
    "under_memo",
]

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
    #: Qualified name -> the names its code names (a name, an attribute);
    #: a module- or class-level name -> the names put in it (a table of
    #: functions; a registering decorator's table: the functions it decorates).
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: The memoized functions' qualified names.
    memoized: frozenset[str] = frozenset()

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
    names: dict[str, frozenset[str]] = {}
    memoized: set[str] = set()
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
                names[name] = _names(node)
                kept = ""
                if _memoized(decorators):
                    kept = functions[name]
                    memoized.add(name)
                parts.append(f"def {name} {[ast.dump(d) for d in decorators]} {kept}")
                for decorator in decorators:  # a registry it adds to names it
                    registered.append((decorator, node.name))
            elif isinstance(node, ast.ClassDef):
                head = [ast.dump(x) for x in (*node.bases, *node.keywords, *node.decorator_list)]
                inner = walk(node.body, f"{prefix}{node.name}.")
                parts.append(f"class {node.name} {head} [{', '.join(inner)}]")
            else:
                for target, named in _tables(node):
                    names[prefix + target] = names.get(prefix + target, frozenset()) | named
                parts.append(ast.dump(node))
        return parts

    registered: list[tuple[ast.expr, str]] = []
    try:
        skeleton = walk(tree.body, "")
    except RecursionError:
        return None
    for decorator, function in registered:
        # ``@register`` fills ``REGISTRY``: what ``register`` names (the
        # table) names the function it is given.
        for used in _names(decorator):
            for table in names.get(used, frozenset()):
                names[table] = names.get(table, frozenset()) | {function}
    return FileModel(
        digest(text),
        digest("\n".join(skeleton)),
        functions,
        tuple(sorted(spans)),
        names,
        frozenset(memoized),
    )


def function_nodes(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Each function of ``tree`` by the qualified name :func:`model_of`
    gives it (``C.f``; ``f#2`` for a second ``f`` there)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def walk(body: Sequence[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name, again = prefix + node.name, 1
                while name in found:
                    again += 1
                    name = f"{prefix}{node.name}#{again}"
                found[name] = node
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return found


def _names(node: ast.AST) -> frozenset[str]:
    """What a function's code names: a name, an attribute (a call of a
    method, of a module's function)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return frozenset(found)


def _tables(node: ast.stmt) -> list[tuple[str, frozenset[str]]]:
    """What a module-level (or class-level) statement puts in a name: the
    names its value names. ``BUILDERS = {'t': _build}``,
    ``BUILDERS['u'] = _other``, ``BUILDERS.update(u=_other)``,
    ``HANDLERS += [_h]``: a memoized function calling ``BUILDERS['t']()``
    names only ``BUILDERS``; through it, ``_build`` (review23 F5)."""
    targets: list[ast.expr] = []
    value: ast.AST | None = None
    if isinstance(node, ast.Assign):
        targets, value = list(node.targets), node.value
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets, value = [node.target], node.value
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func  # ``BUILDERS.update(...)``, ``.append(f)``
        if isinstance(func, ast.Attribute):
            targets, value = [func.value], node.value
    if value is None:
        return []
    named = _names(value)
    out: list[tuple[str, frozenset[str]]] = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):  # ``X``, ``X[k]``, ``X.a``, ``a, b``
                out.append((sub.id, named))
    return out


def memo_reach(models: Iterable[FileModel]) -> frozenset[str]:
    """The names of the functions a memoized function of ``models`` may
    call, by name, in any of them and on to a fixed point: a function
    named so, a method (a class named so: its dunder methods, which
    Python calls by syntax), what a module-level table named so holds
    (:func:`_tables`; a registering decorator's table). Only the test that fills the cache runs them;
    the ones it serves never do, so their records never show them
    (review20b: a change of ``_build``, called by a cached ``table()``,
    ran only the test that filled the cache)."""
    models = list(models)
    reached: set[str] = set()
    by_name: dict[str, list[frozenset[str]]] = {}
    for model in models:
        for name in model.memoized:
            reached |= model.names.get(name, frozenset())
        for name, named in model.names.items():
            for key in _keys(name):
                by_name.setdefault(key, []).append(named)
    queue = list(reached)
    while queue:
        for named in by_name.pop(queue.pop(), ()):
            new = named - reached
            reached |= new
            queue.extend(new)
    return frozenset(reached)


def under_memo(name: str, reach: frozenset[str]) -> bool:
    """The function ``name`` (qualified) is one :func:`memo_reach` reached."""
    return bool(reach) and not reach.isdisjoint(_keys(name))


def _keys(name: str) -> tuple[str, ...]:
    """The names a function is called by: its own; for a dunder method,
    its class's too (``Builder()`` runs ``Builder.__init__``)."""
    parts = name.split("#")[0].split(".")
    last = parts[-1]
    if last.startswith("__") and last.endswith("__"):
        return (last, *parts[:-1])
    return (last,)
