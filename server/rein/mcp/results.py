"""An MCP ``CallToolResult`` (as its JSON dict) as a Rein :class:`ToolResult`.

* text parts are joined with blank lines;
* an image part becomes an image of the result (the provider sends it to
  the model, or a placeholder for a text-only model); an image over
  :data:`MAX_IMAGE_BYTES`, a malformed one and an audio part become a clear
  placeholder naming the mime type and size; all are listed in
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

from rein.harness.messages import ImagePart
from rein.harness.tools import ToolResult

__all__ = ["MAX_IMAGE_BYTES", "map_result"]

#: The largest image kept for the model (the Messages API's limit; larger
#: ones would be refused by the provider and bloat the stored transcript).
MAX_IMAGE_BYTES = 5 * 1024 * 1024


def _decoded_size(data: object) -> int | None:
    """The decoded size of base64 ``data``, None when it is not base64."""
    if not isinstance(data, str):
        return None
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _part_text(
    part: dict[str, Any], media: list[dict[str, Any]], images: list[ImagePart]
) -> str | None:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        return text if isinstance(text, str) else None
    if kind in ("image", "audio"):
        mime = str(part.get("mimeType") or "unknown")
        data = part.get("data")
        size = _decoded_size(data)
        media.append({"type": kind, "mimeType": mime, "bytes": size or 0})
        if size is None:
            return f"[{kind} omitted: {mime}, its data is not base64]"
        if kind == "image" and mime.startswith("image/") and size <= MAX_IMAGE_BYTES:
            assert isinstance(data, str)
            images.append(ImagePart(mime_type=mime, data=data))
            return f"[image {len(images)}: {mime}, {size} bytes, attached]"
        why = (
            f"over the {MAX_IMAGE_BYTES // (1024 * 1024)} MB Rein sends to a model"
            if kind == "image"
            else "Rein sends no audio to models"
        )
        return f"[{kind} omitted: {mime}, {size} bytes; {why}]"
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
    images: list[ImagePart] = []
    texts: list[str] = []
    has_text = False
    for part in result.get("content") or []:
        if not isinstance(part, dict):
            continue
        text = _part_text(part, media, images)
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
    return ToolResult(content, is_error=is_error, details=details, images=tuple(images))
