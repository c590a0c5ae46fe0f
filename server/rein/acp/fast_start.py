"""``initialize`` answered before the ACP SDK is imported.

Importing the SDK (its pydantic models of the whole protocol) costs about as
long as ``rein serve`` takes to answer its own ``initialize``. The first
message an editor sends is ``initialize``, and its answer depends only on
the configuration, so ``rein acp`` reads that first line from stdin itself,
answers it with the JSON the agent would give (:func:`initialize_result`;
a test compares it with :meth:`rein.acp.agent.ReinAcpAgent.initialize`),
then imports the SDK and serves the rest of the connection. An
``initialize`` whose ``protocolVersion`` is an integer outside ACP's
``uint16`` (0 to 65535) is refused here, with InvalidParams naming the field
(the SDK would take it for version 1 after its own check passed it by); a
higher version than Rein's is answered with Rein's, as the protocol says. A
first line that is not a well-formed ``initialize`` request is left to the
SDK, which answers it as it answers any message.
"""

from __future__ import annotations

import importlib.util
import json
import os
from typing import Any

from rein import __version__
from rein.config import ReinConfig

__all__ = [
    "FIRST_LINE_LIMIT",
    "PROTOCOL_VERSION",
    "answer_initialize",
    "initialize_result",
    "mcp_available",
    "missing_key",
    "read_first_line",
]

#: The ACP protocol version Rein implements (the SDK's PROTOCOL_VERSION).
PROTOCOL_VERSION = 1
#: A first line longer than this is not an ``initialize`` worth a fast answer.
FIRST_LINE_LIMIT = 1 << 20
#: ``protocolVersion`` is a ``uint16`` in the ACP schema.
MAX_PROTOCOL_VERSION = 65535


def mcp_available() -> bool:
    """The MCP SDK (the ``mcp`` extra) is installed: servers can start."""
    return importlib.util.find_spec("mcp") is not None


def missing_key(config: ReinConfig) -> str | None:
    """The variable the model key should be in, while it is not set."""
    variable = config.model.resolved_api_key_env()
    if not variable or os.environ.get(variable):
        return None
    return variable


def initialize_result(missing: str | None, mcp: bool) -> dict[str, Any]:
    """The ``initialize`` result as the SDK would put it on the wire."""
    methods: list[dict[str, Any]] = []
    if missing is not None:
        methods.append(
            {
                "id": f"env:{missing}",
                "name": f"Set {missing}",
                "description": f"Rein reads the model key from {missing} (rein.model.apiKeyEnv); "
                "set it where the editor starts rein acp, then retry",
            }
        )
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": mcp, "sse": False},
            "sessionCapabilities": {"list": {}, "close": {}, "resume": {}, "fork": {}},
        },
        "agentInfo": {"name": "rein", "title": "Rein", "version": __version__},
        "authMethods": methods,
    }


def read_first_line(fd: int = 0, limit: int = FIRST_LINE_LIMIT) -> bytes:
    """The first line of ``fd``, read a byte at a time so nothing after it
    is taken from the pipe (the SDK reads the rest). Ends early at EOF or
    past ``limit`` bytes."""
    line = bytearray()
    while len(line) < limit:
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
        if byte == b"\n":
            break
    return bytes(line)


def answer_initialize(
    line: bytes, config: ReinConfig
) -> tuple[bytes, dict[str, Any] | None] | None:
    """The answer to ``line`` and its params when it is a well-formed
    ``initialize`` request (no params when the answer is an error: the
    client was not initialized); None leaves it to the SDK."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    ident, params = message.get("id"), message.get("params")
    if (
        message.get("jsonrpc") != "2.0"
        or not isinstance(ident, int | str)
        or isinstance(ident, bool)
    ):
        return None
    if not isinstance(params, dict) or type(params.get("protocolVersion")) is not int:
        return None
    if not isinstance(params.get("clientCapabilities", {}), dict):
        return None
    version = params["protocolVersion"]
    if not 0 <= version <= MAX_PROTOCOL_VERSION:
        error = {
            "code": -32602,
            "message": f"Invalid params: protocolVersion: {version} is not a protocol version "
            f"(an integer from 0 to {MAX_PROTOCOL_VERSION}; rein acp speaks {PROTOCOL_VERSION})",
            "data": {"field": "protocolVersion"},
        }
        return _line({"jsonrpc": "2.0", "id": ident, "error": error}), None
    result = initialize_result(missing_key(config), mcp_available())
    return _line({"jsonrpc": "2.0", "id": ident, "result": result}), params


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()
