"""MCP configuration's questions in the editor.

An input (``${input:id}`` of ``.vscode/mcp.json``) is asked with
``rein/askUser`` (``password`` hides the text, ``options`` for a
pickString) and ``remember: "mcp-input:<id>"``: the extension keeps the
answer in its SecretStorage for this workspace and answers without asking
next time; Rein itself never stores it. A workspace-defined server is
trusted with a ``rein/confirm`` naming its command line (or URL), remembered
in Rein's storage folder (:class:`~rein.mcp.trust.FileTrustStore`).

An editor without the method, or no answer within ``approval.timeoutMs``,
refuses: the server is skipped and the reason says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rein.lsp.editor_ask import approved, ask_editor
from rein.mcp.config import McpConfigError, given_lines
from rein.mcp.spec import InputSpec, McpServerSpec
from rein.mcp.trust import FileTrustStore

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = ["EditorMcpPorts", "input_request", "trust_request"]

#: Only workspace-defined servers are asked about: a "settings" one is from
#: the workspace's settings (``mcp.workspaceServers``).
_WHERE = {
    "vscode": ".vscode/mcp.json",
    "mcp.json": ".mcp.json",
    "settings": "the workspace settings",
}


def input_request(spec: InputSpec) -> dict[str, Any]:
    """The ``rein/askUser`` params of an input."""
    params: dict[str, Any] = {
        "title": f"MCP server input: {spec.id}",
        "question": spec.description or f"The value of ${{input:{spec.id}}}",
        "password": spec.password,
        "remember": f"mcp-input:{spec.id}",
    }
    if spec.options:
        params["options"] = list(spec.options)
    if spec.default is not None:
        params["default"] = spec.default
    return params


def trust_request(spec: McpServerSpec) -> dict[str, Any]:
    """The ``rein/confirm`` params of the trust question."""
    what = "connects to" if spec.transport == "http" else "runs"
    cwd = f"\n(in {spec.cwd})" if spec.cwd else ""
    cwd += "".join(f"\n{line}" for line in given_lines(spec))
    return {
        "tool": "mcp",
        "title": f"Trust the MCP server '{spec.name}' from {_WHERE[spec.source]}?",
        "detail": f"It {what}:\n{spec.command_line()}{cwd}\n\n"
        "Allow only if you trust this workspace's configuration; a changed command asks again.",
    }


class EditorMcpPorts:
    """:class:`~rein.mcp.config.McpConfigPorts` over ``rein/askUser`` and
    ``rein/confirm``."""

    def __init__(self, client: ClientChannel, storage: Path | Callable[[], Path]) -> None:
        self.client = client
        self._storage = storage

    @property
    def trust(self) -> FileTrustStore:
        """In the storage folder configured now (``storagePath``)."""
        return FileTrustStore(self._storage() if callable(self._storage) else self._storage)

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        return await ask_editor(self.client, method, params, McpConfigError)

    async def ask_input(self, spec: InputSpec) -> str | None:
        result = await self._request("rein/askUser", input_request(spec))
        answer = result.get("answer") if isinstance(result, dict) else None
        if not isinstance(answer, str) or not answer:
            return None
        if spec.options and answer not in spec.options:
            raise McpConfigError(f"the answer is not one of {', '.join(spec.options)}")
        return answer

    async def confirm_trust(self, spec: McpServerSpec) -> bool:
        return approved(await self._request("rein/confirm", trust_request(spec)))
