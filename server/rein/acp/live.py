"""A session ``rein acp`` serves (:class:`Live`): its workspace host, the
session and its stream of updates to the client, with what the client chose
for it (a model, a mode to apply at the next prompt). :func:`serve_session`
starts the stream, replacing an earlier one of the same session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rein.acp.update_stream import SessionUpdates
from rein.acp.updates import SessionUpdate, UpdateMapper
from rein.harness.errors import ToolError
from rein.hosting.workspace_host import KeepsTexts, WorkspaceHost
from rein.session import Mode, Session
from rein.tools.disk_read import read_text

__all__ = ["Live", "serve_session"]


@dataclass(eq=False)
class Live:
    """A session this process serves: its host, the session and its stream."""

    host: WorkspaceHost
    session: Session
    updates: SessionUpdates
    unsubscribe: Callable[[], None]
    #: The model chosen with set_config_option (None: the configured one).
    model: str | None = None
    #: A mode chosen while a prompt ran: applied before the next one.
    pending_mode: Mode | None = None
    #: The analyzers line was said (a thought, the first update of its
    #: first prompt: which languages the gate analyses, which it does not).
    told_coverage: bool = False


def serve_session(
    host: WorkspaceHost,
    session: Session,
    send: Callable[[SessionUpdate], Awaitable[None]],
    context_window: Callable[[], int],
    old: Live | None,
) -> Live:
    """Stream ``session``'s events (and the preview's) to the client with
    ``send``; ``old``, the session's earlier stream, stops, and the model
    chosen for it stays chosen."""
    if old is not None:
        old.unsubscribe()
        old.updates.close()
    view = host.view
    text_of = view.text_of if isinstance(view, KeepsTexts) else None

    def text_now(rel: str) -> str | None:
        known = text_of(rel) if text_of is not None else None
        if isinstance(known, str):
            return known
        try:
            return read_text(host.root / rel, rel).text
        except (OSError, ToolError):
            return None

    mapper = UpdateMapper(host.root, text_now, context_window)
    updates = SessionUpdates(mapper, send)
    off_session = session.subscribe(updates)
    off_preview = host.subscribe_preview(updates)

    def unsubscribe() -> None:
        off_session()
        off_preview()

    live = Live(host, session, updates, unsubscribe)
    if old is not None:
        live.model = old.model
    return live
