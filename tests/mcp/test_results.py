"""MCP call results as the tool results the model reads."""

from __future__ import annotations

import base64
import json

from rein.harness.messages import ImagePart
from rein.mcp.results import MAX_IMAGE_BYTES, map_result


def test_text_parts_are_joined() -> None:
    result = map_result(
        {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        server="s",
        tool="t",
    )
    assert result.content == "one\n\ntwo"
    assert not result.is_error
    assert result.details == {"mcpServer": "s", "mcpTool": "t"}


def test_an_image_is_attached_for_the_model() -> None:
    data = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    result = map_result(
        {
            "content": [
                {"type": "text", "text": "here"},
                {"type": "image", "data": data, "mimeType": "image/png"},
            ]
        },
        server="s",
        tool="shot",
    )
    assert result.images == (ImagePart(mime_type="image/png", data=data),)
    assert result.content == "here\n\n[image 1: image/png, 100 bytes, attached]"
    assert result.details["media"] == [{"type": "image", "mimeType": "image/png", "bytes": 100}]


def test_audio_an_oversized_image_and_bad_data_become_placeholders() -> None:
    small = base64.b64encode(b"RIFF").decode()
    big = base64.b64encode(b"\0" * (MAX_IMAGE_BYTES + 1)).decode()
    result = map_result(
        {
            "content": [
                {"type": "audio", "data": small, "mimeType": "audio/wav"},
                {"type": "image", "data": big, "mimeType": "image/png"},
                {"type": "image", "data": "not base64!", "mimeType": "image/png"},
            ]
        },
        server="s",
        tool="t",
    )
    assert result.images == ()
    assert "[audio omitted: audio/wav, 4 bytes; Rein sends no audio to models]" in result.content
    assert (
        f"[image omitted: image/png, {MAX_IMAGE_BYTES + 1} bytes; over the 5 MB" in result.content
    )
    assert "[image omitted: image/png, its data is not base64]" in result.content
    assert len(result.details["media"]) == 3


def test_structured_content_is_json_when_there_is_no_text() -> None:
    result = map_result({"content": [], "structuredContent": {"n": 1}}, server="s", tool="t")
    assert json.loads(result.content) == {"n": 1}


def test_structured_content_is_not_repeated_next_to_text() -> None:
    result = map_result(
        {"content": [{"type": "text", "text": "1"}], "structuredContent": {"result": "1"}},
        server="s",
        tool="t",
    )
    assert result.content == "1"


def test_is_error_is_an_error_result_naming_server_and_tool() -> None:
    result = map_result(
        {"content": [{"type": "text", "text": "boom"}], "isError": True}, server="srv", tool="t"
    )
    assert result.is_error
    assert result.content == "The MCP tool t of server srv failed: boom"


def test_an_empty_result_says_so() -> None:
    assert map_result({"content": []}, server="s", tool="t").content == (
        "(the tool returned no content)"
    )


def test_resources_and_links_are_named() -> None:
    result = map_result(
        {
            "content": [
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"},
            ]
        },
        server="s",
        tool="t",
    )
    assert result.content == "[resource file:///a]\nbody\n\n[resource link: file:///b (b)]"
