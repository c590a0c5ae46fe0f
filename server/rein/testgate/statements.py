"""A function's statements as the tests gate's line-level selection compares
them: which statements of a changed function changed, and the lines (in the
text before the change) where they are; or that this cannot be told.

A test that ran a changed function but none of its changed statements'
lines behaved exactly as it would now, provided the change cannot act on
the statements it did not touch when the function is compiled or called.
What can is hashed into the :class:`Shape`'s *signature* (the header, every
name bound anywhere inside, whether it is a generator or a coroutine, its
``__class__`` cell; a function that reads its own namespace, ``locals()``
or ``eval``, is hashed whole); the
statements are its *parts*, compared position by position, each by its
*own part* (a simple statement whole, a compound one by its header, its
blocks being parts of their own). A statement that compiles to no
instruction never shows in a record of the lines run, so a change of one
cannot be told by lines. Wider is always the safe answer: when in doubt,
:func:`changed_spans` says None and the caller selects by function.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Shape", "changed_spans", "shape_of"]

#: A position key's mark for a statement that compiles to no instruction.
_SILENT = "~"

#: Names whose use gives the function a ``__class__`` cell.
_CELL_NAMES = frozenset({"super", "__class__"})
#: Names whose use reads the function's namespace: named at all (``eval``
#: and ``exec`` read it by default, ``locals`` may be called by another name).
_NAMESPACE_READERS = frozenset({"locals", "eval", "exec"})
#: Builtins that read the namespace when called with no argument.
_NAMESPACE_NO_ARG = frozenset({"vars", "dir"})

#: A definition's fields that are not its header.
_NOT_HEADER = frozenset({"body", "decorator_list"})

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Part = tuple[str, str, int, int]


@dataclass(frozen=True, slots=True)
class Shape:
    """A function's statements as the line-level selection compares them."""

    #: A hash of what decides how the rest of the function compiles or is called.
    signature: str
    #: (position key, own-part hash, first line, last line), in order. A key
    #: is the statement's path and node type (``body.2.orelse.0:Return``),
    #: marked with ``~`` when the statement compiles to no instruction.
    parts: tuple[_Part, ...]


def shape_of(node: _Function) -> Shape:
    """``node``'s shape: its signature and its statements, recursively."""
    parts: list[_Part] = []
    _block(node.body, "body", parts)
    return Shape(signature=_signature(node), parts=tuple(parts))


def changed_spans(then: Shape, now: Shape) -> tuple[tuple[int, int], ...] | None:
    """The line spans, in THEN's text, of then's statements whose own part
    differs in now; () when none differ; None when that cannot be told
    (the signatures differ; the statement lists differ: one added, removed,
    moved into another block, another kind at a position; a statement that
    compiles to no instruction differs)."""
    if then.signature != now.signature or len(then.parts) != len(now.parts):
        return None
    spans: list[tuple[int, int]] = []
    for (key, own, first, last), (key_now, own_now, _, _) in zip(
        then.parts, now.parts, strict=True
    ):
        if key != key_now:
            return None
        if own != own_now:
            if key.endswith(_SILENT):
                return None
            spans.append((first, last))
    return tuple(spans)


def _hash(*nodes: ast.AST | Sequence[ast.AST] | str | None) -> str:
    text = "\x00".join(node if isinstance(node, str) else _dump(node) for node in nodes)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _dump(node: ast.AST | Sequence[ast.AST] | None) -> str:
    if node is None:
        return "-"
    if isinstance(node, ast.AST):
        return ast.dump(node, include_attributes=False)
    return "[" + ",".join(ast.dump(item, include_attributes=False) for item in node) + "]"


def _end(*nodes: ast.expr | ast.pattern | None) -> int:
    """The last line of the nodes that are there."""
    return max(node.end_lineno or node.lineno for node in nodes if node is not None)


def _header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """A definition's header but its decorators: every field but those and
    its body (its name, arguments with their defaults and annotations,
    return annotation, bases, keywords, and Python 3.12's type parameters,
    whose names are bound in a scope of their own)."""
    return _hash(*(value for field, value in ast.iter_fields(node) if field not in _NOT_HEADER))


def _silent(statement: ast.stmt) -> bool:
    """A statement that compiles to no instruction, so never shows a line
    event: a bare constant (a docstring, ``...``), an annotation with no
    value, ``global``, ``nonlocal``. (CPython 3.11 does show some of these
    by a NOP; which it keeps is its choice, so none is relied on.)"""
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)
    if isinstance(statement, ast.AnnAssign):
        return statement.value is None
    return isinstance(statement, ast.Global | ast.Nonlocal)


def _block(statements: Sequence[ast.stmt], path: str, parts: list[_Part]) -> None:
    for at, statement in enumerate(statements):
        _statement(statement, f"{path}.{at}", parts)


