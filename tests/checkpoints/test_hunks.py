"""Hunks of a reviewed file and where a hunk is in the text now
(rein.checkpoints.hunks): undoing every hunk, in any order, gives the before
text back; keeping them all leaves the after text; a region the person
changed is not found."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rein.checkpoints.hunks import (
    apply_regions,
    compute_hunks,
    expected_lines,
    hunk_offsets,
    lines_of,
    locate,
    unified_diff,
)

# A small alphabet, so texts repeat lines (the hard case for a line diff).
LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "d", "x = 1\n"]), max_size=12)


def _undo_in_order(
    before: list[str], after: list[str], order: list[int], typed: list[str] | None = None
) -> list[str]:
    """Undo the hunks one at a time, each on the text the previous undo
    left, as the reviewer does; ``typed``: lines the person added at the top
    before the first undo."""
    hunks = compute_hunks(before, after)
    current = [*(typed or []), *after]
    undone: list[int] = []
    for index in order:
        expected = expected_lines(after, hunks, undone)
        assert typed or expected == current
        region = locate(expected, current, hunk_offsets(hunks, undone)[index])
        assert region is not None
        current = apply_regions(current, [(region, hunks[index].before)])
        undone.append(index)
    return current


@settings(max_examples=300, deadline=None)
@given(before=LINES, after=LINES, data=st.data())
def test_undoing_every_hunk_in_any_order_gives_the_before_text(
    before: list[str], after: list[str], data: st.DataObject
) -> None:
    hunks = compute_hunks(before, after)
    order = data.draw(st.permutations(range(len(hunks))))
    assert "".join(_undo_in_order(before, after, list(order))) == "".join(before)


@settings(max_examples=200, deadline=None)
@given(before=LINES, after=LINES, data=st.data())
def test_undoing_every_hunk_below_lines_the_person_added_keeps_theirs(
    before: list[str], after: list[str], data: st.DataObject
) -> None:
    # A first line the agent left alone: the person's note is not typed
    # where the agent removed lines (that is refused, rightly).
    before, after = ["head\n", *before], ["head\n", *after]
    hunks = compute_hunks(before, after)
    order = list(data.draw(st.permutations(range(len(hunks)))))
    typed = ["# the person's note\n"]
    assert _undo_in_order(before, after, order, typed) == typed + before


@settings(max_examples=200, deadline=None)
@given(before=LINES, after=LINES, data=st.data())
def test_keeping_all_leaves_the_after_text_and_a_subset_undone_is_exact(
    before: list[str], after: list[str], data: st.DataObject
) -> None:
    hunks = compute_hunks(before, after)
    assert expected_lines(after, hunks, []) == after
    subset = data.draw(st.lists(st.sampled_from(range(len(hunks))), unique=True)) if hunks else []
    result = _undo_in_order(before, after, subset)
    # Each hunk is either the agent's or the original lines, independently.
    pieces: list[str] = []
    pos = 0
    for h in hunks:
        pieces.extend(after[pos : h.new[0]])
        pieces.extend(h.before if h.index in subset else h.after)
        pos = h.new[1]
    pieces.extend(after[pos:])
    assert result == pieces


def test_hunks_are_the_changed_places_with_unified_headers() -> None:
    before = lines_of("one\ntwo\nthree\nfour\nfive\n")
    after = lines_of("one\nTWO\nthree\nfour\nfive\nsix\n")
    hunks = compute_hunks(before, after)
    assert [h.header for h in hunks] == ["@@ -2,1 +2,1 @@", "@@ -5,0 +6,1 @@"]
    assert hunks[0].diff_lines() == ["-two", "+TWO"]
    assert hunks[1].diff_lines() == ["+six"]
    assert [h.index for h in hunks] == [0, 1]
    deletion = compute_hunks(lines_of("a\nb\nc\n"), lines_of("a\nc\n"))
    assert deletion[0].header == "@@ -2,1 +1,0 @@"


def test_a_region_the_person_typed_in_is_not_found() -> None:
    before = lines_of("a\nb\nc\nd\ne\n")
    after = lines_of("a\nB\nc\nd\nE\n")
    hunks = compute_hunks(before, after)
    regions = hunk_offsets(hunks, [])
    typed = lines_of("a\nB!\nc\nd\nE\n")
    assert locate(after, typed, regions[0]) is None
    # The other hunk is still where it was.
    assert locate(after, typed, regions[1]) == (4, 5)


def test_a_region_moves_with_lines_the_person_added_above_it() -> None:
    after = lines_of("a\nB\nc\nd\nE\n")
    hunks = compute_hunks(lines_of("a\nb\nc\nd\ne\n"), after)
    current = lines_of("# note\n# more\na\nB\nc\nd\nE\n")
    assert locate(after, current, hunk_offsets(hunks, [])[1]) == (6, 7)


def test_a_removal_is_refused_when_the_person_typed_where_the_lines_were() -> None:
    before = lines_of("a\nb\nc\n")
    after = lines_of("a\nc\n")
    (hunk,) = compute_hunks(before, after)
    region = hunk_offsets([hunk], [])[0]
    assert region == (1, 1)
    assert locate(after, lines_of("a\nX\nc\n"), region) is None
    assert locate(after, lines_of("a!\nc\n"), region) is None
    assert locate(after, lines_of("a\nc\nmore\n"), region) == (1, 1)


def test_unified_diff_has_both_names_and_ends_every_line() -> None:
    diff = unified_diff(["a\n", "b"], ["a\n", "c"], "x.py")
    assert diff.splitlines()[:2] == ["--- a/x.py", "+++ b/x.py"]
    assert diff.endswith("+c\n")
