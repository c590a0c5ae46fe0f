"""The MCP tools one session offers, kept in its agent's tool registry.

Before each run (:meth:`McpOffer.before_run`) the workspace's servers are
started if they are not yet (lazily: the first prompt that needs tools),
stale tool lists are listed again, and the registry is brought up to date;
the host then rebuilds the system prompt, so it names exactly what is
offered. Before each turn (:meth:`McpOffer.before_turn`, the agent's
``prepare_next_turn``) a ``notifications/tools/list_changed`` or an
``mcp_search_tools`` ``enable`` is picked up the same way.

The context budget: the MCP tools' definitions are counted with
:func:`rein.harness.conversation.tokens.estimate_tokens`; past ``maxToolShare`` of the
window one ``mcp_budget_warning`` is emitted (once per session) and only the
tools of servers that set ``includeTools`` are offered. With ``lazyTools``
one ``mcp_search_tools`` tool is offered instead: it finds tools by a query
and enables the ones the model names for the next turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from rein.harness.conversation.tokens import estimate_tokens
from rein.harness.events import Event, McpBudgetWarning
from rein.harness.hooks import TurnInfo
from rein.harness.tools import Tool, ToolContext, ToolRegistry, ToolResult
from rein.mcp.manager import McpManager
from rein.mcp.tools import McpTool, build_tools

__all__ = ["SEARCH_TOOL", "McpOffer", "SearchToolsArgs"]

log = logging.getLogger(__name__)

SEARCH_TOOL = "mcp_search_tools"
_MAX_MATCHES = 20


def tool_tokens(tool: Tool[Any]) -> int:
    """The estimated tokens of a tool's definition as the model receives it."""
    schema = tool.schema()
    return estimate_tokens(
        json.dumps(
            {
                "name": schema.name,
                "description": schema.description,
                "parameters": schema.parameters,
            }
        )
    )


class SearchToolsArgs(BaseModel):
    query: str = Field(
        "", description="Words to look for in the MCP tools' names and descriptions."
    )
    enable: list[str] = Field(
        default_factory=list,
        description="Names of MCP tools (as listed) to offer from the next turn on.",
    )


class SearchTools(Tool[SearchToolsArgs]):
    name = SEARCH_TOOL
    description = (
        "Find tools of the MCP servers of this workspace by words in their names and "
        "descriptions, and enable the ones you need: they are offered from the next turn on."
    )
    args_model: ClassVar[type[BaseModel]] = SearchToolsArgs
    prompt_section = (
        f"`{SEARCH_TOOL}`: find the MCP servers' tools (query) and enable the ones you "
        "need (enable: [names]); they are offered from the next turn on."
    )

    def __init__(self, offer: McpOffer) -> None:
        self._offer = offer

    async def execute(self, args: SearchToolsArgs, ctx: ToolContext) -> ToolResult:
        available = {t.name: t for t in self._offer.available}
        unknown = [n for n in args.enable if n not in available]
        enabled = [n for n in args.enable if n in available]
        self._offer.enable(enabled)
        words = args.query.lower().split()
        matches = [
            t
            for t in available.values()
            if all(w in f"{t.name} {t.info.name} {t.description}".lower() for w in words)
        ]
        lines = [
            f"- {t.name} (server {t.info.server}): {t.description.splitlines()[0] if t.description else ''}"
            for t in matches[:_MAX_MATCHES]
        ]
        parts = [
            f"{len(matches)} MCP tool(s) match" + (":" if lines else "."),
            *lines,
        ]
        if len(matches) > _MAX_MATCHES:
            parts.append(f"(first {_MAX_MATCHES} shown; narrow the query)")
        if enabled:
            parts.append(f"Enabled from the next turn on: {', '.join(enabled)}.")
        if unknown:
            parts.append(f"No MCP tool is named: {', '.join(unknown)}.")
        return ToolResult("\n".join(parts), is_error=bool(unknown) and not enabled)


class McpOffer:
    def __init__(
        self,
        manager: McpManager,
        registry: ToolRegistry,
        *,
        window: int,
        max_share: float,
        lazy: bool,
        emit: Callable[[Event], None],
        on_change: Callable[[], None],
    ) -> None:
        self.manager = manager
        self.registry = registry
        self._builtin = set(registry.names())
        self._window = window
        self._max_share = max_share
        self._lazy = lazy
        self._emit = emit
        self._on_change = on_change
        self._warned = False
        self._enabled: set[str] = set()
        self._dirty = False
        self._offered: list[str] = []
        #: Every MCP tool the servers have now (offered or not).
        self.available: list[McpTool] = []

    def enable(self, names: list[str]) -> None:
        new = set(names) - self._enabled
        if new:
            self._enabled |= new
            self._dirty = True

    async def before_run(self) -> None:
        """Start the servers (once) and offer their current tools. A failure
        is logged and the run goes on with the tools it has."""
        try:
            await self.manager.ensure_started()
            await self.manager.refresh()
            self.sync()
        except Exception:
            log.exception("preparing the MCP tools failed; the run goes on without changes")

    async def before_turn(self, info: TurnInfo) -> bool:
        """Pick up changed tool lists and enabled tools; True when the
        offered tools changed (the prompt was rebuilt)."""
        if await self.manager.refresh() or self._dirty:
            return self.sync()
        return False

    def _choose(self) -> list[Tool[Any]]:
        tools = self.available
        if self._lazy:
            chosen: list[Tool[Any]] = [SearchTools(self)] if tools else []
            return chosen + [t for t in tools if t.name in self._enabled]
        tokens = sum(tool_tokens(t) for t in tools)
        if tools and tokens > self._max_share * self._window:
            limited = {
                name
                for name, status in self.manager.servers.items()
                if status.spec.include_tools is not None
            }
            offered = [t for t in tools if t.info.server in limited]
            if not self._warned:
                self._warned = True
                self._emit(
                    McpBudgetWarning(
                        tokens=tokens,
                        window=self._window,
                        share=round(tokens / self._window, 4),
                        offered=len(offered),
                        total=len(tools),
                    )
                )
            return list(offered)
        return list(tools)

    def sync(self) -> bool:
        """Bring the registry's MCP tools up to date; the prompt follows.
        True when the offered tools changed."""
        self._dirty = False
        self.available = build_tools(
            self.manager.tool_infos(), self.manager, reserved=self._builtin | {SEARCH_TOOL}
        )
        chosen = self._choose()
        names = [t.name for t in chosen]
        for name in self._offered:
            if name in self.registry:
                self.registry.unregister(name)
        for tool in chosen:
            self.registry.register(tool)
        changed = names != self._offered
        self._offered = names
        if changed:
            self._on_change()
        return changed
