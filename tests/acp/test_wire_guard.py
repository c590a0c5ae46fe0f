"""Lines that are not JSON-RPC messages get JSON-RPC's errors and never
end ``rein acp`` (found by use: a line ``42`` ended the connection, and a
line that was not JSON was never answered)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import IO

import anyio
import pytest

from rein.acp.wire_guard import MAX_LINE_BYTES, GuardedReader, problem_answer
from tests.acp.conftest import Home
from tests.forkserver import REIN

BOUND_S = 60


@contextlib.asynccontextmanager
async def _rein_acp(
    home: Home, stderr: IO[bytes] | int
) -> AsyncIterator[asyncio.subprocess.Process]:
    """The real ``rein acp`` over pipes in ``home``; its end of stdin closed
    and its exit 0 checked after the body, killed if the body failed."""
    process = await asyncio.create_subprocess_exec(
        *REIN,
        "acp",
        env=home.env(),
        cwd=str(home.path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
    )
    assert process.stdin is not None
    try:
        yield process
        process.stdin.close()
        with anyio.fail_after(BOUND_S):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def _error(answer: bytes | None) -> tuple[int, object]:
    assert answer is not None
    message = json.loads(answer)
    assert message["jsonrpc"] == "2.0" and answer.endswith(b"\n")
    return message["error"]["code"], message["id"]


def test_what_is_not_a_json_object_is_answered_and_objects_pass() -> None:
    assert _error(problem_answer(b"{bad\n")) == (-32700, None)
    assert _error(problem_answer(b"42\n")) == (-32600, None)
    assert _error(problem_answer(b"[]\n")) == (-32600, None)
    assert _error(problem_answer(b'"text"')) == (-32600, None)
    assert problem_answer(b'{"jsonrpc": "2.0", "id": 1, "method": "m"}\n') is None
    assert problem_answer(b"   \n") is None  # blank: the SDK skips it
    # An id is a string, a number or null; a method is a string.
    assert _error(problem_answer(b'{"jsonrpc": "2.0", "id": {}, "method": "m"}')) == (-32600, None)
    assert _error(problem_answer(b'{"jsonrpc": "2.0", "id": true, "method": "m"}')) == (
        -32600,
        None,
    )
    assert _error(problem_answer(b'{"jsonrpc": "2.0", "id": 3, "method": 5}')) == (-32600, 3)
    assert problem_answer(b'{"jsonrpc": "2.0", "id": "a", "result": {}}') is None
    assert problem_answer(b'{"jsonrpc": "2.0", "id": "a", "error": {"code": 1}}') is None
    assert problem_answer(b'{"jsonrpc": "2.0", "method": "n"}') is None
    # Neither a request nor a response (the SDK dropped it unanswered).
    assert _error(problem_answer(b'{"jsonrpc": "2.0", "id": 9}')) == (-32600, 9)
    assert _error(problem_answer(b'{"jsonrpc": "2.0"}')) == (-32600, None)


async def test_the_reader_drops_what_it_answered_also_past_the_limit_and_at_the_end() -> None:
    source = asyncio.StreamReader(limit=64)
    long = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"p": "x" * 200}})
    long = long.encode()
    source.feed_data(b"42\n" + long + b"\n" + b"[" + b"1," * 100 + b"1]\n" + b"{bad")
    source.feed_eof()
    answers: list[bytes] = []
    ended: list[int] = []
    reader = GuardedReader(
        source, answers.append, on_end=lambda: ended.append(len(answers)), initialized=True
    )
    assert await reader.readuntil(b"\n") == long + b"\n"
    assert ended == []
    try:
        await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        assert exc.partial == b""  # the unanswerable last line is not handed on
    else:
        raise AssertionError("the end of the stream was not reported")
    assert [_error(a)[0] for a in answers] == [-32600, -32600, -32700]
    assert ended == [3]  # told once, after the last line was answered


async def test_the_end_is_told_after_a_last_message_without_a_newline() -> None:
    source = asyncio.StreamReader()
    source.feed_data(b'{"jsonrpc": "2.0", "id": 1, "method": "m"}')
    source.feed_eof()
    ended: list[bool] = []
    reader = GuardedReader(
        source, lambda _: None, on_end=lambda: ended.append(True), initialized=True
    )
    with contextlib.suppress(asyncio.IncompleteReadError):
        await reader.readuntil(b"\n")
    assert ended == []  # the SDK takes the message first
    with contextlib.suppress(asyncio.IncompleteReadError):
        await reader.readuntil(b"\n")
    assert ended == [True]


async def test_rein_acp_answers_bad_lines_and_serves_on(home: Home) -> None:
    stderr = home.path / "acp.stderr"
    with stderr.open("wb") as sink:
        await _bad_lines_answered(home, sink)
    log = stderr.read_text()
    assert "Traceback" not in log, log
    assert "editor/didFocus" not in log, log  # an info line, below the default level
    assert log.count("ignored session/cancel: its params are not {sessionId: string}") == 2, log


async def _bad_lines_answered(home: Home, sink: IO[bytes]) -> None:
    async with _rein_acp(home, sink) as process:
        await _answered_and_served(home, process)


async def _answered_and_served(home: Home, process: asyncio.subprocess.Process) -> None:
    assert process.stdin is not None and process.stdout is not None
    initialize = {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}}
    lines = [
        # Refused by the fast start (not a uint16), and not handed to the SDK too.
        json.dumps({**initialize, "id": 0, "params": {"protocolVersion": -1}}),
        json.dumps({**initialize, "id": 1}),
        "42",
        "{bad",
        "[]",
        # Notifications nothing routes or reads: one log line each, no traceback.
        json.dumps({"jsonrpc": "2.0", "method": "editor/didFocus", "params": {"file": "a"}}),
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel"}),
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 5}}),
        json.dumps({**initialize, "id": 2}),
        # _meta's keys replaced the request's own fields: "rel" is not absolute.
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/list",
                "params": {"cwd": str(home.path), "_meta": {"cwd": "rel"}},
            }
        ),
    ]
    process.stdin.write("".join(f"{line}\n" for line in lines).encode())
    await process.stdin.drain()
    answers = []
    with anyio.fail_after(BOUND_S):
        while len(answers) < 7:
            answers.append(json.loads(await process.stdout.readline()))
    # The guard answers a bad line as it reads it, the SDK a request
    # when its handler is done: the order between the two may vary.
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    unnamed = [a["error"]["code"] for a in answers if a.get("id") is None]
    assert sorted(by_id) == [0, 1, 2, 3] and unnamed == [-32600, -32700, -32600]
    assert answers[0]["id"] == 0  # the fast start answered it first
    assert by_id[0]["error"]["data"] == {"field": "protocolVersion"}
    assert by_id[1]["result"]["protocolVersion"] == 1
    assert by_id[2]["result"]["protocolVersion"] == 1
    assert by_id[3].get("result") == {"sessions": []}, by_id[3]


async def test_a_cancel_request_is_left_out_and_what_follows_passes() -> None:
    # Rein does not implement the optional $/cancel_request: the SDK took it
    # for an unknown method and logged a traceback for each.
    source = asyncio.StreamReader()
    cancel = b'{"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}}\n'
    text = b'{"jsonrpc": "2.0", "id": 4, "method": "m", "params": {"t": "$/cancel_request"}}\n'
    source.feed_data(cancel + text)
    source.feed_eof()
    answers: list[bytes] = []
    reader = GuardedReader(source, answers.append, initialized=True)
    assert await reader.readuntil(b"\n") == text
    assert answers == []


async def test_notifications_nothing_routes_or_reads_are_left_out_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The SDK logged a traceback for each (a client's notification on every
    # keystroke flooded the log); requests and the rest still pass.
    unknown = b'{"jsonrpc": "2.0", "method": "editor/didFocus", "params": {"f": 1}}\n'
    no_params = b'{"jsonrpc": "2.0", "method": "session/cancel"}\n'
    bad_id = b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": [1]}}\n'
    cancel = b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}\n'
    extension = b'{"jsonrpc": "2.0", "method": "_zed/hello", "params": 3}\n'
    request = b'{"jsonrpc": "2.0", "id": 5, "method": "editor/didFocus", "params": {}}\n'
    source = asyncio.StreamReader()
    source.feed_data(unknown + no_params + bad_id + cancel + extension + request + unknown)
    source.feed_eof()
    answers: list[bytes] = []
    reader = GuardedReader(source, answers.append, initialized=True)
    with caplog.at_level("INFO", logger="rein.acp.wire_guard"):
        passed = [await reader.readuntil(b"\n") for _ in range(3)]
        with pytest.raises(asyncio.IncompleteReadError):
            await reader.readuntil(b"\n")
    assert passed == [cancel, extension, request]
    assert answers == []
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4 and all("\n" not in line for line in lines)
    assert lines[0].startswith("ignored notification editor/didFocus")
    assert lines[1].startswith("ignored session/cancel") and "null" in lines[1]
    assert "[1]" in lines[2]


async def test_meta_keys_but_reins_are_left_out_before_the_sdk_reads_them() -> None:
    # The SDK passes _meta's keys as the handler's arguments, over the
    # request's own fields (_meta.session_id sent a prompt to another session).
    prompt = {"sessionId": "s1", "prompt": [], "_meta": {"session_id": "s2", "traceparent": "t"}}
    new = {"cwd": "/w", "_meta": {"rein": {"isolated": True}, "cwd": "/elsewhere"}}
    steer = {"sessionId": "s1", "_meta": {"session_id": "s2"}}  # an extension's: passed whole
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": prompt},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new},
        {"jsonrpc": "2.0", "id": 3, "method": "_rein/steer", "params": steer},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {**steer, "_meta": {"x": 1}}},
    ]
    source = asyncio.StreamReader()
    source.feed_data(b"".join(json.dumps(line).encode() + b"\n" for line in lines[:3]))
    source.feed_data(json.dumps(lines[3]).encode())  # the last one without its newline
    source.feed_eof()
    reader = GuardedReader(source, lambda _: None, initialized=True)
    passed = [json.loads(await reader.readuntil(b"\n")) for _ in range(3)]
    with pytest.raises(asyncio.IncompleteReadError) as last:
        await reader.readuntil(b"\n")
    assert passed[0]["params"] == {"sessionId": "s1", "prompt": []}
    assert passed[1]["params"] == {"cwd": "/w", "_meta": {"rein": {"isolated": True}}}
    assert passed[2] == lines[2]
    assert json.loads(last.value.partial)["params"] == {"sessionId": "s1"}


async def test_a_request_without_params_gets_empty_ones_and_a_cancel_with_an_id_is_refused() -> (
    None
):
    # The SDK refused a request without params naming no field (session/list
    # needs none), and answered session/cancel sent with an id Method not found.
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "session/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": None},
        {"jsonrpc": "2.0", "id": 3, "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 4, "method": "_rein/steer"},  # an extension's: as it came
    ]
    source = asyncio.StreamReader()
    source.feed_data(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    source.feed_eof()
    answers: list[bytes] = []
    reader = GuardedReader(source, answers.append, initialized=True)
    passed = [json.loads(await reader.readuntil(b"\n")) for _ in range(3)]
    assert passed[0] == {**lines[0], "params": {}}
    assert passed[1] == {**lines[1], "params": {}}
    assert passed[2] == lines[3]
    [refused] = [json.loads(answer) for answer in answers]
    assert refused["id"] == 3 and refused["error"]["code"] == -32600
    assert "session/cancel is a notification" in refused["error"]["message"]


def _request(request_id: int, method: str, **params: object) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode()


async def test_requests_before_initialize_are_refused_and_a_pipelined_one_after_passes() -> None:
    source = asyncio.StreamReader()
    lines = [
        _request(1, "session/new", cwd="/w", mcpServers=[]),
        json.dumps(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
        ).encode(),
        _request(2, "session/prompt", sessionId="s", prompt=[]),
        _request(3, "initialize", protocolVersion=1),
        _request(4, "session/new", cwd="/w", mcpServers=[]),
    ]
    source.feed_data(b"".join(line + b"\n" for line in lines))
    source.feed_eof()
    answers: list[bytes] = []
    reader = GuardedReader(source, answers.append)
    passed = [json.loads(await reader.readuntil(b"\n")) for _ in range(3)]
    assert [m.get("id") for m in passed] == [None, 3, 4]  # the notification, then after initialize
    assert [_error(a) for a in answers] == [(-32600, 1), (-32600, 2)]
    assert "session/new before initialize" in json.loads(answers[0])["error"]["message"]


async def test_a_line_past_the_bound_is_dropped_as_it_arrives_and_answered_with_its_id() -> None:
    source = asyncio.StreamReader(limit=64)  # read in chunks, as stdin is
    big = _request(7, "session/prompt", sessionId="s", prompt=[{"text": "x" * 5000}])
    headless = json.dumps({"params": {"p": "y" * 5000}, "id": 8}).encode()
    after = _request(9, "session/list")
    source.feed_data(big + b"\n" + headless + b"\n" + after + b"\n" + big)
    source.feed_eof()
    answers: list[bytes] = []
    ended: list[int] = []
    reader = GuardedReader(
        source,
        answers.append,
        on_end=lambda: ended.append(len(answers)),
        initialized=True,
        max_line=1000,
    )
    assert json.loads(await reader.readuntil(b"\n"))["id"] == 9  # the connection serves on
    with pytest.raises(asyncio.IncompleteReadError) as end:
        await reader.readuntil(b"\n")
    assert end.value.partial == b""
    # Its id when the line starts with it, else null; the last, unended line too.
    assert [_error(a) for a in answers] == [(-32600, 7), (-32600, None), (-32600, 7)]
    assert "at most 1000 bytes" in json.loads(answers[0])["error"]["message"]
    assert ended == [3]


async def test_rein_acp_refuses_a_session_before_initialize_and_a_line_past_the_bound(
    home: Home,
) -> None:
    async with _rein_acp(home, asyncio.subprocess.DEVNULL) as process:
        await _refused_before_initialize_and_past_the_bound(home, process)


async def _refused_before_initialize_and_past_the_bound(
    home: Home, process: asyncio.subprocess.Process
) -> None:
    assert process.stdin is not None and process.stdout is not None
    stdout = process.stdout

    async def answer() -> dict[str, object]:
        with anyio.fail_after(BOUND_S):
            found: dict[str, object] = json.loads(await stdout.readline())
            return found

    # The first line is no initialize: the fast start leaves it to the guard.
    process.stdin.write(_request(1, "session/new", cwd=str(home.path), mcpServers=[]) + b"\n")
    refused = await answer()
    assert refused["id"] == 1 and refused["error"]["code"] == -32600  # type: ignore[index]
    process.stdin.write(_request(2, "initialize", protocolVersion=1) + b"\n")
    assert (await answer())["id"] == 2
    filler = "x" * (MAX_LINE_BYTES + 1)
    process.stdin.write(_request(3, "session/list", cwd=filler) + b"\n")
    process.stdin.write(_request(4, "session/list", cwd=str(home.path)) + b"\n")
    await process.stdin.drain()
    too_long, listed = await answer(), await answer()
    assert too_long["id"] == 3 and too_long["error"]["code"] == -32600  # type: ignore[index]
    assert listed == {"jsonrpc": "2.0", "id": 4, "result": {"sessions": []}}


async def test_a_long_string_id_of_a_line_past_the_bound_is_answered() -> None:
    source = asyncio.StreamReader(limit=64)  # the id spans chunks
    long_id = "r-" + "\u00e9\\" * 250  # 502 characters, escapes in the JSON
    big = json.dumps({"jsonrpc": "2.0", "id": long_id, "method": "m", "params": "x" * 5000})
    source.feed_data(big.encode() + b"\n" + _request(9, "session/list") + b"\n")
    source.feed_eof()
    answers: list[bytes] = []
    reader = GuardedReader(source, answers.append, initialized=True, max_line=2000)
    assert json.loads(await reader.readuntil(b"\n"))["id"] == 9
    assert [_error(a) for a in answers] == [(-32600, long_id)]


async def test_each_answer_is_drained_before_the_next_line_is_read() -> None:
    source = asyncio.StreamReader()
    source.feed_data(b"42\n[]\n" + _request(9, "session/list") + b"\n")
    answers: list[bytes] = []
    draining, drained = asyncio.Event(), asyncio.Event()

    async def drain() -> None:
        draining.set()
        await drained.wait()

    reader = GuardedReader(source, answers.append, initialized=True, drain=drain)
    with anyio.fail_after(BOUND_S):
        async with anyio.create_task_group() as tg:
            read: list[bytes] = []

            async def next_line() -> None:
                read.append(await reader.readuntil(b"\n"))

            tg.start_soon(next_line)
            await draining.wait()
            assert [_error(a) for a in answers] == [(-32600, None)], "the next line waits"
            drained.set()
    assert [_error(a) for a in answers] == [(-32600, None)] * 2
    assert json.loads(read[0])["id"] == 9
