"""An MCP ``CallToolResult`` (as its JSON dict) as a Rein :class:`ToolResult`.

* text parts are joined with blank lines;
* Rein's tool results carry text only, so an image (or audio) part becomes a
  clear placeholder naming its mime type and size, and is listed in
  ``details["media"]``;
* an embedded resource's text is included, a link names its URI;
* ``structuredContent`` becomes JSON text when there is no text part;
* ``isError`` makes an error result the model reads.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from rein.harness.tools import ToolResult

__all__ = ["map_result"]


def _size(data: object) -> int:
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return len(data)


def _part_text(part: dict[str, Any], media: list[dict[str, Any]]) -> str | None:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        return text if isinstance(text, str) else None
    if kind in ("image", "audio"):
        mime = str(part.get("mimeType") or "unknown")
        size = _size(part.get("data"))
        media.append({"type": kind, "mimeType": mime, "bytes": size})
        return (
            f"[{kind} omitted: {mime}, {size} bytes; Rein passes tool results to the "
            "model as text only]"
        )
    if kind == "resource":
        resource = part.get("resource") or {}
        uri = resource.get("uri", "?")
        if isinstance(resource.get("text"), str):
            return f"[resource {uri}]\n{resource['text']}"
        return f"[resource {uri}: binary {resource.get('mimeType') or 'data'}, not shown]"
    if kind == "resource_link":
        name = part.get("name")
        return f"[resource link: {part.get('uri', '?')}" + (f" ({name})]" if name else "]")
    return f"[unsupported content part of type {kind!r}]"


def map_result(result: dict[str, Any], *, server: str, tool: str) -> ToolResult:
    """The tool result the model reads for one MCP call's result."""
    media: list[dict[str, Any]] = []
    texts: list[str] = []
    has_text = False
    for part in result.get("content") or []:
        if not isinstance(part, dict):
            continue
        text = _part_text(part, media)
        if text is None:
            continue
        has_text = has_text or part.get("type") == "text"
        texts.append(text)
    structured = result.get("structuredContent")
    if not has_text and structured is not None:
        texts.insert(0, json.dumps(structured, ensure_ascii=False, indent=2))
    content = "\n\n".join(texts)
    is_error = bool(result.get("isError"))
    if is_error:
        content = f"The MCP tool {tool} of server {server} failed: {content or '(no message)'}"
    elif not content:
        content = "(the tool returned no content)"
    details: dict[str, Any] = {"mcpServer": server, "mcpTool": tool}
    if media:
        details["media"] = media
    return ToolResult(content, is_error=is_error, details=details)
