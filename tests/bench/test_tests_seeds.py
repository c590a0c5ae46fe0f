"""The seeded behaviour bugs of ``rein bench tests --corpus``."""

from __future__ import annotations

import pytest

from rein.bench.tests_seeds import Mutation, apply, choose, mutations_in

SNIPPET = """def f(xs, n=1, flag=True):
    if len(xs) < n and not flag:
        return g(xs, n)
    return xs[n + 1] == 0
"""


def test_each_kind_of_mutation_rewrites_one_line_and_keeps_the_rest() -> None:
    found = [(m.line, m.kind, m.after) for m in mutations_in("snip.py", SNIPPET)]
    assert found == [
        (1, "wrong-default", "def f(xs, n=1, flag=False):\n"),
        (1, "wrong-default", "def f(xs, n=2, flag=True):\n"),
        (2, "inverted-condition", "    if len(xs) < n and flag:\n"),
        (2, "off-by-one", "    if len(xs) <= n and not flag:\n"),
        (3, "swapped-argument", "        return g(n, xs)\n"),
        (4, "inverted-condition", "    return xs[n + 1] != 0\n"),
        (4, "off-by-one", "    return xs[n + 2] == 0\n"),
    ]


def test_apply_writes_the_mutated_line_and_refuses_a_changed_file() -> None:
    swap = next(m for m in mutations_in("snip.py", SNIPPET) if m.kind == "swapped-argument")
    assert apply(SNIPPET, swap) == SNIPPET.replace("g(xs, n)", "g(n, xs)")
    with pytest.raises(ValueError):
        apply(SNIPPET.replace("g(xs, n)", "h(xs, n)"), swap)


def test_a_seed_number_always_gives_the_same_edits_with_the_kinds_taking_turns() -> None:
    found = mutations_in("snip.py", SNIPPET)
    first = choose(found, 7)
    assert [m.key for m in first] == [m.key for m in choose(found, 7)]
    assert sorted(m.key for m in first) == sorted(m.key for m in found)
    assert [m.kind for m in first[:3]] == ["off-by-one", "inverted-condition", "swapped-argument"]


def test_a_mutation_that_would_not_parse_or_changes_nothing_is_not_offered() -> None:
    assert mutations_in("bad.py", "def f(:\n") == []
    assert all(isinstance(m, Mutation) for m in mutations_in("x.py", "x = (a < b)\n"))
    assert [m.after for m in mutations_in("x.py", "x = (a < b)\n")] == ["x = (a <= b)\n"]
