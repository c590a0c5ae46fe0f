"""docs/architecture.md is drawn from the code: its layer table and diagram
list every package and top-level module of server/rein, the import graph
runs down the layers only and imports nothing the table does not list, its
table of contracts is pyproject.toml's, and the files, names and tests it
mentions exist (so do those of the pages the per-feature sections moved
to)."""

from __future__ import annotations

import importlib
import re
import tomllib
from functools import cache
from pathlib import Path

import grimp
import pytest

from tests.harness.test_docs import _defined_tests

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REIN = ROOT / "server" / "rein"
PAGE = DOCS / "architecture.md"
# The pages the long per-feature sections of architecture.md moved to.
MOVED_TO = ["gates.md", "run.md", "flows.md", "checkpoints.md", "mcp.md"]


def _text(name: str = "architecture.md") -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    level = heading.split(" ")[0]
    ends = [
        m.start()
        for m in re.finditer(r"^#{2,} ", text[start + len(heading) :], re.MULTILINE)
        if len(m.group(0).strip()) <= len(level)
    ]
    return text[start : start + len(heading) + ends[0]] if ends else text[start:]


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _name(token: str) -> str:
    """`acp/` and `cli.py` are the modules rein.acp and rein.cli."""
    return token.removesuffix("/").removesuffix(".py")


def _code_modules() -> set[str]:
    """Every package and top-level module of server/rein, as the page writes them."""
    packages = {f"{p.name}/" for p in REIN.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in REIN.glob("*.py") if p.name != "__init__.py"}
    return packages | modules


@cache
def _layer_table() -> dict[str, tuple[int, frozenset[str]]]:
    """package -> (layer, what it may import), from the table under ## Layers."""
    table: dict[str, tuple[int, frozenset[str]]] = {}
    for line in _section(_text(), "## Layers").splitlines():
        if not re.match(r"\| \d+ \| `", line):
            continue
        cells = _cells(line)
        assert len(cells) == 4, f"a row needs 4 cells: {line}"
        (package,) = _ticked(cells[1])
        assert package not in table, f"{package} has two rows"
        table[package] = (int(cells[0]), frozenset(_ticked(cells[3])))
    return table


def test_the_layer_table_lists_every_package_and_module_and_no_other() -> None:
    listed = set(_layer_table())
    code = _code_modules()
    assert code - listed == set(), "docs/architecture.md's layer table misses these"
    assert listed - code == set(), "docs/architecture.md's layer table names what is not there"


def test_the_diagram_draws_the_layers_of_the_table() -> None:
    layers = _section(_text(), "## Layers")
    diagram = layers[
        layers.index("```mermaid") : layers.index("```", layers.index("```mermaid") + 3)
    ]
    drawn: dict[int, set[str]] = {}
    for number, label in re.findall(r'L(\d+)\["\d+ [^:"]+: ([^"]+)"\]', diagram):
        drawn[int(number)] = set(label.split())
    tabled: dict[int, set[str]] = {}
    for package, (layer, _) in _layer_table().items():
        tabled.setdefault(layer, set()).add(package)
    assert drawn == tabled
    chain = re.findall(r"L(\d+)(?:\[[^\]]*\])? --> L(\d+)", diagram)
    assert [(int(a), int(b)) for a, b in chain] == [(n, n + 1) for n in range(1, max(tabled))]


@cache
def _package_imports() -> dict[str, set[str]]:
    """rein's import graph between its packages and top-level modules,
    TYPE_CHECKING imports counted (grimp's graph, which lint-imports uses)."""
    graph = grimp.build_graph("rein", include_external_packages=False)
    as_written = {_name(m): m for m in _code_modules()}
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        importer = module.split(".")[1] if "." in module else None
        for imported in graph.find_modules_directly_imported_by(module):
            target = imported.split(".")[1] if "." in imported else None
            if importer and target and importer != target:
                edges.setdefault(as_written[importer], set()).add(as_written[target])
    return edges


def test_every_import_runs_down_the_layers_and_is_in_the_table() -> None:
    table = _layer_table()
    wrong = []
    for importer, targets in sorted(_package_imports().items()):
        layer, may = table[importer]
        for target in sorted(targets):
            if table[target][0] <= layer:
                wrong.append(
                    f"{importer} (layer {layer}) imports {target} (layer {table[target][0]})"
                )
            if target not in may:
                wrong.append(f"{importer} imports {target}, which its row does not list")
    assert wrong == []


def test_what_a_row_may_import_is_below_it() -> None:
    table = _layer_table()
    for package, (layer, may) in table.items():
        for target in may:
            assert target in table, f"{package}'s row names {target}, which is not a row"
            assert table[target][0] > layer, f"{package}'s row lets it import {target} upward"


def _contracts() -> dict[str, dict[str, object]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["tool"]["importlinter"]["contracts"]}


