"""The MCP servers of one workspace: started lazily, in parallel, each start
bounded; restarted with backoff after a crash; stopped on shutdown.

One :class:`McpManager` is shared by the sessions of a server process.
Its tool set is every running server's tools whose schema the providers
can take (:func:`rein.mcp.schemas.schema_problem`; others are listed as
skipped), filtered by the server's ``includeTools``/``excludeTools``.
``notifications/tools/list_changed`` marks a server's list stale; it is
listed again by :meth:`McpManager.refresh` (the sessions call it before
each turn). State changes go to the listeners as
:class:`~rein.harness.events.McpServerState` events.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from rein.harness.ports import ProcessSandbox
from rein.harness.reported import reported_logger
from rein.harness.tools import ToolResult
from rein.mcp.config import McpServers, McpServerSpec, Skipped
from rein.mcp.results import map_result
from rein.mcp.schemas import schema_problem
from rein.mcp.tools import McpCallFailed, McpToolInfo

if TYPE_CHECKING:
    from rein.mcp.client import McpConnection

__all__ = ["McpManager", "ServerState", "ServerStatus", "sandboxed_connections"]

log = logging.getLogger(__name__)
#: What the server's state event also says (``rein run`` prints it once).
reported_log = reported_logger(__name__)

ServerState = Literal["starting", "running", "failed", "stopped", "skipped"]

#: Start bound of one server (spawn, initialize, first tools/list).
START_TIMEOUT_S = 30.0
#: Restarts after a crash, and the waits before them.
RESTART_BACKOFF_S: tuple[float, ...] = (1.0, 4.0, 15.0)


class Connection(Protocol):
    closed: bool

    async def start(self, timeout_s: float) -> None: ...
    async def list_tools(self) -> list[McpToolInfo]: ...
    async def call(
        self, tool: str, arguments: dict[str, Any], timeout_s: float
    ) -> dict[str, Any]: ...
    async def stop(self) -> None: ...


#: (spec, on_tools_changed, on_closed(why)) -> a connection not started yet;
#: ``on_closed`` is called when the connection ends on its own (a crash).
ConnectionFactory = Callable[[McpServerSpec, Callable[[], None], Callable[[str], None]], Connection]


def _sdk_connection(
    spec: McpServerSpec,
    on_tools_changed: Callable[[], None],
    on_closed: Callable[[str], None],
    sandbox: ProcessSandbox | None = None,
) -> Connection:
    from rein.mcp.client import McpConnection  # the SDK: only once a server is configured

    connection: McpConnection = McpConnection(
        spec, on_tools_changed=on_tools_changed, on_closed=on_closed, sandbox=sandbox
    )
    return connection


def sandboxed_connections(sandbox: ProcessSandbox) -> ConnectionFactory:
    """The SDK's connections, their stdio servers started through ``sandbox``."""

    def connect(
        spec: McpServerSpec, on_tools_changed: Callable[[], None], on_closed: Callable[[str], None]
    ) -> Connection:
        return _sdk_connection(spec, on_tools_changed, on_closed, sandbox)

    return connect


@dataclass(slots=True)
class ServerStatus:
    spec: McpServerSpec
    state: ServerState = "stopped"
    tools: list[McpToolInfo] = field(default_factory=list)
    #: Tools not offered: (tool, why).
    skipped_tools: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    connection: Connection | None = None
    stale: bool = False
    restarts: int = 0

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.spec.name,
            "source": self.spec.source,
            "transport": self.spec.transport,
            "state": self.state,
            "tools": [t.name for t in self.tools],
        }
        if self.skipped_tools:
            data["skippedTools"] = [{"tool": t, "reason": r} for t, r in self.skipped_tools]
        if self.error:
            data["error"] = self.error
        return data


StateListener = Callable[[ServerStatus], None]


