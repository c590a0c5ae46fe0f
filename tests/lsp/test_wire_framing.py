"""The frame reader and the envelope checks, as units (no server)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest

from rein.lsp._envelope import (
    INVALID_REQUEST,
    Envelope,
    Rejected,
    bounded,
    classify,
    find_problem,
)
from rein.lsp._framing import MAX_HEADER_LINE, FrameError, FrameReader


def _chunks(data: bytes, size: int) -> Callable[[], Awaitable[bytes]]:
    parts = [data[i : i + size] for i in range(0, len(data), size)]

    async def read() -> bytes:
        return parts.pop(0) if parts else b""

    return read


def _frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body


GOOD = json.dumps({"jsonrpc": "2.0", "id": "next", "method": "rein/sessions"}).encode()
LOST = json.dumps({"jsonrpc": "2.0", "id": "lost", "method": "rein/sessions"}).encode()


async def _all(data: bytes, chunk: int, max_bytes: int = 1000) -> list[bytes | FrameError]:
    reader = FrameReader(_chunks(data, chunk), max_bytes)
    out: list[bytes | FrameError] = []
    while (item := await reader.next()) is not None:
        out.append(item)
        if isinstance(item, bytes):
            try:
                json.loads(item)
            except ValueError:
                reader.recover(item)  # as the protocol does with a body that is no JSON
    return out


@pytest.mark.parametrize("chunk", [1, 7, 65536], ids=["byte", "small", "whole"])
async def test_well_formed_frames_in_any_chunking(chunk: int) -> None:
    data = _frame(GOOD) + _frame(LOST, b"content-length: %d\r\nContent-Type: x\r\n\r\n" % len(LOST))
    assert await _all(data, chunk) == [GOOD, LOST]


@pytest.mark.parametrize(
    "raw, reason",
    [
        pytest.param(
            _frame(LOST, b"Content-Length: abc\r\n\r\n"), "invalid Content-Length", id="abc"
        ),
        pytest.param(
            _frame(LOST, b"Content-Length: -5\r\n\r\n"), "invalid Content-Length", id="-5"
        ),
        pytest.param(
            _frame(LOST, b"Content-Length: 1099511627776\r\n\r\n"), "over the maximum", id="1TB"
        ),
        pytest.param(
            _frame(LOST, b"Content-Length: 99999999999999999999\r\n\r\n"),
            "over the maximum",
            id="20-digits",
        ),
        pytest.param(b"\r\n" + LOST, "without a Content-Length", id="missing"),
        pytest.param(LOST, "malformed header line", id="no-header-at-all"),
        pytest.param(b"Content-Length: %d\n\n" % len(LOST) + LOST, "CRLF", id="lf-only"),
        pytest.param(b"x" * (MAX_HEADER_LINE + 10) + b"\r\n", "longer than", id="long-line"),
    ],
)
async def test_a_bad_header_is_one_error_then_the_next_frame(raw: bytes, reason: str) -> None:
    for chunk in (1, 65536):
        out = await _all(raw + _frame(GOOD), chunk)
        assert len(out) == 2, out
        assert isinstance(out[0], FrameError) and reason in out[0].message
        assert out[1] == GOOD


@pytest.mark.parametrize("delta", [20, -10], ids=["20-too-big", "10-too-small"])
async def test_a_wrong_length_costs_that_frame_only(delta: int) -> None:
    raw = _frame(LOST, b"Content-Length: %d\r\n\r\n" % (len(LOST) + delta)) + _frame(GOOD)
    out = await _all(raw, 65536)
    assert out[-1] == GOOD
    assert all(isinstance(item, bytes) for item in out)  # the body is the protocol's to refuse
    assert len(out) == 2


async def test_an_oversized_body_is_skipped_holding_one_chunk() -> None:
    big = b"x" * 5_000_000
    data = _frame(big) + _frame(GOOD)
    parts = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    reader = FrameReader(lambda: _pop(parts), max_bytes=1000)
    peak = 0

    async def read_tracking() -> bytes:
        nonlocal peak
        peak = max(peak, len(reader._buf))
        return await _pop(parts)

    reader._read = read_tracking
    first = await reader.next()
    assert isinstance(first, FrameError) and "over the maximum of 1000 bytes" in first.message
    assert await reader.next() == GOOD
    assert peak < 2 * 65536


async def _pop(parts: list[bytes]) -> bytes:
    return parts.pop(0) if parts else b""


async def test_end_of_stream_mid_frame_is_the_end() -> None:
    assert await _all(b"Content-Length: 50\r\n\r\n{", 65536) == []
    assert await _all(b"Content-Len", 65536) == []


def test_max_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        FrameReader(_chunks(b"", 1), 0)


# ----------------------------------------------------------------- envelope


@pytest.mark.parametrize(
    "data, expected",
    [
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": "m"}, Envelope("request", 1, "m"), id="request"
        ),
        pytest.param(
            {"jsonrpc": "2.0", "method": "m"}, Envelope("notification", None, "m"), id="note"
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": "a", "result": None},
            Envelope("response", "a", None),
            id="response",
        ),
        pytest.param(
            [{}],
            Rejected(INVALID_REQUEST, "batch requests are not supported by LSP", None),
            id="batch",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": True, "method": "m"},
            Rejected(INVALID_REQUEST, "id must be an integer or a string, got a boolean", None),
            id="bool-id",
        ),
        pytest.param(
            {"id": 3, "method": "m"},
            Rejected(INVALID_REQUEST, 'jsonrpc must be "2.0"', 3),
            id="no-jsonrpc",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 3, "method": 5},
            Rejected(INVALID_REQUEST, "method must be a non-empty string, got a number", 3),
            id="int-method",
        ),
    ],
)
def test_classify(data: object, expected: Envelope | Rejected) -> None:
    assert classify(data) == expected


def test_find_problem_names_the_place() -> None:
    assert find_problem({"params": {"text": "fine", "list": [1, "ok"]}}) is None
    assert find_problem({"params": {"list": ["ok", "a\ud800"]}}) == (
        "params.list.1: not valid Unicode (a lone surrogate)"
    )
    deep: object = "leaf"
    for _ in range(200):
        deep = {"a": deep}
    problem = find_problem({"params": {"text": deep}})
    assert problem is not None and problem.startswith("params.text.a") and "128 levels" in problem


def test_bounded() -> None:
    assert bounded("abc", 5) == "abc"
    assert bounded("x" * 10_000_000, 10) == "xxxxxxxxxx… (9999990 more characters)"


def test_the_serve_flag_defaults_to_the_readers_maximum_and_refuses_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rein.cli import build_parser
    from rein.lsp._framing import DEFAULT_MAX_BYTES

    parser = build_parser()
    assert parser.parse_args(["serve"]).max_message_bytes == DEFAULT_MAX_BYTES
    assert parser.parse_args(["serve", "--max-message-bytes", "4000"]).max_message_bytes == 4000
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--max-message-bytes", "0"])
    assert "must be at least 1, got 0" in capsys.readouterr().err
