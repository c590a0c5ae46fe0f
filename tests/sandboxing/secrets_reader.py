"""A stdio MCP server with one tool, ``read(path)``: the file's text, or
what stopped it. Standard library only (newline-delimited JSON-RPC), so it
starts in milliseconds: tests/sandboxing/test_also.py starts it in the
sandbox and asks it for a secret."""

from __future__ import annotations

import json
import sys
from typing import Any

TOOL = {
    "name": "read",
    "description": "The text of the file at path.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return f"read: {handle.read()}"
    except OSError as exc:
        return f"cannot read: {exc}"


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "secrets-reader", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        text = _read(str(params.get("arguments", {}).get("path", "")))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return {}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or an answer
        result = _answer(message["method"], message.get("params") or {})
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        sys.stdout.write("\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
