"""``rein acp``: the ACP agent over stdin/stdout until the client leaves.

The configuration is ``rein run``'s (:func:`rein.headless.run.build_config`:
the config file, REIN_* variables, the ``--model-...`` flags); the store is
``rein run``'s folder; models are made by :func:`rein.providers.create_model`.
stdout is the protocol channel: logs go to stderr. When stdin ends (the
editor closed, or crashed) every run is aborted, its session stays stored
(``session/load`` resumes it in the next ``rein acp``), and the workspace
hosts are closed: analyzers, watchers, previews and MCP servers stopped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from rein.acp import fast_start
from rein.acp.wire_guard import GuardedReader
from rein.config import ReinConfig
from rein.config_file import build_config
from rein.harness.errors import ConfigError
from rein.providers.config import ModelConfig

if TYPE_CHECKING:
    from rein.disk.analyzer_specs import AnalyzerSpec

__all__ = ["run_acp", "serve_acp"]

log = logging.getLogger(__name__)

#: The most of a line stdin's reader holds before the guard takes it.
_CHUNK_BYTES = 1 << 20


def _model(config: ModelConfig) -> Any:
    from rein.providers import create_model

    config.check_usable()
    return create_model(config)


async def _stdio(first_line: bytes) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
    """stdin and stdout as streams, ``first_line`` (read before, not
    answered) in front of the rest of stdin."""
    loop = asyncio.get_running_loop()
    # The guard reads lines in chunks of at most this (the SDK reads whole
    # lines from the guard): what one line holds in memory is bounded by
    # wire_guard.MAX_LINE_BYTES and this, whatever the client sends.
    reader = asyncio.StreamReader(limit=_CHUNK_BYTES)
    if first_line:
        reader.feed_data(first_line)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    write_protocol = asyncio.streams.FlowControlMixin()
    transport, _ = await loop.connect_write_pipe(lambda: write_protocol, sys.stdout)
    writer = asyncio.StreamWriter(transport, write_protocol, None, loop)
    return writer, reader


async def serve_acp(
    config: ReinConfig,
    *,
    storage: str | Path | None,
    input_stream: Any = None,
    output_stream: Any = None,
    analyzers: tuple[AnalyzerSpec, ...] | None = None,
    watch: bool = True,
    first_line: bytes | None = None,
    initialized: dict[str, Any] | None = None,
) -> None:
    """Serve one client over the given streams (stdio by default) until it
    leaves; then abort the runs and close the hosts. ``first_line``: read
    from stdin already; ``initialized``: its ``initialize`` params when it
    was answered (:mod:`rein.acp.fast_start`), else the SDK reads it first."""
    from acp import run_agent
    from acp.schema import InitializeRequest
    from pydantic import ValidationError

    from rein.acp.agent import ReinAcpAgent

    async with anyio.create_task_group() as tg:
        agent = ReinAcpAgent(config, _model, tg, storage=storage, analyzers=analyzers, watch=watch)
        try:
            if initialized is not None:
                # Answered already: the agent takes the client's capabilities.
                try:
                    request = InitializeRequest.model_validate(initialized)
                except ValidationError as exc:
                    log.warning("initialize params the SDK does not take: %s", exc)
                    request = InitializeRequest(protocol_version=fast_start.PROTOCOL_VERSION)
                await agent.initialize(
                    request.protocol_version, request.client_capabilities, request.client_info
                )
            if first_line is not None:
                input_stream, output_stream = await _stdio(b"" if initialized else first_line)
            if isinstance(input_stream, asyncio.StreamWriter) and isinstance(
                output_stream, asyncio.StreamReader
            ):
                # What is not a JSON object is answered, never handed to the SDK.
                output_stream = GuardedReader(
                    output_stream,
                    input_stream.write,
                    on_end=agent.client_gone,
                    drain=input_stream.drain,  # a client that does not read is not read
                    initialized=initialized is not None,  # the fast start answered it
                )
            # session/close and session/resume are stable in ACP v1's later
            # schema; this SDK still files them as unstable, with
            # session/fork (unstable in the protocol too).
            await run_agent(
                agent,  # type: ignore[arg-type]
                input_stream,
                output_stream,
                use_unstable_protocol=True,
            )
        finally:
            with anyio.CancelScope(shield=True):
                await agent.aclose()


def run_acp(config_file: str | None, overrides: dict[str, Any], storage: str | None) -> int:
    """The ``rein acp`` command: 0 when the client ended the session, 2 on
    a configuration error (said on stderr before any message is read)."""
    try:
        config = build_config(config_file, overrides)
    except ConfigError as exc:
        print(f"rein acp: {exc}", file=sys.stderr)
        return 2
    from rein.store import default_storage_path

    folder = storage or config.storage_path or str(default_storage_path())
    # The sandboxes hide the folder the sessions are stored in.
    config = config.model_copy(update={"storage_path": folder})
    # The editor's first message is initialize: answered before the SDK loads.
    first_line = fast_start.read_first_line()
    answered = fast_start.answer_initialize(first_line, config)
    initialized = None
    if answered is not None:
        reply, initialized = answered
        view = memoryview(reply)
        while view:
            view = view[os.write(sys.stdout.fileno(), view) :]
        first_line = b""  # answered: the SDK does not see it
    asyncio.run(serve_acp(config, storage=folder, first_line=first_line, initialized=initialized))
    return 0
