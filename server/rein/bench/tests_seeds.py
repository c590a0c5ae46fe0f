"""The behaviour bugs ``rein bench tests --corpus`` seeds: one small change
of one real line of a project's module that no analyzer sees.

Each candidate is found in the module's syntax tree, on a node that starts
and ends on one line, and is written back as that line with the node's
source text replaced by its mutated form (the rest of the line as it was):

- ``off-by-one``: ``<`` ↔ ``<=``, ``>`` ↔ ``>=``, an integer ``+ 1`` / ``- 1``
  becomes ``+ 2`` / ``- 2``;
- ``inverted-condition``: ``==`` ↔ ``!=``, ``is`` ↔ ``is not``, ``in`` ↔
  ``not in``, ``not x`` becomes ``x``;
- ``swapped-argument``: the first two positional arguments of a call swap
  (when they read differently);
- ``wrong-default``: a parameter's default ``True`` ↔ ``False``, an integer
  ``n`` becomes ``n + 1``.

:func:`choose` orders the candidates with a seeded random generator, so a
seed number always gives the same edits. :func:`no_op` is the edit that
breaks nothing (a comment after the last line); :func:`extra_tests` the
test file with a pre-existing failure and a flaky test.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "KINDS",
    "Mutation",
    "apply",
    "candidates",
    "choose",
    "enclosing",
    "extra_tests",
    "mutations_in",
    "no_op",
]

KINDS = ("off-by-one", "inverted-condition", "swapped-argument", "wrong-default")

_FLIP: dict[type[ast.cmpop], tuple[type[ast.cmpop], str]] = {
    ast.Lt: (ast.LtE, "off-by-one"),
    ast.LtE: (ast.Lt, "off-by-one"),
    ast.Gt: (ast.GtE, "off-by-one"),
    ast.GtE: (ast.Gt, "off-by-one"),
    ast.Eq: (ast.NotEq, "inverted-condition"),
    ast.NotEq: (ast.Eq, "inverted-condition"),
    ast.Is: (ast.IsNot, "inverted-condition"),
    ast.IsNot: (ast.Is, "inverted-condition"),
    ast.In: (ast.NotIn, "inverted-condition"),
    ast.NotIn: (ast.In, "inverted-condition"),
}


@dataclass(frozen=True, slots=True)
class Mutation:
    """One seeded edit: line ``line`` (1-based) of ``path`` reads ``after``
    instead of ``before``."""

    path: str
    line: int
    kind: str
    before: str
    after: str

    @property
    def key(self) -> str:
        """Stable across runs: the truth cache's key."""
        return f"{self.path}:{self.line}:{self.kind}:{self.after.strip()}"


def _one_line(node: ast.AST) -> bool:
    # Expressions and statements have positions; other nodes (operators) do not.
    return isinstance(node, ast.expr | ast.stmt) and node.lineno == node.end_lineno


def _mutants(node: ast.AST) -> Iterator[tuple[str, ast.AST, ast.AST]]:
    """(kind, the node to replace, its replacement) for every mutation of ``node``."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        flip = _FLIP.get(type(node.ops[0]))
        if flip is not None:
            compare = copy.deepcopy(node)
            compare.ops = [flip[0]()]
            yield flip[1], node, compare
    elif (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
        and type(node.right.value) is int
    ):
        binop = copy.deepcopy(node)
        binop.right = ast.Constant(2)
        yield "off-by-one", node, binop
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "inverted-condition", node, node.operand
    elif isinstance(node, ast.Call) and len(node.args) >= 2:
        first, second = node.args[0], node.args[1]
        if not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            if ast.unparse(first) != ast.unparse(second):
                call = copy.deepcopy(node)
                call.args[0], call.args[1] = call.args[1], call.args[0]
                yield "swapped-argument", node, call


def _defaults(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
) -> Iterator[tuple[str, ast.AST, ast.AST]]:
    for default in [*func.args.defaults, *(d for d in func.args.kw_defaults if d is not None)]:
        if not isinstance(default, ast.Constant):
            continue
        value = default.value
        if isinstance(value, bool):
            yield "wrong-default", default, ast.Constant(not value)
        elif type(value) is int:
            yield "wrong-default", default, ast.Constant(value + 1)


def mutations_in(path: str, text: str) -> list[Mutation]:
    """Every candidate mutation of the module ``text`` (at ``path``), in
    source order; a module that does not parse has none."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    lines = text.splitlines(keepends=True)
    found: list[Mutation] = []
    seen: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        pairs = list(_mutants(node))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            pairs += list(_defaults(node))
        for kind, old, new in pairs:
            if not _one_line(old):
                continue
            mutation = _replace(path, lines, kind, old, new)
            if mutation is not None and (mutation.line, mutation.after) not in seen:
                seen.add((mutation.line, mutation.after))
                found.append(mutation)
    found.sort(key=lambda m: (m.line, m.kind, m.after))
    return found