def _page_contracts() -> dict[str, tuple[list[str], list[str]]]:
    rows: dict[str, tuple[list[str], list[str]]] = {}
    for line in _section(_text(), "### The contracts").splitlines():
        if line.startswith("| `"):
            cells = _cells(line)
            assert len(cells) == 3, f"a row needs 3 cells: {line}"
            (contract,) = _ticked(cells[0])
            rows[contract] = (_ticked(cells[1]), _ticked(cells[2]))
    return rows


def test_the_page_states_the_import_contracts_of_pyproject() -> None:
    contracts = _contracts()
    page = _page_contracts()
    assert set(page) == set(contracts)
    everything = {f"rein.{_name(m)}" for m in _code_modules()}
    for cid, contract in contracts.items():
        modules, rule = page[cid]
        kind = contract["type"]
        if kind == "forbidden":
            assert set(modules) == set(contract["source_modules"]), cid
            forbidden = set(contract["forbidden_modules"])
            if cid == "core":
                # "no other part of rein": the contract names each one.
                assert {m for m in forbidden if m.startswith("rein.")} == everything - set(modules)
                assert set(rule) == {m for m in forbidden if not m.startswith("rein.")}
            else:
                assert set(rule) == forbidden, cid
        elif kind == "protected":
            assert set(modules) == set(contract["protected_modules"]), cid
            assert set(rule) == set(contract["allowed_importers"]), cid
        elif kind == "independence":
            assert set(modules) == set(contract["modules"]), cid
            assert rule == [], cid
        else:
            pytest.fail(f"the test does not know the contract type {kind!r} ({cid})")
    named = re.findall(r"`(rein\.[\w.]+ -> rein\.[\w.]+)`", _section(_text(), "### The contracts"))
    ignored = [i for c in contracts.values() for i in c.get("ignore_imports", [])]
    assert sorted(named) == sorted(ignored), "the contracts' named exceptions"


def test_the_core_rows_are_the_contracts_core_and_wings() -> None:
    """The table calls harness/ the core and the contract's wings its wings."""
    contracts = _contracts()
    rows = {
        _cells(line)[1].strip("`"): _cells(line)[2]
        for line in _section(_text(), "## Layers").splitlines()
        if re.match(r"\| \d+ \| `", line)
    }
    wings = {f"{m.removeprefix('rein.')}/" for m in contracts["wings"]["forbidden_modules"]}
    assert {p for p, what in rows.items() if what.startswith("a wing of the core")} == wings
    assert {p for p, what in rows.items() if what.startswith("THE CORE")} == {
        f"{m.removeprefix('rein.')}/" for m in contracts["wings"]["source_modules"]
    }


def test_every_module_is_named() -> None:
    """Every module under server/rein is named by its path on the page: a
    top-level one in the layer table, one inside a package in its row under
    ## Modules (a new module gets its row; a moved one its new path)."""
    named = set(re.findall(r"`([\w/]+\.py)`", _text()))
    modules = sorted(
        p.relative_to(REIN).as_posix() for p in REIN.rglob("*.py") if p.name != "__init__.py"
    )
    assert len(modules) > 100
    missing = [m for m in modules if m not in named]
    assert missing == [], (
        "docs/architecture.md does not name these modules (a row under ## Modules: "
        "| `package/module.py` | what it holds |)"
    )


# --------------------------------------------------------------- mentions

_BASES = [ROOT, REIN, ROOT / "server", ROOT / "vscode-client", ROOT / "vscode-client" / "src"]
_PATH = re.compile(r"^[\w./-]*/[\w./*-]*$|^[\w./-]+\.(?:py|ts|md|toml|json|jsonl|yaml)$")


def _path_mentions(text: str) -> list[tuple[str, str | None]]:
    """(path, name) for each backticked file or folder path, `path:name(...)`
    giving the name."""
    found = []
    for token in re.findall(r"`([^`\s]+(?:\([^`]*\))?)`", text):
        path, _, rest = token.partition(":")
        if not _PATH.match(path) or not ("." in path.rsplit("/", 1)[-1] or path.endswith("/")):
            continue
        name = re.match(r"[A-Za-z_]\w*", rest)
        found.append((path, name.group(0) if name else None))
    return found


# Files of the person's project that the pages name, not files of Rein.
_THE_PERSONS = {
    ".cursor/rules/*.mdc",
    ".github/copilot-instructions.md",
    ".mcp.json",
    ".vscode/mcp.json",
    "mcp.json",
    # the tests gate's pages: a project's pytest conftest, configuration
    # (pytest 9's own files) and build folders
    "conftest.py",
    "pytest.toml",
    ".pytest.toml",
    "target/",
    "build/",
}


@cache
def _by_name() -> dict[str, Path]:
    """Rein's and the extension's files by their bare name (a page names a
    module of the package it is about by its name alone)."""
    files: dict[str, Path] = {}
    for base in (REIN, ROOT / "vscode-client" / "src", ROOT / "vscode-client" / "test"):
        for file in sorted(base.rglob("*")):
            files.setdefault(file.name, file)
    return files


def _resolve(path: str) -> Path | None:
    for base in _BASES:
        if (base / path).exists():
            return base / path
    return None if "/" in path else _by_name().get(path)


