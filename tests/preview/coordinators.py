"""A preview coordinator over the fake preview process, for the preview's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from rein.harness.config import PreviewGateConfig
from rein.preview.coordinator import PreviewCoordinator
from tests.fakes.events import EventLog
from tests.fakes.preview import FakePreviewFactory

__all__ = ["config", "running"]


def config(**values: Any) -> PreviewGateConfig:
    """A preview config; without ``readiness``, up after 50 ms of quiet
    (and observed for 100 ms unless ``observationWindowMs`` says otherwise)."""
    return PreviewGateConfig.model_validate(
        {
            "command": "python app.py",
            "observationWindowMs": 100,
            "readiness": {"quietMs": 50},
            **values,
        }
    )


@asynccontextmanager
async def running(
    factory: FakePreviewFactory,
    events: Callable[[Any], None] | None = None,
    output_interval_s: float | None = None,
    **values: Any,
) -> AsyncIterator[PreviewCoordinator]:
    """The coordinator (``config(**values)``), shut down on the way out."""
    timing = {} if output_interval_s is None else {"output_interval_s": output_interval_s}
    async with anyio.create_task_group() as tg:
        preview = PreviewCoordinator(
            factory, config(**values), emit=events or EventLog(), spawn=tg.start_soon, **timing
        )
        try:
            yield preview
        finally:
            await preview.shutdown()
            tg.cancel_scope.cancel()
