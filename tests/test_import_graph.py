"""The import graph of server/rein: no circles, and a core that imports no
foreign protocol or storage library. (The layering itself is stated as
import-linter contracts in pyproject.toml and checked by ``lint-imports`` in
``make lint``; :func:`test_lint_imports_fails_when_the_core_imports_the_lsp_host`
shows they bite.)

The rule (what counts as an edge):

* every ``import rein...`` and ``from rein... import ...`` in a module counts,
  at module level and inside functions alike: a lazy import only moves the
  moment a dependency is paid, not its direction;
* imports under ``if TYPE_CHECKING:`` count too: they never run, but a
  circle closed by one is still two modules that cannot be read (or moved)
  apart;
* ``from rein.pkg import name`` is an edge to ``rein.pkg.name`` when that is a
  module, else to ``rein.pkg``; relative imports are resolved the same way;
* importing ``rein.a.b`` does not add an edge to the package ``rein.a``
  (Python runs ``rein/a/__init__.py`` first, but a package importing its own
  submodules is not a circle).
"""

from __future__ import annotations

import ast
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "server"
PYPROJECT = PACKAGE_ROOT.parent / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
FORBIDDEN_IN_CORE = ("pygls", "lsprotocol", "httpx", "sqlite3")
#: The core and its wings: the same rule holds for all of them.
CORE_PACKAGES = ("harness", "analysis", "checkpoints", "flows", "preview")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _modules() -> dict[str, Path]:
    """Every module of the package (read once per test process)."""
    return {_module_name(p): p for p in sorted((PACKAGE_ROOT / "rein").rglob("*.py"))}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The module at ``path``, parsed once per test process."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``node`` except the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _runtime_nodes(other)
            continue
        yield child
        yield from _runtime_nodes(child)


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import of a ``rein`` module, those
    under ``if TYPE_CHECKING:`` included."""
    tree = _tree(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "rein" or alias.name.startswith("rein."):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "rein" and not target.startswith("rein."):
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield (submodule if submodule in modules else target), node.lineno


def _foreign_imports(path: Path) -> Iterator[tuple[str, int]]:
    tree = _tree(path)
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0], node.lineno


@functools.cache
def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first such import} (built
    once per test process; the tests only read it)."""
    modules = _modules()
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges: dict[str, int] = {}
        for target, line in _imports(name, path, modules):
            if target != name and target in modules:
                edges[target] = min(line, edges.get(target, line))
        graph[name] = edges
    return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def _describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    edges = [
        f"  {source} -> {target} (line {line})"
        for source in component
        for target, line in sorted(graph[source].items())
        if target in members
    ]
    return "\n".join([" <-> ".join(component), *edges])


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "rein.harness.run.loop" in graph
    assert "rein.harness.calls.tool_calls" in graph["rein.harness.run.loop"]
    assert "rein.harness" in graph["rein.hosting.headless"]


def test_the_cycle_finder_finds_a_circle_and_nothing_else() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 1}, "e": {}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b": 1}, "b": {}}) == []


def test_there_is_no_import_circle_in_rein() -> None:
    graph = import_graph()
    cycles = find_cycles(graph)
    assert cycles == [], "import circles:\n" + "\n\n".join(_describe(c, graph) for c in cycles)


def test_an_import_under_type_checking_is_an_edge(tmp_path: Path) -> None:
    source = tmp_path / "b.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from rein.a import A\n"
    )
    modules = {"rein.a": tmp_path / "a.py", "rein.b": source}
    assert list(_imports("rein.b", source, modules)) == [("rein.a", 4)]


@pytest.mark.parametrize(
    "module",
    [
        pytest.param(name, id=name)
        for name in _modules()
        if name.split(".")[:2] in (["rein", pkg] for pkg in CORE_PACKAGES)
    ],
)
def test_the_core_imports_no_protocol_network_or_storage_library(module: str) -> None:
    found = [
        f"{top} (line {line})"
        for top, line in _foreign_imports(_modules()[module])
        if top in FORBIDDEN_IN_CORE
    ]
    assert not found, f"{module} imports " + ", ".join(found)


def test_no_private_class_name_is_defined_in_two_modules() -> None:
    """Two private classes of one name (two ``_Run``s) read as one thing."""
    where: dict[str, list[str]] = {}
    for name, path in _modules().items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef) and node.name.startswith("_"):
                where.setdefault(node.name, []).append(name)
    twice = {cls: modules for cls, modules in where.items() if len(modules) > 1}
    assert not twice, f"private classes defined in several modules: {twice}"


def _lint_imports(package_root: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the contracts of pyproject.toml over the ``rein``
    package found in ``package_root``."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(PYPROJECT)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(package_root)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_lint_imports_keeps_every_contract(tmp_path: Path) -> None:
    done = _lint_imports(PACKAGE_ROOT, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    "probe",
    [
        pytest.param("import rein.lsp\n", id="at-module-level"),
        pytest.param(
            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from rein.lsp import server\n",
            id="under-type-checking",
        ),
        pytest.param("def f() -> None:\n    from rein.lsp import features\n", id="in-a-function"),
    ],
)
def test_lint_imports_fails_when_the_core_imports_the_lsp_host(tmp_path: Path, probe: str) -> None:
    """A copy of the package whose core imports ``rein.lsp`` breaks the core
    contract (and the hosts' one, and the wings' one: the LSP host imports
    the core's wings): the contracts are checked, not only written down."""
    copy = tmp_path / "server"
    shutil.copytree(
        PACKAGE_ROOT / "rein", copy / "rein", ignore=shutil.ignore_patterns("__pycache__")
    )
    (copy / "rein" / "harness" / "_probe.py").write_text(probe, encoding="utf-8")
    done = _lint_imports(copy, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 broken" in done.stdout, done.stdout
    assert "rein.harness._probe -> rein.lsp" in done.stdout, done.stdout
