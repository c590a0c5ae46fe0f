"""The units of a module for per-test selection (:mod:`rein.testgate.narrow`):
its definitions (a top-level function, a class and its members, a
module-level assignment or import), each with its lines, the names it
binds and the names it refers to; and the code lines a change touches."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

__all__ = [
    "CHILD",
    "DYNAMIC",
    "LOOKUPS",
    "Unit",
    "bound_names",
    "changed_lines",
    "first_line",
    "fixture_names",
    "import_units",
    "is_def",
    "last_line",
    "module_units",
    "names_in",
    "units_without_refs",
]

#: Changed middles longer than this (lines, both texts) count as changed whole.
DIFF_LINES = 4_000
#: In a unit's refs: it looks a name up by a computed ``getattr``, or
#: defines ``__getattr__``/``__getattribute__`` (never an identifier).
DYNAMIC = "<getattr>"
LOOKUPS = frozenset({"__getattr__", "__getattribute__"})
#: In a unit's refs: it starts a child process (``subprocess.run``,
#: ``os.system``, ``sys.executable``, ...), whose code no name shows (a
#: ``python -c`` string, ``-m pkg``); never an identifier.
CHILD = "<child>"
_SPAWNS = frozenset(
    {
        "Popen",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "posix_spawn",
        "posix_spawnp",
        "run_module",
        "run_path",
    }
)
#: A module's attributes that start one (``subprocess.run``, ``os.system``).
_MODULE_SPAWNS = {
    "subprocess": frozenset({"run", "call"}),
    "os": frozenset({"system", "popen", "fork", "forkpty"}),
    "sys": frozenset({"executable"}),
    "multiprocessing": frozenset({"Process", "Pool", "get_context"}),
}


def _spawns(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _SPAWNS
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr in _SPAWNS:
        return True
    owner = node.value.id if isinstance(node.value, ast.Name) else ""
    return node.attr in _MODULE_SPAWNS.get(owner, ()) or (
        owner == "os" and node.attr.startswith(("spawn", "exec"))
    )


@dataclass(frozen=True, slots=True)
class Unit:
    start: int
    end: int
    binds: frozenset[str]
    refs: frozenset[str]
    #: A top-level statement that is no definition (runs at import).
    loose: bool = False


def names_in(*nodes: ast.AST | None) -> frozenset[str]:
    found: set[str] = set()
    for node in nodes:
        if node is None:
            continue
        for sub in ast.walk(node):
            if _spawns(sub):
                found.add(CHILD)
            if isinstance(sub, ast.Name):
                found.add(sub.id)
            elif isinstance(sub, ast.Attribute):
                found.add(sub.attr)
            elif isinstance(sub, ast.alias):
                found.update(sub.name.split("."))
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if sub.value.isidentifier():
                    found.add(sub.value)
            elif isinstance(sub, ast.Call) and _computed_getattr(sub):
                found.add(DYNAMIC)
            elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef) and sub.name in LOOKUPS:
                found.add(DYNAMIC)
    return frozenset(found)


def _computed_getattr(call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "getattr"
        and len(call.args) >= 2
        and not isinstance(call.args[1], ast.Constant)
    )


def fixture_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a fixture is registered under (``name="..."``)."""
    return frozenset(
        k.value.value
        for d in node.decorator_list
        if isinstance(d, ast.Call)
        for k in d.keywords
        if k.arg == "name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
    )


def bound_names(node: ast.AST) -> frozenset[str]:
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            found.add(sub.id)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(sub.name)
        elif isinstance(sub, ast.alias):
            found.add((sub.asname or sub.name).split(".")[0])
    return frozenset(found)


def first_line(node: ast.stmt) -> int:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return node.lineno