def _replace(
    path: str, lines: Sequence[str], kind: str, old: ast.AST, new: ast.AST
) -> Mutation | None:
    number: int = old.lineno  # type: ignore[attr-defined]
    line = lines[number - 1]
    # Columns are UTF-8 byte offsets.
    raw = line.encode("utf-8")
    start: int = old.col_offset  # type: ignore[attr-defined]
    end: int = old.end_col_offset  # type: ignore[attr-defined]
    segment = raw[start:end].decode("utf-8")
    replacement = ast.unparse(new)
    if isinstance(old, ast.Compare | ast.BinOp) and segment.startswith("("):
        replacement = f"({replacement})"
    if replacement == segment:
        return None
    after = (raw[:start] + replacement.encode("utf-8") + raw[end:]).decode("utf-8")
    candidate = "".join([*lines[: number - 1], after, *lines[number:]])
    try:
        ast.parse(candidate)
    except SyntaxError:
        return None
    return Mutation(path, number, kind, line, after)


def apply(text: str, mutation: Mutation) -> str:
    """``text`` with the mutation's line replaced (it must still read ``before``)."""
    lines = text.splitlines(keepends=True)
    if lines[mutation.line - 1] != mutation.before:
        raise ValueError(f"{mutation.path}:{mutation.line} no longer reads {mutation.before!r}")
    lines[mutation.line - 1] = mutation.after
    return "".join(lines)


def candidates(root: Path, modules: Sequence[str]) -> list[Mutation]:
    """Every candidate in the ``modules`` (paths relative to ``root``)."""
    found: list[Mutation] = []
    for path in sorted(modules):
        text = (root / path).read_text(encoding="utf-8")
        found += mutations_in(path, text)
    return found


def choose(found: Sequence[Mutation], seed: int) -> list[Mutation]:
    """All of ``found`` in a seeded order, the kinds taking turns so each
    is seeded about as often (the same ``seed``: the same order)."""
    rng = random.Random(seed)
    by_kind = {kind: [m for m in found if m.kind == kind] for kind in KINDS}
    for group in by_kind.values():
        rng.shuffle(group)
    out: list[Mutation] = []
    while any(by_kind.values()):
        for kind in KINDS:
            if by_kind[kind]:
                out.append(by_kind[kind].pop())
    return out


# ------------------------------------------- the edits around the seeds


def no_op(root: Path, path: str) -> Mutation:
    """A comment added after the module's last line: no test may break."""
    lines = (root / path).read_text(encoding="utf-8").splitlines(keepends=True)
    last = lines[-1] if lines else ""
    after = last + ("" if last.endswith("\n") or not last else "\n") + "# rein bench: no change\n"
    return Mutation(path, max(len(lines), 1), "no-op", last, after)


def enclosing(text: str, line: int) -> str:
    """The dotted name of the definition holding ``line`` (a top-level
    function or class, or a class's method), "" when none does."""
    for node in ast.parse(text).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    if item.lineno <= line <= (item.end_lineno or item.lineno):
                        if item.name.startswith("__") and item.name.endswith("__"):
                            return node.name
                        return f"{node.name}.{item.name}"
        return node.name
    return ""


def extra_tests(module: str, marker: Path, uses: str = "") -> str:
    """A test that fails before any run, and one that fails only the first
    time it runs (``marker``, outside the workspace and its shadows, says
    it ran); both use ``uses`` (a dotted name in ``module``, the seeded
    definition), so a per-test selection keeps them."""
    use = f"    assert {module}.{uses}\n" if uses else ""
    return (
        "import pathlib\n\n"
        f"import {module}  # noqa: F401\n\n\n"
        "def test_rein_bench_pre_existing():\n"
        f"{use}"
        "    assert 1 == 2, 'failing before the run'\n\n\n"
        "def test_rein_bench_flaky():\n"
        f"{use}"
        f"    marker = pathlib.Path({str(marker)!r})\n"
        "    if not marker.exists():\n"
        "        marker.write_text('ran')\n"
        "        raise AssertionError('fails the first time only')\n"
    )
