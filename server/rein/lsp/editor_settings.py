"""The editor's ``rein`` settings: the initialization options kept until
``initialized``, each change validated key by key (an invalid value falls
back to the last good one, reported once), and the bounded wait for the
first configuration that requests make before they run.

Imported with the server (``rein serve`` starts fast): :mod:`rein.config`
is imported on first use."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rein.config import ReinConfig

__all__ = ["EditorSettings"]

log = logging.getLogger(__name__)


class EditorSettings:
    """The configuration the editor gave; ``report`` shows the person one
    invalid setting (its message names the key and the allowed values)."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self._report = report
        self._config: ReinConfig | None = None
        self._init_options: dict[str, Any] = {}
        #: The invalid settings already reported, as (key, problem).
        self._reported: set[tuple[str, str]] = set()
        #: Set once the configuration is known (``initialized`` handled).
        self._configured: asyncio.Event | None = None
        #: Called with each configuration set (the parts built before the
        #: editor's configuration arrived follow it: the folder's timings).
        self.on_change: list[Callable[[ReinConfig], None]] = []

    @property
    def config(self) -> ReinConfig:
        if self._config is None:
            from rein.config import ReinConfig

            self._config = ReinConfig()
        return self._config

    @config.setter
    def config(self, value: ReinConfig) -> None:
        self._config = value
        for listener in list(self.on_change):
            listener(value)

    def apply(self, data: Any, source: str) -> bool:
        """Validate and apply a ``rein`` section key by key
        (:func:`rein.config.resolve_config`): an invalid value falls back to
        the last good value of that key (or its default), an invalid model
        endpoint makes runs fail; each invalid setting is reported once,
        naming the key and the allowed values. False when one was invalid."""
        from rein.config import resolve_config

        merged = dict(self._init_options)
        if isinstance(data, dict):
            merged.update(data)
        resolved = resolve_config(merged, self._config, source)
        self.config = resolved.config
        current = {(issue.key, issue.problem) for issue in resolved.issues}
        for issue in resolved.issues:
            if (issue.key, issue.problem) in self._reported:
                continue
            message = issue.message(source)
            log.warning("%s", message)
            self._report(message)
        # A setting fixed and broken again is reported again.
        self._reported = current
        return not resolved.issues

    def keep_initialization_options(self, options: Any) -> None:
        """Keep the ``rein`` section of the initialization options; it is
        validated (with the editor's settings) once ``initialized`` arrives."""
        if isinstance(options, dict):
            section = options.get("rein", options)
            self._init_options = dict(section) if isinstance(section, dict) else {}

    def configured(self) -> bool:
        """Whether the configuration is known (the editor's, or the
        initialization options once it did not come in time)."""
        return self.configured_event().is_set()

    def configured_event(self) -> asyncio.Event:
        if self._configured is None:
            self._configured = asyncio.Event()
        return self._configured

    async def ready(self, timeout_s: float) -> None:
        """Wait (bounded) until the configuration is applied: requests that
        arrive between ``initialized`` and the editor's answer to
        ``workspace/configuration`` must not run with the defaults."""
        event = self.configured_event()
        if event.is_set():
            return
        try:
            await asyncio.wait_for(event.wait(), timeout_s)
        except TimeoutError:
            log.warning(
                "no configuration after %.0f s; using the initialization options", timeout_s
            )
            self.apply({}, "initializationOptions")
            event.set()
