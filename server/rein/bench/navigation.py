"""``rein bench navigation --corpus``: ``find_references`` against
``grep -w`` on real projects.

For each project (pinned source distributions from PyPI, unpacked once into
the corpus cache as for ``rein bench gates --corpus``: :mod:`rein.bench.corpus`;
a TypeScript package from npm, rxjs, ``npm pack``-ed into the same cache) the
analyzer pool starts its language server (basedpyright, or
typescript-language-server), a sample of the project's definitions
(functions, classes, methods; seeded) is drawn, and for each one the
navigation tools' own path answers: the pool navigator's references with
import aliases followed (:func:`rein.tools.navigation.follow_aliases`), and
the text the model would read (:func:`rein.tools.nav_text.format_locations`).
``grep -rnw NAME`` over the same files is compared line by line:

* references: lines the server names;
* grep's false positives: lines grep matches that hold no reference (the
  same word for another thing, a comment, a string);
* grep's misses: lines with a reference grep does not match (a use under
  an import alias, or a name grep's word rule cannot see).

Times are per query (p50/p95, the first query's wait for indexing apart).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import random
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rein.bench.corpus import Project, corpus_cache, fetch
from rein.bench.table import print_columns
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec, find_executable, spec_of
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.analyzer_servers import PRESETS
from rein.harness.navigation_ports import NavigationUnavailable, Position
from rein.harness.run.run_record import RunRecord
from rein.harness.tools import ToolContext, ToolEnvironment
from rein.tools.nav_text import format_locations, utf16_column
from rein.tools.navigation import LineTexts, follow_aliases

__all__ = [
    "COLUMNS",
    "PYTHON_PROJECTS",
    "TYPESCRIPT_PACKAGE",
    "bench_navigation",
    "main_navigation",
    "unpack",
]

#: The longest one grep of the corpus may take.
GREP_TIMEOUT_S = 300.0
#: The longest downloading the TypeScript corpus (npm pack) may take.
NPM_TIMEOUT_S = 600.0

PYTHON_PROJECTS = (
    Project("sympy", "1.13.3", "sympy", 0),
    Project("click", "8.1.7", "src/click", 0),
)
#: An npm package that ships its TypeScript sources (src/, 251 files) and
#: tsconfig.json; its compiled output (:data:`BUILD_OUTPUT`) is left out.
TYPESCRIPT_PACKAGE = ("rxjs", "7.8.1")
#: The TypeScript package's compiled output (.js and .d.ts): not the
#: project's sources, and grep would count its declarations.
BUILD_OUTPUT = "dist"
SAMPLE = 200
#: The first query may wait this long for the server to index the project.
INDEX_WAIT_S = 600.0
_TS_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function|class|interface|const|let)\s+"
    r"([A-Za-z_$][\w$]*)|^\s+(?:public\s+|private\s+|protected\s+|static\s+|async\s+)*"
    r"([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*[:{]"
)


@dataclass(frozen=True, slots=True)
class Symbol:
    path: str
    line: int  # 0-based
    column: int  # character index
    name: str


def _python_symbols(root: Path, package: str) -> list[Symbol]:
    found: list[Symbol] = []
    for file in sorted((root / package).rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name.startswith("__") or len(node.name) < 2:
                    continue
                source = lines[node.lineno - 1]
                keyword = "class" if isinstance(node, ast.ClassDef) else "def"
                index = source.find(node.name, source.find(keyword) + len(keyword))
                if index >= 0:
                    found.append(Symbol(rel, node.lineno - 1, index, node.name))
    return found


def _typescript_symbols(root: Path) -> list[Symbol]:
    found: list[Symbol] = []
    for file in sorted(root.rglob("*.ts")):
        if "node_modules" in file.parts or file.name.endswith(".d.ts"):
            continue
        rel = file.relative_to(root).as_posix()
        for number, line in enumerate(file.read_text(errors="replace").splitlines()):
            match = _TS_DEF.match(line)
            if match is None:
                continue
            name = match.group(1) or match.group(2)
            if name in ("if", "for", "while", "switch", "catch", "function", "constructor"):
                continue
            found.append(Symbol(rel, number, line.index(name, match.start()), name))
    return found


def _grep(root: Path, name: str, include: str) -> set[tuple[str, int]]:
    out = subprocess.run(
        ["grep", "-rnw", f"--include={include}", "--exclude-dir=node_modules", "--", name, "."],
        cwd=root,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=GREP_TIMEOUT_S,
    )
    lines: set[tuple[str, int]] = set()
    for row in out.stdout.splitlines():
        path, _, rest = row.partition(":")
        number, _, _ = rest.partition(":")
        if number.isdigit():
            lines.add((path.removeprefix("./"), int(number)))
    return lines


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _context(root: Path, navigator: PoolNavigator) -> ToolContext:
    env = ToolEnvironment(workspace=DiskWorkspace(root), navigator=navigator)
    return ToolContext("bench", "find_references", env, lambda *_: None, lambda: False, RunRecord())


async def _measure(
    label: str, root: Path, spec: AnalyzerSpec, symbols: list[Symbol], include: str
) -> dict[str, Any]:
    pool = AnalyzerPool(root, [spec], request_timeout_ms=120_000)
    async with pool:
        navigator = PoolNavigator(pool, index_wait_s=INDEX_WAIT_S)
        ctx = _context(root, navigator)
        times: list[float] = []
        sizes: list[int] = []
        refs = grep_total = false_pos = misses = alias_found = failed = 0
        started = time.monotonic()
        first_s = 0.0
        for number, symbol in enumerate(symbols):
            line_text = (root / symbol.path).read_text(errors="replace").splitlines()[symbol.line]
            position = Position(symbol.line, utf16_column(line_text, symbol.column))
            t0 = time.monotonic()
            try:
                answer = await navigator.references(symbol.path, position)
                found, notes = await follow_aliases(navigator, LineTexts(ctx), answer)
            except NavigationUnavailable:
                failed += 1
                continue
            header = f"{len(found)} references to `{symbol.name}`:"
            text = format_locations(header, found, trailer="; ".join(notes) or None)
            elapsed = time.monotonic() - t0
            if number == 0:
                first_s = elapsed
            else:
                times.append(elapsed)
            sizes.append(len(text))
            server = {(f.location.path, f.location.range.start.line + 1) for f in found}
            # The files grep searches (not a library's stub, not compiled .js).
            suffix = include.removeprefix("*")
            server = {(p, n) for p, n in server if not p.startswith("/") and p.endswith(suffix)}
            alias_found += sum(1 for f in found if f.note)
            grep = _grep(root, symbol.name, include)
            refs += len(server)
            grep_total += len(grep)
            false_pos += len(grep - server)
            misses += len(server - grep)
        total_s = time.monotonic() - started
    asked = len(symbols) - failed
    return {
        "project": label,
        "symbols": asked,
        "failed": failed,
        "reference lines": refs,
        "via an alias": alias_found,
        "grep -w lines": grep_total,
        "grep false positives": f"{false_pos} ({100 * false_pos / max(grep_total, 1):.0f}%)",
        "grep misses": f"{misses} ({100 * misses / max(refs, 1):.1f}%)",
        "first query s": round(first_s, 1),
        "p50 ms": round(_percentile(times, 0.5) * 1000),
        "p95 ms": round(_percentile(times, 0.95) * 1000),
        "output chars p50": round(_percentile([float(s) for s in sizes], 0.5)),
        "output chars p95": round(_percentile([float(s) for s in sizes], 0.95)),
        "total s": round(total_s, 1),
    }


def unpack(archive: Path, into: Path) -> None:
    """Unpack a downloaded archive with tarfile's "data" filter: a member
    with an absolute path, a ``..``, a link out of ``into`` or a device is
    refused (``tarfile.FilterError``)."""
    shutil.unpack_archive(archive, into, filter="data")


def _typescript_source() -> Path:
    name, version = TYPESCRIPT_PACKAGE
    target = corpus_cache() / f"npm-{name}-{version}"
    if (target / ".rein-corpus-complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        subprocess.run(
            ["npm", "pack", f"{name}@{version}", "--pack-destination", tmp, "--silent"],
            check=True,
            capture_output=True,
            timeout=NPM_TIMEOUT_S,
        )
        (archive,) = Path(tmp).glob("*.tgz")
        unpacked = Path(tmp) / "unpacked"
        unpack(archive, unpacked)
        (entry,) = unpacked.iterdir()
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(entry), str(target))
    (target / ".rein-corpus-complete").write_text(f"{name}@{version}\n")
    return target


async def bench_navigation(
    sample: int = SAMPLE, seed: int = 0, only: frozenset[str] | None = None
) -> list[dict[str, Any]]:
    """One row per project (a project whose server is not installed is a
    row that says so); ``only``: the projects of these names."""
    rows: list[dict[str, Any]] = []
    basedpyright = next(s for s in DEFAULT_ANALYZERS if s.name == "basedpyright")
    name, version = TYPESCRIPT_PACKAGE
    known = {p.name for p in PYTHON_PROJECTS} | {name}
    if only is not None and not only <= known:
        unknown = ", ".join(sorted(only - known))
        raise SystemExit(
            f"--projects: unknown {unknown} (the projects: {', '.join(sorted(known))})"
        )
    with tempfile.TemporaryDirectory(prefix="rein-bench-nav-") as tmp:
        for project in PYTHON_PROJECTS:
            if only is not None and project.name not in only:
                continue
            root = Path(tmp) / project.name
            shutil.copytree(fetch(project), root)
            symbols = _python_symbols(root, project.package)
            random.Random(seed).shuffle(symbols)
            label = f"{project.name} {project.version} (basedpyright)"
            rows.append(await _measure(label, root, basedpyright, symbols[:sample], "*.py"))
        preset = next(p for p in PRESETS if p.name == "typescript")
        ts_spec = spec_of(preset)
        label = f"{name} {version} (typescript-language-server)"
        if only is not None and name not in only:
            pass
        elif find_executable(ts_spec.command[0]) is None:
            rows.append({"project": label, "symbols": 0, "failed": "server not installed"})
        else:
            root = Path(tmp) / name
            source = _typescript_source()
            shutil.copytree(
                source, root, ignore=lambda d, _: [BUILD_OUTPUT] if d == str(source) else []
            )
            symbols = _typescript_symbols(root)
            random.Random(seed).shuffle(symbols)
            rows.append(await _measure(label, root, ts_spec, symbols[:sample], "*.ts"))
    return rows


COLUMNS = [
    ("project", "project"),
    ("symbols", "symbols"),
    ("failed", "failed"),
    ("refs", "reference lines"),
    ("via alias", "via an alias"),
    ("grep", "grep -w lines"),
    ("grep FP", "grep false positives"),
    ("grep misses", "grep misses"),
    ("1st s", "first query s"),
    ("p50 ms", "p50 ms"),
    ("p95 ms", "p95 ms"),
    ("out p50", "output chars p50"),
    ("out p95", "output chars p95"),
    ("total s", "total s"),
]


def main_navigation(args: argparse.Namespace) -> int:
    """``rein bench navigation --corpus [N] [--projects sympy,click,rxjs]``:
    N sampled definitions per project (default 200)."""
    sample = int(args.n) if args.n else SAMPLE
    only = (
        frozenset(p.partition("==")[0].strip() for p in args.projects.split(","))
        if args.projects
        else None
    )
    rows = asyncio.run(bench_navigation(sample, only=only))
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print(f"navigation: find_references vs grep -w, up to {sample} definitions per project")
        print_columns(COLUMNS, rows)
    return 0
