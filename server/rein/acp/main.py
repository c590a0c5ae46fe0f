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
import sys
from pathlib import Path
from typing import Any

from acp import run_agent

from rein.acp.agent import ReinAcpAgent
from rein.config import ReinConfig
from rein.harness.errors import ConfigError
from rein.headless.analyzers import DEFAULT_ANALYZERS, AnalyzerSpec
from rein.headless.run import build_config
from rein.providers import create_model
from rein.providers.config import ModelConfig
from rein.store import default_storage_path

__all__ = ["run_acp", "serve_acp"]

log = logging.getLogger(__name__)


def _model(config: ModelConfig) -> Any:
    config.check_usable()
    return create_model(config)


async def serve_acp(
    config: ReinConfig,
    *,
    storage: str | Path | None,
    input_stream: Any = None,
    output_stream: Any = None,
    analyzers: tuple[AnalyzerSpec, ...] = DEFAULT_ANALYZERS,
    watch: bool = True,
) -> None:
    """Serve one client over the given streams (stdio by default) until it
    leaves; then abort the runs and close the hosts."""
    agent = ReinAcpAgent(config, _model, storage=storage, analyzers=analyzers, watch=watch)
    async with agent.hosts:
        try:
            await run_agent(agent, input_stream, output_stream)  # type: ignore[arg-type]
        finally:
            await asyncio.shield(agent.abort_all("the client disconnected"))


def run_acp(config_file: str | None, overrides: dict[str, Any], storage: str | None) -> int:
    """The ``rein acp`` command: 0 when the client ended the session, 2 on
    a configuration error (said on stderr before any message is read)."""
    try:
        config = build_config(config_file, overrides)
    except ConfigError as exc:
        print(f"rein acp: {exc}", file=sys.stderr)
        return 2
    folder = storage or config.storage_path or str(default_storage_path())
    asyncio.run(serve_acp(config, storage=folder))
    return 0
