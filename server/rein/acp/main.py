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
from typing import TYPE_CHECKING, Any

import anyio
from acp import run_agent

from rein.acp.agent import ReinAcpAgent
from rein.config import ReinConfig
from rein.harness.errors import ConfigError
from rein.headless.config_file import build_config
from rein.providers.config import ModelConfig

if TYPE_CHECKING:
    from rein.headless.analyzers import AnalyzerSpec

__all__ = ["run_acp", "serve_acp"]

log = logging.getLogger(__name__)


def _model(config: ModelConfig) -> Any:
    from rein.providers import create_model

    config.check_usable()
    return create_model(config)


async def serve_acp(
    config: ReinConfig,
    *,
    storage: str | Path | None,
    input_stream: Any = None,
    output_stream: Any = None,
    analyzers: tuple[AnalyzerSpec, ...] | None = None,
    watch: bool = True,
) -> None:
    """Serve one client over the given streams (stdio by default) until it
    leaves; then abort the runs and close the hosts."""
    async with anyio.create_task_group() as tg:
        agent = ReinAcpAgent(config, _model, tg, storage=storage, analyzers=analyzers, watch=watch)
        try:
            # The SDK's Agent protocol also lists its unstable methods
            # (session/fork, session/resume, session/close): Rein implements
            # protocol version 1 only.
            await run_agent(agent, input_stream, output_stream)  # type: ignore[arg-type]
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
    asyncio.run(serve_acp(config, storage=folder))
    return 0
