"""What the ACP ports share: the session a task works for and the link to
the client.

The agent sets :data:`current_session` around every prompt's run; asyncio
and anyio tasks copy the context when they start, so the tools, the gates
and the subagents of that run see it, and the ports that call the client
(``fs/*``, ``terminal/*``, ``session/request_permission``) name the right
session.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities

__all__ = ["ClientLink", "current_session"]

#: The ACP session whose run this task belongs to (None outside a run).
current_session: ContextVar[str | None] = ContextVar("rein_acp_session", default=None)


class ClientLink(Protocol):
    """The connection to the client, as the ports see it."""

    #: What the client offered in ``initialize`` (None before it).
    capabilities: ClientCapabilities | None

    @property
    def conn(self) -> Client:
        """The SDK's connection to the client (its requests and notifications)."""
        ...