@pytest.mark.parametrize("page", ["architecture.md", *MOVED_TO])
def test_every_path_and_name_the_page_mentions_exists(page: str) -> None:
    mentions = _path_mentions(_text(page))
    assert len(mentions) >= 5 or page != "architecture.md"
    missing = []
    for path, name in mentions:
        if path in _THE_PERSONS:
            continue
        where = _resolve(path)
        if where is None:
            missing.append(path)
        elif name and not re.search(
            rf"^\s*(?:async def|def|class) {name}\b|^{name}\b\s*[:=]",
            where.read_text(encoding="utf-8"),
            re.MULTILINE,
        ):
            missing.append(f"{path}:{name}")
    assert missing == [], f"docs/{page} names what is not there"


@pytest.mark.parametrize("page", ["architecture.md", *MOVED_TO])
def test_every_test_the_page_names_exists(page: str) -> None:
    text = _text(page)
    missing = [
        f"{file}::{name}"
        for file, name in sorted(set(re.findall(r"`(tests/[\w/]+\.py)::([\w:]+)`", text)))
        if not (ROOT / file).is_file() or name not in _defined_tests(ROOT / file)
    ]
    missing += [
        file
        for file in sorted(set(re.findall(r"\btests/[\w/]+\.py\b", text)))
        if not (ROOT / file).is_file()
    ]
    test_files = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    missing += [
        file
        for file in sorted(set(re.findall(r"(?<![/\w])(test_\w+\.py)\b", text)))
        if file not in test_files
    ]
    assert missing == [], f"docs/{page} names tests that do not exist"


# ------------------------------------------------------------------ links


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {_anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_link_between_the_docs_finds_its_page_and_heading() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([\w./-]+\.md)?(?:#([\w-]+))?\)", text):
            if not target and not anchor:
                continue
            linked = (page.parent / target) if target else page
            if not linked.is_file():
                broken.append(f"{page.name}: {target}")
            elif anchor and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target}#{anchor}")
    assert broken == []


# Names of Python's or the MCP SDK's that the pages mention.
_FOREIGN_NAMES = {
    "CallToolResult",
    "ClientSession",
    "ConnectionError",
    "ConnectionRefusedError",
    "TimeoutError",
}


@cache
def _declared_names() -> set[str]:
    """Every class, function and attribute declared in server/rein or the extension."""
    names: set[str] = set()
    declared = re.compile(
        r"^\s*(?:export\s+)?(?:async def|def|class|interface|type|function)\s+(\w+)"
        r"|^\s*(?:export\s+)?(?:const\s+)?(\w+)\s*[:=]",
        re.MULTILINE,
    )
    for base, pattern in ((REIN, "*.py"), (ROOT / "vscode-client" / "src", "*.ts")):
        for file in base.rglob(pattern):
            for a, b in declared.findall(file.read_text(encoding="utf-8")):
                names.add(a or b)
    return names


@pytest.mark.parametrize("page", ["architecture.md", *MOVED_TO])
def test_every_class_name_the_page_mentions_is_declared(page: str) -> None:
    """A backticked CamelCase name (`FolderHost`, `RecordingWorkspace`) is a
    class (or a function, a type) that the code declares."""
    names = set(re.findall(r"`([A-Z][a-z0-9]+[A-Z]\w*)", _text(page)))
    assert names, f"docs/{page} names no class"
    assert names - _declared_names() - _FOREIGN_NAMES == set(), f"docs/{page}"


def test_the_ports_table_names_the_cores_protocols_and_real_implementations() -> None:
    text = _text()
    table = text[text.index("| port | what it does | implemented by |") :].split("\n\n")[0]
    rows = [_cells(line) for line in table.splitlines()[2:]]
    assert len(rows) >= 8
    for port, _, implemented in rows:
        # `Name`, in harness/ports.py; or `Name` (`harness/module.py`), in that module.
        named = re.fullmatch(r"`(\w+)`(?: \(`harness/(\w+)\.py`\))?", port)
        assert named is not None, f"the ports table's first cell {port!r}"
        name, where = named[1], named[2] or "ports"
        module = importlib.import_module(f"rein.harness.{where}")
        assert getattr(module, name, None) is not None, f"harness/{where}.py has no {name}"
        assert getattr(module, name)._is_protocol, f"{name} is not a Protocol"
        for dotted in re.findall(r"`((?:harness|disk|store|acp|providers)\.[\w.]+)`", implemented):
            module, _, attr = dotted.rpartition(".")
            try:
                found = importlib.import_module(f"rein.{dotted}")
            except ModuleNotFoundError:
                found = getattr(importlib.import_module(f"rein.{module}"), attr, None)
            assert found is not None, f"{name}: rein.{dotted} is not there"


def test_the_lsp_handler_modules_are_those_the_page_lists() -> None:
    text = _text()
    listed = text[text.index("one module per concern (") :].split(")", 1)[0]
    modules = {p.stem for p in (REIN / "lsp" / "handlers").glob("*.py") if p.name != "__init__.py"}
    assert set(re.findall(r"`(\w+)`", listed)) == modules