def _add(
    parts: list[_Part],
    path: str,
    node: ast.AST,
    own: str,
    first: int,
    last: int,
    silent: bool = False,
) -> None:
    key = f"{path}:{type(node).__name__}{_SILENT if silent else ''}"
    parts.append((key, own, first, max(first, last)))


def _statement(statement: ast.stmt, path: str, parts: list[_Part]) -> None:
    """``statement``'s part, then its blocks' (each block by its field name)."""
    first = statement.lineno
    match statement:
        case ast.If(test=test) | ast.While(test=test):
            _add(parts, path, statement, _hash(test), first, _end(test))
            _block(statement.body, f"{path}.body", parts)
            _block(statement.orelse, f"{path}.orelse", parts)
        case ast.For(target=target, iter=iterable) | ast.AsyncFor(target=target, iter=iterable):
            _add(parts, path, statement, _hash(target, iterable), first, _end(iterable))
            _block(statement.body, f"{path}.body", parts)
            _block(statement.orelse, f"{path}.orelse", parts)
        case ast.With(items=items) | ast.AsyncWith(items=items):
            last = _end(
                *(part for item in items for part in (item.context_expr, item.optional_vars))
            )
            _add(parts, path, statement, _hash(items), first, last)
            _block(statement.body, f"{path}.body", parts)
        case ast.Try() | ast.TryStar():
            _add(parts, path, statement, "", first, first)
            _block(statement.body, f"{path}.body", parts)
            for at, handler in enumerate(statement.handlers):
                _handler(handler, f"{path}.handlers.{at}", parts)
            _block(statement.orelse, f"{path}.orelse", parts)
            _block(statement.finalbody, f"{path}.finalbody", parts)
        case ast.Match(subject=subject, cases=cases):
            _add(parts, path, statement, _hash(subject), first, _end(subject))
            for at, case in enumerate(cases):
                case_path = f"{path}.cases.{at}"
                pattern = case.pattern
                _add(
                    parts,
                    case_path,
                    case,
                    _hash(pattern, case.guard),
                    pattern.lineno,
                    _end(pattern, case.guard),
                )
                _block(case.body, f"{case_path}.body", parts)
        case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.ClassDef():
            _definition(statement, path, parts)
        case _:
            _add(
                parts,
                path,
                statement,
                _hash(statement),
                first,
                statement.end_lineno or first,
                _silent(statement),
            )


def _handler(handler: ast.ExceptHandler, path: str, parts: list[_Part]) -> None:
    last = handler.type.end_lineno if handler.type is not None else handler.lineno
    _add(
        parts,
        path,
        handler,
        _hash(handler.type, handler.name or "-"),
        handler.lineno,
        last or handler.lineno,
    )
    _block(handler.body, f"{path}.body", parts)


def _definition(
    statement: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, path: str, parts: list[_Part]
) -> None:
    """A nested ``def``/``class`` statement: its header (run where it
    stands), from its first decorator to the line before its body, or the
    header's last line when the body starts on it; its body's statements
    (run when it is called, or, a class's, where it stands)."""
    decorators = statement.decorator_list
    own = _hash(_header(statement), decorators)
    header: list[ast.AST] = [*decorators]
    if isinstance(statement, ast.ClassDef):
        header += [*statement.bases, *statement.keywords]
    else:
        header += (
            [statement.args] if statement.returns is None else [statement.args, statement.returns]
        )
    first = min([statement.lineno, *(decorator.lineno for decorator in decorators)])
    # ``arguments`` has no position: its parts (each ``arg``, each default) do.
    ends = (
        item.end_lineno or item.lineno
        for piece in header
        for item in ast.walk(piece)
        if isinstance(item, ast.expr | ast.arg | ast.keyword)
    )
    last = max(statement.body[0].lineno - 1, statement.lineno, *ends)
    _add(parts, path, statement, own, first, last)
    _block(statement.body, f"{path}.body", parts)


def _signature(node: _Function) -> str:
    """A hash of what decides how the rest of the function compiles or is
    called (see the module docstring): its header, but not its decorators
    (the caller compares those); for the function and each scope nested in
    it (a ``def``, a ``lambda``, a class body, a comprehension), in order,
    the names bound in that scope and its marks (generator, coroutine,
    ``global``/``nonlocal``, a ``__class__`` cell). Kept apart by scope: a
    change that moves a name's binding from a comprehension into the
    function makes the function's other reads of it local (review32). A
    function that reads its own namespace (``locals()``, ``vars()``,
    ``dir()``, ``eval``, ``exec``) is hashed whole: no change of it is told
    by lines."""
    scopes: list[str] = []
    if _reads_namespace(node):
        # What it reads (which names, in which order, each bound or not)
        # can change with any statement: the whole function is its signature.
        return _hash(type(node).__name__, _header(node), node.body)
    _scope([node.args, *node.body], scopes, None)
    return _hash(type(node).__name__, _header(node), "\x02".join(scopes))


