"""Diagnostics-driven auto-repair (``autoRepair: "onSave"``).

After a save, if the file still has error diagnostics when a debounce (1.5 s)
has passed with no edit to it, and no run is active, a repair run scoped to that file starts with a
small turn and repair budget (:func:`repair_config`: the person's harness
settings with the budget lowered, everything else kept). With the vscode-lm
provider it waits for the person's consent (``rein/lm/consent``). Typing in that file cancels it; the same set
of diagnostics never triggers twice; every start and outcome is an event.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from rein.harness import HarnessConfig
from rein.harness.events import AutoRepair

if TYPE_CHECKING:
    from rein.hosting.folder import FolderHost
    from rein.lsp.editor import EditorWorkspace
    from rein.lsp.editor_settings import EditorSettings
    from rein.session import Session

__all__ = [
    "REPAIR_MAX_MODEL_TURNS",
    "REPAIR_MAX_REPAIR_ATTEMPTS",
    "AutoRepairer",
    "repair_config",
]

log = logging.getLogger(__name__)

DEBOUNCE_S = 1.5
#: How long a save that came before the editor's configuration waits for it.
CONFIGURATION_WAIT_S = 15.0
#: An auto-repair run's budget: at most this many model calls and repairs
#: (less when the person's own harness settings allow less).
REPAIR_MAX_MODEL_TURNS = 12
REPAIR_MAX_REPAIR_ATTEMPTS = 1
NO_CONSENT = (
    "the vscode-lm provider has no consent yet: send a prompt from the Rein panel and "
    "allow Rein to use VS Code's language models first"
)


def repair_config(harness: HarnessConfig) -> HarnessConfig:
    """The harness settings of an auto-repair run: the person's, with the
    turn and repair budget capped (never raised)."""
    return harness.model_copy(
        update={
            "max_model_turns_per_run": min(harness.max_model_turns_per_run, REPAIR_MAX_MODEL_TURNS),
            "max_repair_attempts": min(harness.max_repair_attempts, REPAIR_MAX_REPAIR_ATTEMPTS),
        }
    )


class AutoRepairer:
    """Auto-repair in the folder ``folder``: ``settings`` are the editor's
    (a save that comes before they are known is judged once they are);
    ``new_session(**spec)`` makes the repair's session (as
    ``rein/newSession`` would); ``report(session, event)`` tells the editor
    of each start and outcome; ``waits_for_consent()`` says whether the
    model a new session gets is the editor's and no person allowed it yet."""

    def __init__(
        self,
        folder: FolderHost[EditorWorkspace],
        settings: EditorSettings,
        new_session: Callable[..., Session],
        report: Callable[[Session | None, AutoRepair], None],
        waits_for_consent: Callable[[], bool],
        debounce_s: float = DEBOUNCE_S,
    ) -> None:
        self.folder = folder
        self._settings = settings
        self._new_session = new_session
        self._report = report
        self._waits_for_consent = waits_for_consent
        self.debounce_s = debounce_s
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._running: dict[str, Session] = {}
        self._seen: set[tuple[str, str]] = set()

    def enabled(self) -> bool:
        return self._settings.config.auto_repair == "onSave"

    def on_save(self, uri: str) -> None:
        if self._settings.configured() and not self.enabled():
            return
        previous = self._pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self._pending[uri] = asyncio.ensure_future(self._after_debounce(uri))

    def on_person_edit(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        session = self._running.get(uri)
        if session is not None and session.busy:
            session.abort("the person edited the file during auto-repair")
            self._report(
                session, AutoRepair(phase="cancelled", uri=uri, reason="the person edited the file")
            )

    async def _errors(self, uri: str) -> list[str]:
        workspace, coordinator = self.folder.workspace, self.folder.diagnostics
        rel = workspace.relative(uri)
        if rel is None:
            return []
        snap = await coordinator.snapshot([rel], min_generation=workspace.generation)
        return sorted(f"{d.line}:{d.code}:{d.message}" for d in snap.diagnostics if d.severity == 1)

    async def _after_debounce(self, uri: str) -> None:
        try:
            # A save that came before the editor's configuration is judged by
            # it as it first arrives (not by a later change: auto-repair
            # switched on afterwards does not reach back to this save) ...
            await self._settings.ready(CONFIGURATION_WAIT_S)
            if not self.enabled():
                return
            await asyncio.sleep(self.debounce_s)
            if not self.enabled():
                return  # ... and one switched off during the debounce is not repaired
            errors = await self._errors(uri)
            if not errors:
                return
            key = (uri, hashlib.sha256("\n".join(errors).encode()).hexdigest())
            if key in self._seen:
                self._report(
                    None,
                    AutoRepair(
                        phase="skipped", uri=uri, reason="these diagnostics were already tried"
                    ),
                )
                return
            unusable = self._settings.config.model.unusable
            if unusable is not None:
                # The model settings are invalid (already reported): no run, no request.
                self._report(None, AutoRepair(phase="skipped", uri=uri, reason=unusable))
                return
            if self._waits_for_consent():
                # No person started this run: the editor's models wait for consent.
                self._report(None, AutoRepair(phase="skipped", uri=uri, reason=NO_CONSENT))
                return
            if self.folder.manager.active():
                self._report(None, AutoRepair(phase="skipped", uri=uri, reason="a run is active"))
                return
            self._seen.add(key)
            await self._repair(uri, errors)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("auto-repair for %s failed", uri)
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                del self._pending[uri]

    async def _repair(self, uri: str, errors: list[str]) -> None:
        rel = self.folder.workspace.relative(uri) or uri
        session = self._new_session(
            mode="agent",
            title=f"Auto-repair {rel}",
            origin="autoRepair",
            harness=repair_config(self._settings.config.harness),
        )
        self._running[uri] = session
        self._report(session, AutoRepair(phase="started", uri=uri))
        listing = "\n".join(
            f"- line {int(e.split(':', 1)[0]) + 1}: {e.split(':', 2)[2]}" for e in errors
        )
        text = (
            f"The person saved {rel} and it has these errors:\n{listing}\n"
            f"Fix them in {rel} with the smallest change. Do not touch other files unless the "
            "fix needs it."
        )
        try:
            result = await self.folder.manager.run_prompt(session, text)
            self._report(
                session,
                AutoRepair(phase="finished", uri=uri, status=result.status, reason=result.error),
            )
        finally:
            self._running.pop(uri, None)
