"""The coverage index's models of texts (:mod:`rein.testgate.file_model`),
kept by each text's hash with the text itself, and what its functions'
statements are (:mod:`rein.testgate.statements`): which statements of a
function differ between a snapshot's text and another, by line.

A function's statements are read from its own lines, parsed alone (its
model has where it stands), not from the whole module's tree: the trees
kept (:mod:`rein.testgate.parses`) do not hold every snapshot's text of a
large module, and more-itertools's ``more.py`` (5,000 lines) took 47 ms a
parse, three or four times a verdict, for one function each."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from rein.testgate.file_model import FileModel, function_nodes, model_of
from rein.testgate.parses import Parses
from rein.testgate.snapshots import Spans
from rein.testgate.statements import Shape, changed_spans, shape_of

__all__ = ["Models"]


class Models:
    """Texts' models by hash, in the order they were made."""

    def __init__(self, parses: Parses) -> None:
        self.parses = parses
        self._models: dict[str, FileModel | None] = {}
        #: A model's text (by its hash), for its functions' statements.
        self._texts: dict[str, str] = {}
        #: (a text's hash, a function's qualified name) -> its statements.
        self._shapes: dict[tuple[str, str], Shape | None] = {}

    def __iter__(self) -> Iterator[str]:
        """The hashes of the texts kept, oldest first."""
        return iter(self._models)

    def model(self, text: str) -> FileModel | None:
        """``text``'s model (None: it does not parse), made once."""
        sha = self.parses.digest(text)
        if sha not in self._models:
            self._models[sha] = model_of(text, self.parses.tree)
            self._texts[sha] = text
        return self._models[sha]

    def spans(self, then: FileModel, now: FileModel, name: str) -> Spans | None:
        """The lines, in ``then``'s text, of the statements of function
        ``name`` that differ in ``now``; None when that cannot be told (the
        function is new or gone, its statements are not the same list,
        its compiled frame may differ: :func:`~rein.testgate.statements.changed_spans`)."""
        old, new = self._shape(then, name), self._shape(now, name)
        if old is None or new is None:
            return None
        return changed_spans(old, new) or None

    def keep(self, shas: set[str]) -> None:
        """Forget every text but those of ``shas``."""
        self._models = {k: v for k, v in self._models.items() if k in shas}
        self._texts = {k: v for k, v in self._texts.items() if k in shas}
        self._shapes = {k: v for k, v in self._shapes.items() if k[0] in shas}

    def _shape(self, model: FileModel, name: str) -> Shape | None:
        key = (model.sha, name)
        if key not in self._shapes:
            text = self._texts.get(model.sha)
            node = None
            if text is not None:
                node = function_alone(text, model, name)
                if node is None:  # the whole module's tree
                    node = function_nodes(self.parses.tree(text)).get(name)
            self._shapes[key] = None if node is None else shape_of(node)
        return self._shapes[key]


def function_alone(
    text: str, model: FileModel, name: str
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """Function ``name`` of ``text`` (whose model is ``model``) parsed from
    its own lines, at the lines and columns it has in ``text`` (the lines
    above it blank, an ``if 1:`` above an indented one); None when that
    cannot be done (no such function, a carriage return in the text, its
    lines do not parse alone): the caller parses the whole module."""
    span = next(((first, last) for first, last, unit in model.spans if unit == name), None)
    if span is None or "\r" in text:
        return None
    first, last = span
    lines = text.split("\n")
    own = lines[first - 1 : last]
    if not own:
        return None
    indented = own[0][:1] in (" ", "\t", "\f")
    if indented and first < 2:
        return None
    above = [""] * (first - 2) + ["if 1:"] if indented else [""] * (first - 1)
    try:
        tree = ast.parse("\n".join([*above, *own]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body
    if indented and body and isinstance(body[0], ast.If):
        body = body[0].body
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    node = body[0]
    if node.name != name.rpartition(".")[2].partition("#")[0]:
        return None
    return node
