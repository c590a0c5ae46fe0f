"""Per-test selection: of the selected test files, only the tests that name
what the change can reach, when that can be told cheaply; else the files.

The changed lines (each changed module's text before the run against its
text now) fall in *definitions*: a top-level function, a method (a dunder
method stands for its class: Python calls it by syntax), a class's
header or a statement of its body (the class), a module-level assignment
or import (the names it binds). Their names are the change's. Then, over the modules
between the change and the tests (:attr:`TestSelection.modules`, helpers
and ``conftest.py`` files included), the project's other modules
(:attr:`TestSelection.others`: a base class there calls by name a method
a subclass of the changed module overrides, as parso's
``Normalizer.visit`` calls ``self.visit_node``) and the selected test
files' own helpers (but a module-level statement of one of those other
modules is no hook: it imports nothing the change reaches), a definition that names (a name, an attribute, an import, a
string that is an identifier) a reached name is reached too, to a fixed
point: a caller of a changed function, an alias, a module-level value
built from it. A file whose change is now only in comments, or none (a
repair restored it), has the names its change had at an earlier verdict of
the run, if any.

A test is kept when it names a reached name (its body, decorators,
parameters: fixtures are named by parameter); a test class when its
header, a helper method, a fixture or a class attribute does (or it
inherits from a class of the same file that does), else its test methods
one by one; a whole test file when it changed, or a module-level hook
(an autouse fixture, ``setup_module``, ``pytestmark``, a module-level
statement) names one. A class with a base from elsewhere (a mixin of
tests) is kept whole. pytest collects the files of the kept tests whole
(only the kept ones run), and the files whose imports name a reached
name, so a test file the change no longer lets import is seen.

Not narrowed (the selected files run whole, and the detail says why): a
changed file that is not a Python module of the selection, whose text
before the run is not known, that was created or deleted, or does not
parse; a file too deep for the parser (it says why); a change outside any
definition (a module docstring, a module-level call, an ``if`` or ``try``
holding more than definitions, imports and plain assignments); a
change of comments only; a reached name
in a ``conftest.py`` or in a module-level statement that is no definition
(a call filling a registry at import, ``REGISTRY[key] = make()``: a store
into an object binds no name); a reached name in a module that
looks names up by a computed ``getattr`` or defines ``__getattr__`` or
``__getattribute__`` (``getattr(self, "visit_" + kind)`` dispatch); a
project that renames pytest's test functions or classes
(``python_functions``, ``python_classes``); no test naming a reached
name. A fixture is known by its ``name=`` too; a module-level test made
by a call (``test_made = _make(3)``) and ``pytest_generate_tests`` are
module-level hooks: a reached name in them runs the file whole.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from rein.testgate.disk_texts import DiskTexts
from rein.testgate.narrow_units import (
    CHILD,
    DYNAMIC,
    Unit,
    bound_names,
    changed_lines,
    first_line,
    fixture_names,
    import_units,
    is_def,
    last_line,
    module_units,
    names_in,
    units_without_refs,
)
from rein.testgate.parses import Parses, Text, as_text

__all__ = ["Narrowed", "Narrower"]

T = TypeVar("T")

#: More parsed files than this for one verdict: not narrowed.
MAX_FILES = 3_000
_FILE_HOOKS = frozenset(
    {
        "setup_module",
        "teardown_module",
        "setUpModule",
        "tearDownModule",
        "setup_function",
        "teardown_function",
        "pytestmark",
        "pytest_generate_tests",
    }
)
_RENAMES = ("python_functions", "python_classes")
_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


@dataclass(frozen=True, slots=True)
class Narrowed:
    """The narrowed run: ``files`` for pytest to collect, of which only the
    tests whose node ids start with one of ``only`` run; ``names``: the
    changed definitions."""

    files: tuple[str, ...]
    only: tuple[str, ...]
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _TestClass:
    node_id: str
    #: What every test of the class needs (see :func:`_class_refs`).
    refs: frozenset[str]
    #: A base from elsewhere: kept whole.
    foreign: bool
    methods: tuple[tuple[str, frozenset[str]], ...]


@dataclass(frozen=True, slots=True)
class _TestFile:
    """A test file's tests and what each names."""

    path: str
    #: What its module-level hooks name (a reached one: the whole file).
    hooks: frozenset[str]
    functions: tuple[tuple[str, frozenset[str]], ...]
    classes: tuple[_TestClass, ...]
    helpers: tuple[Unit, ...]
    #: What its module-level imports name (a reached one: it is collected,
    #: so an import the change broke is seen).
    imports: frozenset[str] = frozenset()

    def naming(self, reached: frozenset[str]) -> list[str]:
        """The node-id prefixes of its tests that name a reached name."""
        if self.hooks & reached:
            return [self.path]
        out = [node for node, refs in self.functions if refs & reached]
        for cls in self.classes:
            if cls.foreign or cls.refs & reached:
                out.append(cls.node_id)
            else:
                out.extend(node for node, refs in cls.methods if refs & reached)
        return out


