"""The depth of a raw JSON body, found before it is parsed
(:mod:`rein.lsp._depth`): exact for any JSON value (brackets, quotes and
backslashes inside strings do not count), and what is read of a message
nested too deep."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rein.lsp._depth import deep_envelope, too_deep

_tricky_text = st.text(alphabet='[]{}"\\ax', max_size=6)
_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.integers() | _tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_tricky_text, inner, max_size=3),
    max_leaves=30,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(value=_values, limit=st.integers(0, 8), chunk=st.sampled_from([2, 3, 65_536]))
def test_too_deep_is_exact(value: Any, limit: int, chunk: int) -> None:
    # A small chunk runs the pair-removal rounds and the chunked profile too.
    body = json.dumps(value).encode()
    assert too_deep(body, limit, chunk=chunk) is (depth(value) > limit)


def test_a_deep_body_is_read_up_to_its_deep_part() -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": "a\\"b", "method": "rein/steer", "params": {"x": [1, %s]}}'
        % (b"[" * 10_000 + b"]" * 10_000)
    )
    assert too_deep(body, 128)
    deep = deep_envelope(body, 128)
    assert deep.members == {"jsonrpc": "2.0", "id": 'a"b', "method": "rein/steer", "params": {}}
    assert deep.path[:3] == ("params", "x", 1) and len(deep.path) == 128


def test_members_after_the_deep_part_are_not_read() -> None:
    body = b'{"params": %s, "id": 7}' % (b"[" * 500 + b"]" * 500)
    deep = deep_envelope(body, 128)
    assert deep.members == {"params": []} and deep.path[0] == "params"


def test_a_shallow_message_is_not_scanned_past_its_brackets() -> None:
    # Fewer opening brackets than the limit: no deeper nesting is possible.
    assert not too_deep(b'{"text": "' + b"x" * 1_000_000 + b'"}', 128)
