"""``rein mock-server``: an OpenAI-compatible and Anthropic endpoint on
127.0.0.1 that replays a scenario (the replay script format), one turn per
model request, with injectable faults and a control API.

Model endpoints: ``POST /v1/chat/completions`` (streaming or not) and
``POST /v1/messages``. Control: ``GET|POST /mock/scenario``,
``POST /mock/reset`` (back to the scenario and delay it started with),
``GET|POST /mock/delay``, ``GET /mock/requests``, ``GET /mock/health``.
docs/providers.md describes the scenario faults.

Plain asyncio streams, HTTP/1.1 with ``Connection: close``: no framework.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rein.harness.errors import ConfigError
from rein.providers import _mock_wire as wire
from rein.providers._mock_decode import decode_anthropic_request, decode_openai_request
from rein.providers._mock_http import (
    MAX_HEAD,
    HttpRequest,
    Reply,
    head,
    json_reply,
    read_request,
    send,
)
from rein.providers.script import Fault, ReplayScript, ReplayTurn, check_expect, load_script

__all__ = ["MockServer", "RecordedHttpRequest", "main_mock_server", "run_mock_server"]

_FLUSH_AT = 32 * 1024


@dataclass(slots=True)
class RecordedHttpRequest:
    """One model request as the mock server saw it (``GET /mock/requests``)."""

    seq: int
    method: str
    path: str
    api: str
    headers: dict[str, str]
    body: Any
    #: 1-based scenario turn that answered, None when none did.
    turn: int | None = None
    status: int | None = None
    #: "pending", "completed", "expectation_failed", "exhausted", "fault:<kind>",
    #: "disconnected" (the client closed the connection first), "interrupted"
    #: (the server was closed mid-reply).
    outcome: str = "pending"
    disconnected: bool = False
    events_sent: int = 0


class MockServer:
    """The server. ``async with MockServer(scenario) as server`` starts it on
    a free port (``server.url``) and stops it on exit."""

    def __init__(
        self,
        scenario: str | Path | ReplayScript | Sequence[dict[str, Any]] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        delay: float = 0.0,
    ) -> None:
        if not (host.startswith("127.") or host == "localhost"):
            raise ConfigError(f"the mock server listens on loopback only, not {host!r}", "host")
        self.host = host
        self.port = port
        self.delay = 0.0
        self.set_delay(delay)
        self.script = ReplayScript(name="empty", turns=[])
        self.file: str | None = None
        self.index = 0
        self.requests: list[RecordedHttpRequest] = []
        #: What ``reset`` returns to: the scenario and delay it started with.
        self._initial_scenario = scenario
        self._initial_delay = delay
        self._server: asyncio.Server | None = None
        self._changed = asyncio.Event()
        self._connections: set[asyncio.Task[Any]] = set()
        if scenario is not None:
            self.load(scenario)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # ------------------------------------------------------------- scenario

    def load(self, scenario: str | Path | ReplayScript | Sequence[dict[str, Any]]) -> None:
        """Switch to another scenario and start it from its first turn."""
        if isinstance(scenario, str | Path):
            self.script, self.file = load_script(scenario), str(scenario)
        elif isinstance(scenario, ReplayScript):
            self.script, self.file = scenario, None
        else:
            self.script, self.file = ReplayScript.from_data(list(scenario)), None
        self.index = 0

    def reset(self) -> None:
        """Back to the scenario and delay the server started with (a file is
        read again), at its first turn; forget the recorded requests."""
        if self._initial_scenario is None:
            self.script, self.file, self.index = ReplayScript(name="empty", turns=[]), None, 0
        else:
            self.load(self._initial_scenario)
        self.delay = self._initial_delay
        self.requests.clear()
        self._notify()

    def set_delay(self, seconds: float) -> None:
        """Wait ``seconds`` (plus the turn's own delay) before every reply."""
        if not math.isfinite(seconds) or seconds < 0:
            raise ConfigError(f"the delay must be a finite number >= 0, not {seconds!r}", "delay")
        self.delay = seconds

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_until(self, predicate: Callable[[MockServer], bool]) -> None:
        """Wait (on request events, not by polling) until ``predicate(self)``
        holds. Bound it with ``anyio.fail_after`` or ``asyncio.timeout``."""
        while not predicate(self):
            await self._changed.wait()

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, self.host, self.port, limit=MAX_HEAD
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        connections = list(self._connections)
        for task in connections:
            task.cancel()
        if connections:
            await asyncio.wait(connections)

    async def __aenter__(self) -> MockServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    # ----------------------------------------------------------------- HTTP

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            request = await read_request(reader, writer)
            if request is not None:
                await self._dispatch(request, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # the server is closing: this task is the connection's root
        except ValueError as exc:
            with contextlib.suppress(ConnectionError):
                await send(writer, json_reply(400, wire.error_body(None, str(exc))))
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _dispatch(
        self, request: HttpRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        path = request.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/chat/completions") or path.endswith("/messages"):
            api: wire.Api = "openai" if path.endswith("/chat/completions") else "anthropic"
            await self._model_request(api, request, reader, writer)
        else:
            await send(writer, self._control(request.method, path, request.body))

    def _control(self, method: str, path: str, raw: bytes) -> Reply:
        if path == "/mock/scenario" and method == "POST":
            try:
                data = json.loads(raw or b"{}")
                if "file" in data:
                    self.load(str(data["file"]))
                else:
                    self.load(ReplayScript.from_data(data.get("script") or data.get("turns")))
            except (ValueError, TypeError, AttributeError, ConfigError) as exc:
                return json_reply(400, wire.error_body(None, f"cannot load the scenario: {exc}"))
            self._notify()
            return self._control("GET", path, b"")
        if path == "/mock/scenario" and method == "GET":
            return json_reply(
                200,
                {
                    "file": self.file,
                    "name": self.script.name,
                    "index": self.index,
                    "turns": len(self.script.turns),
                },
            )
        if path == "/mock/reset" and method == "POST":
            try:
                self.reset()
            except ConfigError as exc:
                return json_reply(400, wire.error_body(None, f"cannot reset: {exc}"))
            return json_reply(
                200, {"ok": True, "index": self.index, "file": self.file, "name": self.script.name}
            )
        if path == "/mock/delay" and method == "POST":
            try:
                self.set_delay(_delay_ms(raw) / 1000)
            except (ValueError, ConfigError) as exc:
                return json_reply(400, wire.error_body(None, f"cannot set the delay: {exc}"))
            return self._control("GET", path, b"")
        if path == "/mock/delay" and method == "GET":
            return json_reply(200, {"ms": self.delay * 1000})
        if path == "/mock/requests" and method == "GET":
            return json_reply(200, {"requests": [asdict(r) for r in self.requests]})
        if path == "/mock/health" and method == "GET":
            return json_reply(200, {"ok": True})
        return json_reply(404, wire.error_body(None, f"no such endpoint: {method} {path}"))

    async def _model_request(
        self,
        api: wire.Api,
        request: HttpRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        try:
            body = json.loads(request.body)
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            await send(writer, json_reply(400, wire.error_body(api, f"invalid JSON body: {exc}")))
            return
        record = RecordedHttpRequest(
            len(self.requests), request.method, request.path, api, request.headers, body
        )
        self.requests.append(record)
        self._notify()
        respond = asyncio.create_task(self._respond(api, body, record, writer))
        watch = asyncio.create_task(reader.read(1))  # b"" (or a reset): the client left
        try:
            await asyncio.wait({respond, watch}, return_when=asyncio.FIRST_COMPLETED)
            if not respond.done() and _client_left(watch) is False:
                await respond  # the client sent more bytes; keep answering
        finally:
            if not respond.done():
                respond.cancel()
                left = _client_left(watch)
                record.disconnected = bool(left)
                record.outcome = "disconnected" if left else "interrupted"
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await respond
            self._notify()

    async def _respond(
        self,
        api: wire.Api,
        body: dict[str, Any],
        record: RecordedHttpRequest,
        writer: asyncio.StreamWriter,
    ) -> None:
        if self.index >= len(self.script.turns):
            record.outcome, record.status = "exhausted", 400
            message = (
                f"mock scenario {self.script.name!r} ran out: it has "
                f"{len(self.script.turns)} turns and turn {self.index + 1} was requested"
            )
            await send(writer, json_reply(400, wire.error_body(api, message)))
            return
        turn_index = self.index
        turn = self.script.turns[turn_index]
        self.index += 1
        record.turn = turn_index + 1
        if turn.expect is not None:
            decode = decode_openai_request if api == "openai" else decode_anthropic_request
            try:
                decoded = decode(body)
            except (AttributeError, TypeError, ValueError) as exc:
                record.outcome, record.status = "expectation_failed", 400
                message = f"mock server cannot read the request to check expectations: {exc!r}"
                await send(writer, json_reply(400, wire.error_body(api, message)))
                return
            failures = check_expect(
                turn.expect,
                system=decoded.system,
                messages=decoded.messages,
                tools=decoded.tools,
                tool_choice=decoded.tool_choice,
            )
            if failures:
                record.outcome, record.status = "expectation_failed", 400
                message = f"mock expectation failed (turn {turn_index + 1}): " + "; ".join(failures)
                await send(writer, json_reply(400, wire.error_body(api, message)))
                return
        if self.delay + turn.delay > 0:
            await asyncio.sleep(self.delay + turn.delay)
        fault = turn.fault
        if fault is not None and fault.kind == "status":
            record.outcome, record.status = "fault:status", fault.status
            await send(writer, _status_reply(api, fault))
            return
        model = str(body.get("model") or "mock")
        record.status = 200
        if not body.get("stream"):
            reply = (
                wire.openai_completion(turn, turn_index, model)
                if api == "openai"
                else wire.anthropic_message(turn, turn_index, model)
            )
            await send(writer, json_reply(200, reply))
            record.outcome = "completed"
            return
        await self._stream(api, body, turn, turn_index, model, record, writer)

    async def _stream(
        self,
        api: wire.Api,
        body: dict[str, Any],
        turn: ReplayTurn,
        turn_index: int,
        model: str,
        record: RecordedHttpRequest,
        writer: asyncio.StreamWriter,
    ) -> None:
        if api == "openai":
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = wire.openai_events(turn, turn_index, model, include_usage=usage)
        else:
            events = wire.anthropic_events(turn, turn_index, model)
        extra = {"Cache-Control": "no-cache"}
        buffer = bytearray(head(200, "text/event-stream; charset=utf-8", extra, None))
        fault = turn.fault
        content = 0
        for event in events:
            if (
                fault is not None
                and event.kind in ("content", "tail")
                and content >= fault.after_chunks
            ):
                writer.write(bytes(buffer))
                await writer.drain()
                record.outcome = f"fault:{fault.kind}"
                if fault.kind == "malformed":
                    writer.write(wire.malformed_event(api))
                    await writer.drain()
                elif fault.kind == "stall":
                    await asyncio.sleep(fault.seconds)
                return  # "cut", or after the stall/malformed chunk: drop the connection
            buffer += event.data
            record.events_sent += 1
            content += event.kind == "content"
            if len(buffer) >= _FLUSH_AT:
                writer.write(bytes(buffer))
                buffer.clear()
                await writer.drain()
        writer.write(bytes(buffer))
        await writer.drain()
        record.outcome = "completed"


def _delay_ms(raw: bytes) -> float:
    """The ``ms`` of a ``POST /mock/delay`` body; ValueError when missing or
    not a number."""
    data = json.loads(raw or b"{}")
    value = data.get("ms") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f'the body must be {{"ms": NUMBER}}, not {raw[:100]!r}')
    return float(value)


def _client_left(watch: asyncio.Task[bytes]) -> bool | None:
    """True when the watch saw the client close, False when it read data,
    None while it is still waiting."""
    if not watch.done() or watch.cancelled():
        return None
    return watch.exception() is not None or watch.result() == b""


def _status_reply(api: wire.Api, fault: Fault) -> Reply:
    headers = {}
    if fault.retry_after is not None:
        headers["Retry-After"] = f"{fault.retry_after:g}"
    if isinstance(fault.body, str):
        return Reply(fault.status, fault.body.encode(), "text/plain", headers)
    if fault.body is not None:
        return json_reply(fault.status, fault.body, headers)
    kind = {429: "rate_limit_error", 401: "authentication_error"}.get(fault.status, "api_error")
    message = f"mock fault: HTTP {fault.status}"
    return json_reply(fault.status, wire.error_body(api, message, kind), headers)


# -------------------------------------------------------------------- CLI


def run_mock_server(
    host: str = "127.0.0.1", port: int = 8765, scenario_path: str | None = None, delay: float = 0.0
) -> int:
    """Serve until interrupted. Prints ``rein mock server listening on URL``
    (with the real port when ``port`` is 0) once it accepts connections."""

    async def main() -> None:
        server = MockServer(scenario_path, host=host, port=port, delay=delay)
        await server.start()
        print(f"rein mock server listening on {server.url}", flush=True)
        await server.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        return 0
    except ConfigError as exc:
        print(f"rein mock-server: {exc}", file=sys.stderr)
        return 2
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free port)")
    parser.add_argument("--scenario", default=None, help="replay script (YAML) to serve")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every reply")


def main_mock_server(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rein mock-server", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_mock_server(args.host, args.port, args.scenario, args.delay)


if __name__ == "__main__":
    raise SystemExit(main_mock_server())