def _test_file(path: str, tree: ast.Module) -> _TestFile:
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    hooks: set[str] = set()
    functions: list[tuple[str, frozenset[str]]] = []
    tests: list[_TestClass] = []
    helpers: list[Unit] = []
    imports: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports |= names_in(node)
        if _file_wide(node):
            hooks |= names_in(node)
        if is_def(node) and _test_name(node.name):
            functions.append((f"{path}::{node.name}", _callable_refs(node)))
        elif isinstance(node, ast.ClassDef) and _test_class(node):
            whole = f"{path}::{node.name}"
            methods = tuple(
                (f"{whole}::{item.name}", _callable_refs(item))
                for item in node.body
                if is_def(item) and _test_name(item.name)
            )
            refs = _class_refs(node, classes, set())
            tests.append(_TestClass(whole, refs, _foreign_base(node, classes), methods))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            helpers.extend(import_units(node))
        else:
            binds = bound_names(node) | (fixture_names(node) if is_def(node) else frozenset())
            helpers.append(Unit(first_line(node), last_line(node), binds, names_in(node)))
    return _TestFile(
        path, frozenset(hooks), tuple(functions), tuple(tests), tuple(helpers), frozenset(imports)
    )


class Narrower:
    """Per-test selection for one workspace; what it read of a file is
    kept between verdicts while the file's stamp (or text) is the same."""

    def __init__(self, root: Path, parses: Parses | None = None) -> None:
        self.root = root
        #: The trees and what was made of them, by text (shared with the
        #: coverage index: a text is parsed once).
        self.parses = parses or Parses()
        #: An unchanged file's text (bytes when it does not decode plainly),
        #: read again only when its stamp changed.
        self._disk: DiskTexts[Text] = DiskTexts(root, as_text)
        #: Path -> the names its change had at an earlier verdict of the run.
        self._earlier: dict[str, set[str]] = {}

    def forget(self) -> None:
        """The run is over: no earlier verdict's names any more."""
        self._earlier.clear()

    def narrow(
        self,
        files: Sequence[str],
        modules: Sequence[str],
        changed: Mapping[str, tuple[str | None, str | None]],
        doctests: Sequence[str] = (),
        others: Sequence[str] = (),
    ) -> Narrowed | str:
        """The tests of ``files`` (selected test files) that the change
        (path -> its text before the run and now) reaches through
        ``modules`` and the project's ``others`` (what a module calls by an
        attribute's name need not be imported by it); or why the files run
        whole. Of ``files``, the ``doctests`` (modules whose doctests
        pytest collects) run whole."""
        try:
            return self._narrow(files, modules, changed, frozenset(doctests), others)
        except _Unparsable as exc:
            return str(exc)

    def _narrow(
        self,
        files: Sequence[str],
        modules: Sequence[str],
        changed: Mapping[str, tuple[str | None, str | None]],
        doctests: frozenset[str],
        others: Sequence[str],
    ) -> Narrowed | str:
        if self._renamed():
            return "the project renames pytest's test functions or classes"
        if len(files) + len(modules) + len(others) > MAX_FILES:
            return f"more than {MAX_FILES} files to read"
        # A changed doctest module is a module of the selection too: its
        # change names what reaches the other tests.
        whole = [f for f in files if f in changed and f not in doctests]
        names: set[str] = set()
        for path, (before, now) in changed.items():
            if path in whole:
                continue
            found = self._changed_names(path, before, now, modules)
            if isinstance(found, str):
                return found
            if found:
                self._earlier[path] = found
            # Restored, or comments changed since: what it changed earlier
            # in the run (a repair's verdict runs the tests that blocked).
            names |= found or self._earlier.get(path, set())
        if not names and not whole:
            return "the change touches no definition (comments or blank lines only)"
        # A module's doctests run whole: they name nothing the parse sees.
        whole += [f for f in files if f in doctests and f not in whole]
        tests = [self._test_file(f, changed) for f in files if f not in whole]
        helpers = [(m, u) for m in modules for u in self._module_units(m, changed) or ()]
        # A module that imports nothing the change reaches cannot run it at
        # import: its module-level statements (a script's ``main()``) pass
        # on the names they bind, but are no hook.
        helpers += [
            (m, replace(u, loose=False))
            for m in others
            for u in self._module_units(m, changed) or ()
        ]
        for test in tests:
            helpers.extend((test.path, u) for u in test.helpers)
        reached, hooks = _closure(names, helpers)
        if hooks:
            return hooks[0]
        dynamic = {path for path, unit in helpers if DYNAMIC in unit.refs}
        for path, unit in helpers:
            if path in dynamic and unit.binds & reached:
                return (
                    f"{path} looks names up by a computed getattr (or defines __getattr__): "
                    "what a change of it reaches cannot be told"
                )
        # A test that starts a child process (itself, or by anything it
        # calls: a helper or fixture of its file, a conftest.py, a helper
        # module such as tests/helpers.py, the project's own code) runs
        # code no name shows (``python -c "..."``, ``-m pkg``): kept
        # whenever its file is. Until 2026-12-06 only its file's and the
        # conftest.py files' spawns counted (review20b finding 3).
        child, _ = _closure((CHILD,), helpers)
        only = [*whole]
        collected = set(whole)
        for test in tests:
            kept = test.naming(reached | child)
            only.extend(kept)
            if kept or test.imports & reached:
                collected.add(test.path)
        if not only:
            return f"no test names {_few(sorted(names))} or what reaches it"
        ordered = sorted(collected, key=list(files).index)
        return Narrowed(tuple(ordered), tuple(only), tuple(sorted(names)))

    def prepare(self, path: str, text: str, *, now: bool) -> None:
        """Make what a verdict reads of ``path``'s ``text`` (``now``: as
        changed, its units; else before the run, its names) now."""
        try:
            if now:
                self._module_units(path, {path: (None, text)})
            else:
                self._read("names", path, {path: (None, text)}, units_without_refs)
        except _Unparsable:
            pass  # the verdict says why

    def _changed_names(
        self, path: str, before: str | None, now: str | None, modules: Sequence[str]
    ) -> set[str] | str:
        if not path.endswith(".py") or path not in modules:
            return f"{path} is not a Python module between the change and the tests"
        if path.rpartition("/")[2] == "conftest.py":
            return f"{path} is a conftest.py"
        if before is None or now is None:
            return f"{path} was created or deleted, or its text before the run is not known"
        # The text before the run is the same at each verdict of a run: kept.
        then = self._read("names", path, {path: (None, before)}, units_without_refs)
        units = self._module_units(path, {path: (before, now)})
        if then is None or units is None:
            return f"{path} does not parse"
        names: set[str] = set()
        for found, lines in zip((then, units), changed_lines(before, now), strict=True):
            for line in lines:
                hit = [u for u in found if u.start <= line <= u.end]
                if not hit or any(u.loose or not u.binds for u in hit):
                    return f"{path}:{line} changed outside any definition"
                for unit in hit:
                    names |= unit.binds
        return names

    def _module_units(
        self, path: str, changed: Mapping[str, tuple[str | None, str | None]]
    ) -> list[Unit] | None:
        return self._read("units", path, changed, module_units)

    def _test_file(
        self, path: str, changed: Mapping[str, tuple[str | None, str | None]]
    ) -> _TestFile:
        found = self._read(("tests", path), path, changed, lambda tree: _test_file(path, tree))
        # One that does not parse runs whole: pytest says why.
        return found or _TestFile(path, frozenset(), (), (), ())

    def _read(
        self,
        kind: Hashable,
        path: str,
        changed: Mapping[str, tuple[str | None, str | None]],
        make: Callable[[ast.Module], T],
    ) -> T | None:
        """``make`` of ``path``'s tree (its text now when it changed), kept
        by its text (:class:`~rein.testgate.parses.Parses`)."""
        text = changed[path][1] if path in changed else self._disk.get(path)
        if text is None:
            return None
        try:
            return self.parses.made(kind, text, lambda: make(self._parse(path, text)))
        except (SyntaxError, ValueError):
            return None

    def _parse(self, path: str, text: Text) -> ast.Module:
        try:
            return self.parses.tree(text)
        except (RecursionError, SystemError, MemoryError) as exc:
            raise _Unparsable(
                f"{path} could not be parsed here ({type(exc).__name__}: {exc})"
            ) from exc

    def _renamed(self) -> bool:
        for name in _CONFIGS:
            try:
                text = (self.root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if any(key in text for key in _RENAMES):
                return True
        return False


class _Unparsable(Exception):
    """A file the parser gave up on (too deep): the files run whole.
    Control flow inside this module, outside Rein's error tree."""


def _closure(
    names: Iterable[str], units: Sequence[tuple[str, Unit]]
) -> tuple[frozenset[str], list[str]]:
    """Every name reached from ``names``; why that cannot be followed (a
    ``conftest.py`` or a module-level statement naming a reached name: a
    fixture, a registry filled at import)."""
    reached = set(names)
    by_ref: dict[str, list[tuple[str, Unit]]] = {}
    for item in units:
        for ref in item[1].refs:
            by_ref.setdefault(ref, []).append(item)
    queue = list(reached)
    hooks: list[str] = []
    while queue:
        name = queue.pop()
        for path, unit in by_ref.get(name, ()):
            if path.rpartition("/")[2] == "conftest.py":
                hooks.append(f"{path} names {name} (a conftest.py hook or fixture)")
            elif unit.loose:
                hooks.append(
                    f"{path}:{unit.start} runs {name} at import (a module-level statement)"
                )
            for bound in unit.binds - reached:
                reached.add(bound)
                queue.append(bound)
    return frozenset(reached), hooks


def _test_name(name: str) -> bool:
    return name.startswith("test")


def _test_class(node: ast.ClassDef) -> bool:
    return node.name.startswith("Test") or bool(node.bases)


def _callable_refs(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """A test function's names, with its parameters (its fixtures)."""
    args = node.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    return names_in(node) | params


def _file_wide(node: ast.stmt) -> bool:
    """A module-level statement whose names every test of the file needs."""
    if is_def(node):
        return node.name in _FILE_HOOKS or any(
            isinstance(d, ast.Call) and any(k.arg == "autouse" for k in d.keywords)
            for d in node.decorator_list
        )
    if isinstance(node, ast.Assign | ast.AnnAssign):
        # A hook, or a test made by a call (``test_made = _make(3)``).
        return bool(bound_names(node) & _FILE_HOOKS) or any(map(_test_name, bound_names(node)))
    return not isinstance(node, ast.Import | ast.ImportFrom | ast.ClassDef)


def _class_refs(
    node: ast.ClassDef, classes: Mapping[str, ast.ClassDef], seen: set[str]
) -> frozenset[str]:
    """What a class's every test needs: its header, its non-test members,
    and all of its same-file bases (their tests run in it too)."""
    seen.add(node.name)
    found = set(names_in(*node.bases, *node.keywords, *node.decorator_list))
    for item in node.body:
        if not (is_def(item) and _test_name(item.name)):
            found |= names_in(item)
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
            found |= names_in(classes[base.id])
            found |= _class_refs(classes[base.id], classes, seen)
    return frozenset(found)


def _foreign_base(node: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> bool:
    """A base other than ``object``, a ``TestCase`` or a class of the file."""
    for base in node.bases:
        name = (
            base.id
            if isinstance(base, ast.Name)
            else base.attr
            if isinstance(base, ast.Attribute)
            else None
        )
        if name in ("object", "TestCase", "IsolatedAsyncioTestCase") or name in classes:
            continue
        return True
    return False


def _few(names: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