def _reads_namespace(node: _Function) -> bool:
    for item in _inside(node):
        match item:
            case ast.Name(id=name) if name in _NAMESPACE_READERS:
                return True
            case ast.Call(func=ast.Name(id=name), args=[], keywords=[]) if (
                name in _NAMESPACE_NO_ARG
            ):
                return True
    return False


def _scope(nodes: Sequence[ast.AST], scopes: list[str], walrus: set[str] | None) -> None:
    """Add to ``scopes`` the names bound in the scope made of ``nodes`` and
    its marks, then each scope nested in it (in the order they stand).
    ``walrus``: where a ``:=`` in a comprehension binds (the nearest
    enclosing scope that is not one), None outside a comprehension."""
    bound: set[str] = set()
    marks: set[str] = set()
    at = len(scopes)
    scopes.append("")
    nested: list[tuple[list[ast.AST], set[str] | None, str]] = []
    stack: list[ast.AST] = list(reversed(nodes))
    while stack:
        item = stack.pop()
        children: list[ast.AST] | None = None
        match item:
            case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.Lambda():
                if not isinstance(item, ast.Lambda):
                    bound.add(item.name)
                    children = [*item.decorator_list, *_outer_parts(item.args)]
                    if item.returns is not None:
                        children.append(item.returns)
                    body: list[ast.AST] = [item.args, *item.body]
                else:
                    children = _outer_parts(item.args)
                    body = [item.args, item.body]
                nested.append((body, None, type(item).__name__))
            case ast.ClassDef():
                bound.add(item.name)
                children = [*item.decorator_list, *item.bases, *item.keywords]
                nested.append((list(item.body), None, "ClassDef"))
            case ast.ListComp() | ast.SetComp() | ast.GeneratorExp() | ast.DictComp():
                first, *rest = item.generators
                children = [first.iter]  # evaluated in the enclosing scope
                inner: list[ast.AST] = [first.target, *first.ifs]
                for generator in rest:
                    inner += [generator.target, generator.iter, *generator.ifs]
                    if generator.is_async:
                        marks.add("async comprehension")
                if first.is_async:
                    marks.add("async comprehension")
                inner += [item.key, item.value] if isinstance(item, ast.DictComp) else [item.elt]
                nested.append((inner, bound if walrus is None else walrus, type(item).__name__))
            case ast.NamedExpr(target=ast.Name(id=name)):
                bound.add(name)
                if walrus is not None:
                    walrus.add(name)
            case ast.Name(id=name, ctx=ast.Store() | ast.Del()):
                bound.add(name)
            case ast.Name(id=name) if name in _CELL_NAMES:
                marks.add(name)
            case ast.alias(name=name, asname=asname):
                bound.add(asname or name.partition(".")[0])
            case (
                ast.ExceptHandler(name=str(name))
                | ast.MatchAs(name=str(name))
                | ast.MatchStar(name=str(name))
            ):
                bound.add(name)
            case ast.MatchMapping(rest=str(name)):
                bound.add(name)
            case ast.arg(arg=name):
                bound.add(name)
            case ast.Global(names=names) | ast.Nonlocal(names=names):
                marks.update(f"{type(item).__name__}:{name}" for name in names)
            case ast.Yield() | ast.YieldFrom() | ast.Await() | ast.AsyncFor() | ast.AsyncWith():
                marks.add(type(item).__name__)
        if children is None:
            children = list(ast.iter_child_nodes(item))
        stack.extend(reversed(children))
    for body, into, kind in nested:
        _scope_of(kind, body, scopes, into)
    scopes[at] = "\x01".join([*sorted(bound), "|", *sorted(marks)])


def _scope_of(kind: str, nodes: list[ast.AST], scopes: list[str], walrus: set[str] | None) -> None:
    """A nested scope, named by its kind (a comprehension passes its
    ``:=`` names on to ``walrus``)."""
    scopes.append(kind)
    comprehension = kind in ("ListComp", "SetComp", "GeneratorExp", "DictComp")
    _scope(nodes, scopes, walrus if comprehension else None)


def _outer_parts(args: ast.arguments) -> list[ast.AST]:
    """What of a nested function's arguments runs in the enclosing scope:
    the defaults and the annotations."""
    parts: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None and arg.annotation is not None:
            parts.append(arg.annotation)
    return parts


def _inside(node: _Function) -> Iterator[ast.AST]:
    """Every node inside ``node``'s body and arguments, not its decorators
    (they run outside the function)."""
    for statement in node.body:
        yield from ast.walk(statement)
    yield from ast.walk(node.args)
    if node.returns is not None:
        yield from ast.walk(node.returns)