def last_line(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def is_def(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def module_units(tree: ast.Module, *, refs: bool = True) -> list[Unit]:
    """A module's definitions (see the module docstring); without
    ``refs``, their names only (cheaper)."""
    units: list[Unit] = []
    _units(tree.body, names_in if refs else _none, units, refs=refs)
    return units


def _units(
    body: Sequence[ast.stmt],
    see: Callable[..., frozenset[str]],
    units: list[Unit],
    *,
    refs: bool,
) -> None:
    for node in body:
        if _branches(node):
            # ``if WIN: def getchar(...)``, ``try: import x except ...``:
            # the definitions in the branches are units of their own; the
            # test (or the exception's type) runs at import.
            assert isinstance(node, ast.If | ast.Try)
            if isinstance(node, ast.If):
                end = node.test.end_lineno or node.lineno
                units.append(Unit(node.lineno, end, frozenset(), see(node.test), True))
                _units([*node.body, *node.orelse], see, units, refs=refs)
                continue
            for handler in node.handlers:
                last = (handler.type.end_lineno if handler.type else None) or handler.lineno
                kind = see(handler.type) if handler.type else frozenset()
                units.append(Unit(handler.lineno, last, frozenset(), kind, True))
                _units(handler.body, see, units, refs=refs)
            _units([*node.body, *node.orelse, *node.finalbody], see, units, refs=refs)
        elif is_def(node):
            binds = frozenset({node.name}) | fixture_names(node)
            units.append(Unit(first_line(node), last_line(node), binds, see(node)))
        elif isinstance(node, ast.ClassDef):
            units.extend(_class_units(node, see))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            units.extend(import_units(node, refs=refs))
        elif _main_guard(node) or _type_checking(node):
            # ``if __name__ == "__main__":`` never runs when a test imports
            # the module, nor ``if TYPE_CHECKING:``: it names nothing (a
            # change in it is still outside any definition).
            units.append(Unit(first_line(node), last_line(node), frozenset(), frozenset()))
        else:
            # A plain assignment binds its names; any other statement (a
            # call, ``REGISTRY[key] = make()``, ``obj.attr = ...``: what it
            # fills no name shows) runs what it names at import: a hook.
            loose = not (isinstance(node, ast.Assign | ast.AnnAssign) and _plain_targets(node))
            units.append(
                Unit(first_line(node), last_line(node), bound_names(node), see(node), loose)
            )


def _plain_targets(node: ast.Assign | ast.AnnAssign) -> bool:
    """Every target a name (or a tuple or list of names)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    stack = list(targets)
    while stack:
        target = stack.pop()
        if isinstance(target, ast.Tuple | ast.List):
            stack.extend(target.elts)
        elif isinstance(target, ast.Starred):
            stack.append(target.value)
        elif not isinstance(target, ast.Name):
            return False
    return True


def _branches(node: ast.stmt) -> bool:
    """A module-level ``if`` or ``try`` whose branches hold only
    definitions, imports, assignments and such branches (no call)."""
    if isinstance(node, ast.If) and not (_main_guard(node) or _type_checking(node)):
        inner = [*node.body, *node.orelse]
    elif isinstance(node, ast.Try):
        inner = [*node.body, *node.orelse, *node.finalbody]
        inner += [stmt for handler in node.handlers for stmt in handler.body]
    else:
        return False
    simple = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom
    return all(
        isinstance(n, simple | ast.Pass)
        or (isinstance(n, ast.Assign | ast.AnnAssign) and not _calls(n))
        or _branches(n)
        for n in inner
    )


def _calls(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(node))


def _main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either way round), with no ``else``."""
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    named = any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides)
    main = any(isinstance(n, ast.Constant) and n.value == "__main__" for n in sides)
    return named and main


def _type_checking(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` (``typing.``, ``t.``), with no ``else``."""
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    if isinstance(test, ast.Attribute):
        return test.attr == "TYPE_CHECKING"
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def units_without_refs(tree: ast.Module) -> list[Unit]:
    return module_units(tree, refs=False)


def import_units(node: ast.Import | ast.ImportFrom, *, refs: bool = True) -> list[Unit]:
    """An import's names; only an alias (``a as b``) passes a name on."""
    units: list[Unit] = []
    for alias in node.names:
        bound = (alias.asname or alias.name).split(".")[0]
        passed = (
            frozenset({alias.name.rpartition(".")[2]}) if refs and alias.asname else frozenset()
        )
        units.append(Unit(first_line(node), last_line(node), frozenset({bound}), passed))
    return units


def _none(*nodes: ast.AST | None) -> frozenset[str]:
    return frozenset()


def _class_units(node: ast.ClassDef, see: Callable[..., frozenset[str]]) -> list[Unit]:
    own = frozenset({node.name})
    body_start = node.body[0].lineno if node.body else last_line(node) + 1
    header = see(*node.bases, *node.keywords, *node.decorator_list)
    units = [Unit(first_line(node), max(body_start - 1, node.lineno), own, header)]
    for item in node.body:
        if is_def(item):
            name = item.name
            # Python calls a dunder by syntax, on an instance of the class:
            # the class stands for it (its name would reach every class's).
            binds = own if _dunder(name) else frozenset({name})
        else:
            binds = own | bound_names(item)
        units.append(Unit(first_line(item), last_line(item), binds, see(item)))
    return units


def changed_lines(before: str, now: str) -> tuple[set[int], set[int]]:
    """The 1-based code lines (not blank, not a comment) that differ: in
    ``before``, in ``now``. The common head and tail are cut off first."""
    old, new = before.splitlines(), now.splitlines()
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    was: set[int] = set()
    is_: set[int] = set()
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    opcodes: Sequence[tuple[str, int, int, int, int]]
    if len(middle_old) + len(middle_new) > DIFF_LINES:
        opcodes = [("replace", 0, len(middle_old), 0, len(middle_new))]
    else:
        matcher = difflib.SequenceMatcher(None, middle_old, middle_new, autojunk=False)
        opcodes = matcher.get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        was.update(head + i + 1 for i in range(i1, i2) if _code(middle_old[i]))
        is_.update(head + j + 1 for j in range(j1, j2) if _code(middle_new[j]))
    return was, is_


def _code(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")
