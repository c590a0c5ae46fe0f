"""The tests gate's texts of the changed files before the run.

Before the run first changes a file (``before_change``) the gate keeps the
file's text (None: it did not exist); a file a command changed gets its
text before the command (:mod:`rein.testgate.before_commands`: the
workspace is walked before a command and, after one, at the next change
or verdict), else from a :class:`PriorTexts` source when there is one
(:func:`~rein.testgate.overlays.texts_before`). A stored session keeps
them (:meth:`TextsBeforeRun.export_state`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rein.harness.errors import ReinError
from rein.harness.gating.gate_types import PriorTexts
from rein.harness.ports import Workspace
from rein.testgate.before_commands import TextsBeforeCommands
from rein.testgate.overlays import texts_before

__all__ = ["MAX_STORED_TEXT", "TextsBeforeRun"]

log = logging.getLogger(__name__)

#: A stored session keeps a file's earlier text up to this size.
MAX_STORED_TEXT = 1_000_000


class TextsBeforeRun:
    """The run's changed files before it (see the module docstring)."""

    def __init__(self, root: Path, prior_texts: PriorTexts | None) -> None:
        self.root = root
        self.prior_texts = prior_texts
        #: path -> its text before the run first changed it (None: absent).
        self.prior: dict[str, str | None] = {}
        #: The files' texts before commands changed them.
        self._before_commands = TextsBeforeCommands(root)
        #: A command ran since the last walk.
        self.commands_ran = False

    async def command_starts(self) -> float:
        """A command is about to run: what it changes is known after it
        ran, by the walk at the next change or verdict. The walk's time."""
        took = await self.walk()
        self.commands_ran = True
        return took

    async def keep(self, paths: Sequence[str], workspace: Workspace) -> None:
        """The run is about to change ``paths``: each one's text now, unless
        an earlier one is known."""
        for path in paths:
            if path in self.prior:
                continue
            try:
                exists = await workspace.exists(path)
                self.prior[path] = (await workspace.read_text(path)).text if exists else None
            except (ReinError, OSError, UnicodeDecodeError):
                log.debug("tests gate: no earlier text for %s", path)

    async def walk(self) -> float:
        """Walk the workspace (:mod:`rein.testgate.before_commands`) before a
        command and, after one, at the next change or verdict. What changed
        since the walk before is the command's only when one ran in between
        (else the person's, or what the last validation already judged):
        then each such file keeps its earlier text as its text before the
        run, unless an earlier one is known. The walk's time."""
        started = time.monotonic()
        changed = await asyncio.to_thread(self._before_commands.walk)
        if self.commands_ran:
            self.commands_ran = False
            for path, text in changed.items():
                self.prior.setdefault(path, text)
        return time.monotonic() - started

    def never_there(self, path: str) -> bool:
        """``path`` is no file now and was none before the run."""
        if path in self.prior or (self.root / path).exists():
            return False
        return self._before_commands.never_there(path)

    def forget(self) -> None:
        """Validated: what changes next is not this run's."""
        self.prior.clear()
        self.commands_ran = False

    def baseline(self, changed: Sequence[str]) -> tuple[dict[str, str | None], list[str]]:
        """Each changed file before the run; the files whose earlier text
        is not known (:func:`~rein.testgate.overlays.texts_before`)."""
        return texts_before(changed, self.prior, self.prior_texts)

    def export_state(self) -> dict[str, Any]:
        prior = {
            path: text
            for path, text in self.prior.items()
            if text is None or len(text) <= MAX_STORED_TEXT
        }
        return {"prior": prior} if prior else {}

    def import_state(self, data: dict[str, Any]) -> None:
        stored = data.get("prior")
        if isinstance(stored, dict):
            self.prior = {str(k): v for k, v in stored.items() if v is None or isinstance(v, str)}
