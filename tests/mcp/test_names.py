"""MCP tool names: valid for every provider, unique, deterministic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rein.mcp.names import NAME_PATTERN, mcp_tool_names, sanitise


def test_plain_names_keep_server_and_tool() -> None:
    assert sanitise("time", "get_current_time") == "mcp__time__get_current_time"


def test_invalid_characters_become_underscores() -> None:
    assert sanitise("my.server", "do it/now") == "mcp__my_server__do_it_now"


def test_long_names_are_cut_with_a_hash_that_keeps_them_apart() -> None:
    a = sanitise("s", "x" * 80 + "a")
    b = sanitise("s", "x" * 80 + "b")
    assert len(a) == len(b) == 64
    assert a != b
    assert NAME_PATTERN.match(a) and NAME_PATTERN.match(b)


def test_collisions_get_numbered_suffixes_in_sorted_order() -> None:
    names = mcp_tool_names([("b.x", "t"), ("b_x", "t"), ("a", "t")], reserved={"mcp__a__t"})
    assert names == {
        ("a", "t"): "mcp__a__t_2",
        ("b.x", "t"): "mcp__b_x__t",
        ("b_x", "t"): "mcp__b_x__t_2",
    }


def test_the_order_given_does_not_change_the_names() -> None:
    pairs = [("s", "a b"), ("s", "a_b"), ("s", "a-b")]
    assert mcp_tool_names(pairs) == mcp_tool_names(list(reversed(pairs)))


_text = st.text(min_size=0, max_size=90)


@given(st.lists(st.tuples(_text, _text), max_size=25), st.sets(_text.map(lambda t: t[:64])))
def test_every_name_is_valid_and_unique(pairs: list[tuple[str, str]], reserved: set[str]) -> None:
    names = mcp_tool_names(pairs, reserved)
    assert set(names) == set(pairs)
    values = list(names.values())
    assert all(NAME_PATTERN.match(n) for n in values)
    assert len(set(values)) == len(values)
    assert not set(values) & reserved