class McpManager:
    def __init__(
        self,
        specs: Sequence[McpServerSpec] = (),
        *,
        skipped: Iterable[Skipped] = (),
        load: Callable[[], Awaitable[McpServers]] | None = None,
        fingerprint: Callable[[], object] | None = None,
        connect: ConnectionFactory = _sdk_connection,
        start_timeout_s: float = START_TIMEOUT_S,
        restart_backoff_s: Sequence[float] = RESTART_BACKOFF_S,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.servers: dict[str, ServerStatus] = {}
        self.skipped: list[dict[str, str]] = []
        #: File-level configuration problems (from ``load``).
        self.errors: list[str] = []
        self._load = load
        self._take_config(McpServers(servers=list(specs), skipped=list(skipped)))
        self._connect = connect
        self._start_timeout_s = start_timeout_s
        self._backoff = tuple(restart_backoff_s)
        self._sleep = sleep
        self._listeners: list[StateListener] = []
        self._start_lock = asyncio.Lock()
        self._restarts: set[asyncio.Task[None]] = set()
        #: The configuration was loaded (by the first start).
        self._loaded = False
        #: ensure_started ran (servers added later start at once).
        self._started = False
        #: Servers given with :meth:`add` (kept when the configuration changes).
        self._added: dict[str, McpServerSpec] = {}
        #: Says when the configuration changed (files, settings); None: never.
        self._fingerprint = fingerprint
        self._seen_fingerprint: object = None
        self._closed = False

    def _take_config(self, config: McpServers) -> None:
        for spec in config.servers:
            if not spec.disabled:
                self.servers[spec.name] = ServerStatus(spec)
        self.skipped.extend(
            {"name": s.name, "source": s.source, "reason": s.reason} for s in config.skipped
        )
        self.errors.extend(config.errors)

    @property
    def configured(self) -> bool:
        """Servers may exist: some were given, or they are still to be loaded."""
        return bool(self.servers) or self._load is not None

    def subscribe(self, listener: StateListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _set(self, status: ServerStatus, state: ServerState, error: str | None = None) -> None:
        status.state = state
        status.error = error
        for listener in list(self._listeners):
            try:
                listener(status)
            except Exception:
                log.exception("an MCP state listener failed")

    async def ensure_started(self) -> None:
        """Start every server not started yet, in parallel. The configuration
        is read by the first call, and again when ``fingerprint`` says it
        changed (servers removed are stopped, changed ones restarted, new
        ones started). A failed start is that server's "failed" state."""
        async with self._start_lock:
            if self._closed:
                return
            if self._load is not None and (not self._loaded or self._config_changed()):
                await self._reload()
            self._started = True
            waiting = [s for s in self.servers.values() if s.state == "stopped"]
            if not waiting:
                return
            try:
                await asyncio.gather(*(self._start(s) for s in waiting))
            except asyncio.CancelledError:
                # The run was aborted while servers started: the next run
                # starts the ones that did not get there.
                for status in waiting:
                    if status.state == "starting":
                        status.connection = None
                        self._set(
                            status, "stopped", "the start was cancelled (the run was aborted)"
                        )
                raise

    def _config_changed(self) -> bool:
        if self._fingerprint is None:
            return False
        try:
            return self._fingerprint() != self._seen_fingerprint
        except Exception:
            log.exception("checking the MCP configuration for changes failed")
            return False

    async def _reload(self) -> None:
        """Read the configuration (again) and bring the servers in line."""
        assert self._load is not None
        first = not self._loaded
        self._loaded = True
        if self._fingerprint is not None:
            try:
                self._seen_fingerprint = self._fingerprint()
            except Exception:
                log.exception("checking the MCP configuration for changes failed")
        try:
            config = await self._load()
        except Exception as exc:
            log.exception("reading the MCP server configuration failed")
            self.errors.append(f"reading the MCP server configuration failed: {exc}")
            return
        if first:
            self._take_config(config)
        else:
            await self._apply_changes(config)
        for skipped in self.skipped:
            for listener in list(self._listeners):
                listener(_skipped_status(skipped))

    async def _apply_changes(self, config: McpServers) -> None:
        """A changed configuration: stop the servers removed or changed; the
        changed and new ones are "stopped", so they start next."""
        wanted = {spec.name: spec for spec in config.servers if not spec.disabled}
        for name, given in self._added.items():
            wanted.setdefault(name, given)
        stops: list[Awaitable[None]] = []
        for name, status in list(self.servers.items()):
            spec = wanted.get(name)
            if spec == status.spec:
                continue
            if status.connection is not None:
                stops.append(status.connection.stop())
                status.connection = None
            status.tools = []
            if spec is None:
                del self.servers[name]
                self._set(status, "stopped", "removed from the configuration")
        await asyncio.gather(*stops, return_exceptions=True)
        for name, spec in wanted.items():
            current = self.servers.get(name)
            if current is None or current.spec != spec:
                self.servers[name] = ServerStatus(spec)
        self.skipped = []
        self.errors = []
        self._take_config(McpServers(skipped=config.skipped, errors=config.errors))

    async def add(self, specs: Sequence[McpServerSpec]) -> list[str]:
        """Servers given after the manager was made (``rein acp``: the ones
        the client passes with ``session/new``): registered, and started at
        once when the others already were. A name already known keeps its
        server. The names added."""
        async with self._start_lock:
            added = [s for s in specs if s.name not in self.servers and not s.disabled]
            for spec in added:
                self.servers[spec.name] = ServerStatus(spec)
                self._added[spec.name] = spec
            if self._started and not self._closed:
                await asyncio.gather(*(self._start(self.servers[s.name]) for s in added))
        return [s.name for s in added]

    async def _start(self, status: ServerStatus) -> bool:
        self._set(status, "starting")
        name = status.spec.name

        def changed() -> None:
            status.stale = True

        def closed(why: str) -> None:
            # Its output ended between calls (or during one): a crash.
            self._crashed(status, why, connection)

        connection = self._connect(status.spec, changed, closed)
        try:
            await connection.start(self._start_timeout_s)
            async with asyncio.timeout(self._start_timeout_s):
                tools = await connection.list_tools()
        except Exception as exc:
            await connection.stop()
            status.connection, status.tools = None, []
            self._set(status, "failed", f"{exc}")
            # The text, not the exception: a kept record would hold its frames.
            reported_log.warning("MCP server %s failed to start: %s", name, status.error)
            return False
        status.connection = connection
        self._take_tools(status, tools)
        self._set(status, "running")
        return True

    def _take_tools(self, status: ServerStatus, tools: list[McpToolInfo]) -> None:
        spec = status.spec
        kept: list[McpToolInfo] = []
        skipped: list[tuple[str, str]] = []
        for tool in tools:
            if spec.include_tools is not None and tool.name not in spec.include_tools:
                continue
            if tool.name in spec.exclude_tools:
                continue
            problem = schema_problem(tool.input_schema)
            if problem is not None:
                skipped.append((tool.name, problem))
                continue
            kept.append(tool)
        status.tools, status.skipped_tools, status.stale = kept, skipped, False

    async def refresh(self) -> bool:
        """List the tools again of servers that said their list changed;
        True when some did."""
        refreshed = False
        for status in self.servers.values():
            if not status.stale or status.connection is None or status.state != "running":
                continue
            try:
                tools = await asyncio.wait_for(
                    status.connection.list_tools(), self._start_timeout_s
                )
            except Exception as exc:
                log.warning(
                    "MCP server %s: listing its tools again failed: %s", status.spec.name, exc
                )
                continue
            self._take_tools(status, tools)
            self._set(status, "running")
            refreshed = True
        return refreshed

    def tool_infos(self) -> list[McpToolInfo]:
        """The tools offered, by server then tool name."""
        return sorted(
            (t for s in self.servers.values() if s.state == "running" for t in s.tools),
            key=lambda t: (t.server, t.name),
        )

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """One call; every failure is an error result the model reads."""
        status = self.servers.get(server)
        details = {"mcpServer": server, "mcpTool": tool}
        if status is None or status.connection is None or status.state != "running":
            state = status.state if status is not None else "unknown"
            return ToolResult(
                f"The MCP server {server} is not running (state: {state}"
                + (f"; {status.error}" if status and status.error else "")
                + f"), so {tool} cannot be called now.",
                is_error=True,
                details=details,
            )
        connection = status.connection
        try:
            result = await connection.call(tool, arguments, status.spec.timeout_s)
        except McpCallFailed as exc:
            if exc.kind == "closed":
                self._crashed(status, str(exc), connection)
                return ToolResult(
                    f"The MCP server {server} stopped while running {tool} ({exc}); the call "
                    "did not complete. Rein restarts the server; you may try again later.",
                    is_error=True,
                    details={**details, "failure": exc.kind},
                )
            return ToolResult(
                f"The MCP tool {tool} of server {server} failed: {exc}",
                is_error=True,
                details={**details, "failure": exc.kind},
            )
        return map_result(result, server=server, tool=tool)

    def _crashed(self, status: ServerStatus, error: str, connection: Connection) -> None:
        """``connection`` of ``status`` ended on its own: say so, restart it.
        Once per connection (a call and the connection's end may both tell)."""
        if status.connection is not connection or self._closed:
            return
        status.connection, status.tools = None, []
        # Said by the state's event (rein run prints it): logged for the editor's log.
        reported_log.warning("MCP server %s crashed: %s; restarting it", status.spec.name, error)
        self._set(status, "failed", f"crashed: {error}; restarting it")
        task = asyncio.get_running_loop().create_task(self._restart(status, connection))
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def _restart(self, status: ServerStatus, old: Connection | None) -> None:
        if old is not None:
            await old.stop()
        for attempt, delay in enumerate(self._backoff, start=1):
            await self._sleep(delay)
            if self._closed:
                return
            status.restarts += 1
            if await self._start(status):
                return
            assert status.error is not None
            status.error = f"restart {attempt} of {len(self._backoff)} failed: {status.error}"
        self._set(
            status,
            "failed",
            f"gave up after {len(self._backoff)} restarts: {status.error}",
        )

    async def restarts_settled(self) -> None:
        """Returns once no restart is in progress (tests, ``rein mcp list``)."""
        while self._restarts:
            await asyncio.gather(*self._restarts, return_exceptions=True)

    def snapshot(self) -> dict[str, Any]:
        """``rein/mcpServers``: every server's state and tools, and the skipped ones."""
        data: dict[str, Any] = {
            "servers": [s.as_json() for s in self.servers.values()],
            "skipped": list(self.skipped),
        }
        if self.errors:
            data["errors"] = list(self.errors)
        return data

    async def aclose(self) -> None:
        """Stop every server (and any restart in progress)."""
        self._closed = True
        for task in list(self._restarts):
            task.cancel()
        await asyncio.gather(*self._restarts, return_exceptions=True)
        stops = []
        for status in self.servers.values():
            if status.connection is not None:
                stops.append(status.connection.stop())
                status.connection = None
                self._set(status, "stopped")
        await asyncio.gather(*stops, return_exceptions=True)


def _skipped_status(skipped: dict[str, str]) -> ServerStatus:
    """A skipped server as a status for the listeners (state "skipped")."""
    spec = McpServerSpec(
        name=skipped["name"],
        source=skipped["source"],  # type: ignore[arg-type]
        transport="stdio",
        trusted=False,
    )
    return ServerStatus(spec, state="skipped", error=skipped["reason"])
