"""A function's statements read from its own lines (:mod:`rein.testgate.models`)
are those of the whole module's tree, at the same lines; what cannot be
parsed alone is read from the whole tree."""

from __future__ import annotations

import ast
import asyncio
import inspect
import typing
from pathlib import Path

import pytest

from rein.testgate import coverage_index, statements
from rein.testgate.file_model import function_nodes, model_of
from rein.testgate.models import Models, function_alone
from rein.testgate.parses import Parses

#: Real modules: methods of nested classes, decorators over several
#: lines, overloads (``f#2``), async functions.
MODULES = [Path(m.__file__ or "") for m in (ast, inspect, typing, asyncio.tasks, statements)]

ODD = (
    "import os\n"
    "class A:\n"
    "    @property\n"
    "    def x(self):\n"
    '        return """\n'
    "a string whose lines\n"
    'stand left of the def"""\n'
    "\n"
    "    @x.setter\n"
    "    def x(self, value):  # x#2\n"
    "        self._x = value\n"
    "\n"
    "    class B:\n"
    "        def inner(self): return 1\n"
    "\n"
    "@(lambda f:\n"
    "  f)\n"
    "async def top(a,\n"
    "              b=1):\n"
    "    async with a as c:\n"
    "        return [c async for c in b]\n"
    "def last(): return os.sep\n"
    "class T:\n"
    "\tdef tabbed(self):\n"
    "\t\treturn 1"
)


def _same(text: str) -> int:
    """Every function of ``text``, alone and in the whole tree: the same
    shape (statement lines included); how many were read alone."""
    model = model_of(text)
    assert model is not None
    whole = function_nodes(ast.parse(text))
    alone = 0
    for name in model.functions:
        node = function_alone(text, model, name)
        if node is not None:
            alone += 1
            assert statements.shape_of(node) == statements.shape_of(whole[name]), name
            assert ast.dump(node) == ast.dump(whole[name]), name
    return alone


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_every_function_of_a_real_module_reads_alone_as_in_the_whole_tree(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    model = model_of(text)
    assert model is not None and len(model.functions) > 10
    assert _same(text) == len(model.functions)


def test_strings_left_of_the_def_tabs_overloads_decorators_and_async_read_alone() -> None:
    model = model_of(ODD)
    assert model is not None
    assert set(model.functions) == {"A.x", "A.x#2", "A.B.inner", "top", "last", "T.tabbed"}
    assert _same(ODD) == 6


def test_what_does_not_parse_alone_is_read_from_the_whole_tree() -> None:
    text = "def f(x):\r\n    return x\r\n"
    model = model_of(text)
    assert model is not None
    assert function_alone(text, model, "f") is None  # a carriage return: not cut
    assert function_alone(text, model, "g") is None  # no such function
    models = Models(Parses())
    then = models.model(text)
    now = models.model(text.replace("return x", "return x + 1"))
    assert then is not None and now is not None
    assert models.spans(then, now, "f") == ((2, 2),)
    assert models.parses.parsed == 2  # each text's whole tree


def test_a_function_of_a_text_whose_tree_is_gone_is_read_without_parsing_it_again() -> None:
    parses = Parses()
    models = Models(parses)
    lines = [f"def f{i}(x):\n    return x + {i}\n" for i in range(50)]
    then = models.model("".join(lines))
    now = models.model("".join(lines).replace("x + 7", "x - 7"))
    assert then is not None and now is not None
    parsed = parses.parsed
    parses._trees.clear()  # the trees kept are bounded: another text's pushed them out
    assert models.spans(then, now, "f7") == ((16, 16),)
    assert parses.parsed == parsed


def test_the_index_tells_a_large_modules_change_by_line_with_one_parse_per_text() -> None:
    parses = Parses()
    index = coverage_index.CoverageIndex(parses=parses)
    body = "".join(
        f"def f{i}(x):\n    if x:\n        return {i}\n    return -x\n\n" for i in range(400)
    )
    models = index._models
    then, now = models.model(body), models.model(body.replace("return 7\n", "return 70\n"))
    assert then is not None and now is not None
    assert parses.parsed == 2
    assert models.spans(then, now, "f7") == ((38, 38),)
    assert parses.parsed == 2
