"""Each module text the tests gate reads, parsed once: its syntax tree
shared by the per-test choice's readers within a verdict (the narrowing,
:mod:`rein.testgate.narrow`, and the coverage index's models,
:mod:`rein.testgate.coverage_index`, each parsed the same changed module
again), and what each made of it kept between verdicts (the text before
the run, a module no edit touched: the same at every verdict).

Everything is keyed by the text itself, never by a path, a stamp or a
hash of it: a changed text is a new key, so nothing made of an earlier
text is ever used for it. Bounded: the newest trees up to
:data:`MAX_TREE_CHARS` of text (a tree takes about 30 bytes a
character), the newest :data:`MAX_PRODUCTS` products, and the newest
:data:`MAX_DIGESTS` content hashes. Used from the parse thread only
(:mod:`rein.harness.parse_thread`)."""

from __future__ import annotations

import ast
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

from rein.testgate.file_model import digest

__all__ = ["MAX_PRODUCTS", "MAX_TREE_CHARS", "Parses", "Text"]

#: The trees kept: at most this many characters of their texts (~30 MB).
MAX_TREE_CHARS = 1_000_000
#: Products (a model, a module's units) kept, the oldest used going first.
MAX_PRODUCTS = 2_048
#: Content hashes kept (the coverage index hashes each file of each
#: snapshot at every verdict).
MAX_DIGESTS = 2_048

#: A module's text: as read (``str``), or its bytes when they do not
#: decode as UTF-8 plainly (a coding cookie, a BOM: parsed as bytes).
Text = str | bytes
T = TypeVar("T")


class Parses:
    """The trees and products of the texts read (see the module docstring);
    ``enabled=False`` keeps nothing (every call parses and makes anew:
    the tests compare both)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._trees: OrderedDict[Text, ast.Module | Exception] = OrderedDict()
        self._tree_chars = 0
        self._made: OrderedDict[tuple[Hashable, Text], object] = OrderedDict()
        self._digests: OrderedDict[str, str] = OrderedDict()
        #: Parses done (not answered from the kept trees), for the tests.
        self.parsed = 0

    def tree(self, text: Text) -> ast.Module:
        """``text``'s tree (``ast.parse``'s), raising what it raised. The
        tree is shared: a reader may change it only to put it back before
        returning (:func:`~rein.testgate.file_model.model_of`)."""
        kept = self._trees.get(text) if self.enabled else None
        if kept is None:
            self.parsed += 1
            try:
                kept = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, SystemError, MemoryError) as exc:
                kept = exc
            self._keep_tree(text, kept)
        else:
            self._trees.move_to_end(text)
        if isinstance(kept, Exception):
            raise kept.with_traceback(None)
        return kept

    def made(self, kind: Hashable, text: Text, make: Callable[[], T]) -> T:
        """``make()`` (what ``kind`` makes of ``text``'s tree), kept by
        ``kind`` and the text. What ``make`` raises is not kept."""
        key = (kind, text)
        if self.enabled and key in self._made:
            self._made.move_to_end(key)
            return self._made[key]  # type: ignore[return-value]
        value = make()
        if self.enabled:
            self._made[key] = value
            while len(self._made) > MAX_PRODUCTS:
                self._made.popitem(last=False)
        return value

    def digest(self, text: str) -> str:
        """``text``'s content hash (:func:`~rein.testgate.file_model.digest`)."""
        if not self.enabled:
            return digest(text)
        sha = self._digests.get(text)
        if sha is None:
            sha = self._digests[text] = digest(text)
            while len(self._digests) > MAX_DIGESTS:
                self._digests.popitem(last=False)
        else:
            self._digests.move_to_end(text)
        return sha

    def _keep_tree(self, text: Text, tree: ast.Module | Exception) -> None:
        if not self.enabled or len(text) > MAX_TREE_CHARS:
            return
        self._trees[text] = tree
        self._tree_chars += len(text)
        while self._tree_chars > MAX_TREE_CHARS:
            old, _ = self._trees.popitem(last=False)
            self._tree_chars -= len(old)


def as_text(data: bytes) -> Text:
    """A file's bytes as the key they are parsed by: the decoded text when
    that parses the same (UTF-8 without a BOM or a coding cookie), else
    the bytes (``ast.parse`` reads their declared encoding)."""
    head = b"\n".join(data.split(b"\n", 2)[:2])
    if data.startswith(b"\xef\xbb\xbf") or b"coding" in head:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
