"""MCP: the configuration ports and a server connection for unit tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any


class FakeMcpPorts:
    """McpConfigPorts for unit tests: inputs answered from ``answers`` (a
    missing id: None, nobody answered), trust answered by ``trust_answer``;
    every question recorded in ``asked_inputs`` / ``asked_trust``."""

    def __init__(self, answers: Mapping[str, str] | None = None, trust_answer: bool = True) -> None:
        from rein.mcp.trust import MemoryTrustStore

        self.answers = dict(answers or {})
        self.trust_answer = trust_answer
        #: Any TrustStore (a test may put a FileTrustStore here).
        self.trust: Any = MemoryTrustStore()
        self.asked_inputs: list[str] = []
        self.asked_trust: list[str] = []
        #: The whole spec each trust question was given (its env, headers).
        self.asked_specs: list[Any] = []

    async def ask_input(self, spec: Any) -> str | None:
        self.asked_inputs.append(spec.id)
        return self.answers.get(spec.id)

    async def confirm_trust(self, spec: Any) -> bool:
        self.asked_trust.append(spec.command_line())
        self.asked_specs.append(spec)
        return self.trust_answer


class FakeMcpConnection:
    """An MCP server connection for unit tests of the offer and the manager
    (``McpManager(connect=FakeMcpConnection.factory(tools))``): it lists
    ``tools`` ({server: [McpToolInfo]}) and answers every call with the
    arguments echoed. ``starts``: the outcome of each start in order
    (True: it starts, False: it fails; past the list: it starts); a call
    of the tool "crash" fails as a closed connection."""

    def __init__(self, spec: Any, tools: list[Any], starts: list[bool] | None = None) -> None:
        self.spec = spec
        self.tools = tools
        self.closed = False
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._starts = starts if starts is not None else []

    @staticmethod
    def factory(
        tools: Mapping[str, list[Any]], starts: list[bool] | None = None
    ) -> Callable[[Any, Callable[[], None], Callable[[str], None]], Any]:
        shared = starts if starts is not None else []

        def make(
            spec: Any, on_tools_changed: Callable[[], None], on_closed: Callable[[str], None]
        ) -> FakeMcpConnection:
            return FakeMcpConnection(spec, list(tools.get(spec.name, [])), shared)

        return make

    async def start(self, timeout_s: float) -> None:
        if self._starts and not self._starts.pop(0):
            raise RuntimeError("the fake server does not start")

    async def list_tools(self) -> list[Any]:
        return list(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        from rein.mcp.tools import McpCallFailed

        self.calls.append((tool, arguments))
        if tool == "crash":
            self.closed = True
            raise McpCallFailed("closed", "the connection closed")
        return {"content": [{"type": "text", "text": f"{tool} {json.dumps(arguments)}"}]}

    async def stop(self) -> None:
        self.closed = True
