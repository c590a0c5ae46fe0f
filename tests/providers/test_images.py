"""Images on the wire: Anthropic takes them inside tool results, Chat
Completions only in user messages; a text-only model gets placeholders. The
mock server decodes both back."""

from __future__ import annotations

import base64

from rein.harness.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from rein.providers._http import IMAGES_OFF
from rein.providers._mock_decode import decode_anthropic_request, decode_openai_request
from rein.providers.anthropic import MAX_IMAGE_BYTES, anthropic_messages
from rein.providers.openai import openai_messages

PNG = ImagePart(mime_type="image/png", data=base64.b64encode(b"\x89PNG" + b"\0" * 60).decode())
TIFF = ImagePart(mime_type="image/tiff", data=PNG.data)


def _transcript(*images: ImagePart) -> list[Message]:
    return [
        UserMessage(content="look"),
        AssistantMessage(
            content=(ToolCall(id="a", name="shot"), ToolCall(id="b", name="read")),
            stop_reason="tool_use",
        ),
        ToolResultMessage(tool_call_id="a", tool_name="shot", content="shot taken", images=images),
        ToolResultMessage(tool_call_id="b", tool_name="read", content="text only"),
        UserMessage(content="and now?"),
    ]


def test_anthropic_puts_images_inside_the_tool_result() -> None:
    out = anthropic_messages(_transcript(PNG))
    result = out[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "a"
    assert result["content"] == [
        {"type": "text", "text": "shot taken"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": PNG.data},
        },
    ]
    # A result without images keeps its plain string content.
    assert out[2]["content"][1]["content"] == "text only"


def test_anthropic_names_what_it_cannot_send() -> None:
    big = ImagePart(mime_type="image/png", data="A" * (MAX_IMAGE_BYTES * 4 // 3 + 8))
    content = anthropic_messages(_transcript(TIFF, big))[2]["content"][0]["content"]
    assert [b["type"] for b in content] == ["text", "text", "text"]
    assert "image/tiff" in content[1]["text"] and "takes no such type" in content[1]["text"]
    assert "over the API's 5 MB" in content[2]["text"]


def test_a_text_only_model_gets_placeholders() -> None:
    content = anthropic_messages(_transcript(PNG), images=False)[2]["content"][0]["content"]
    assert content[1] == {"type": "text", "text": PNG.placeholder(IMAGES_OFF)}
    assert "rein.model.images is false" in IMAGES_OFF
    openai = openai_messages("", _transcript(PNG), images=False)
    parts = openai[4]["content"]
    assert all(p["type"] == "text" for p in parts)
    assert "rein.model.images is false" in parts[1]["text"]


def test_openai_sends_a_batchs_images_in_one_user_message_after_its_tool_messages() -> None:
    out = openai_messages("sys", _transcript(PNG))
    roles = [m["role"] for m in out]
    # The tool messages stay contiguous after the assistant's calls.
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "user"]
    assert out[3] == {"role": "tool", "tool_call_id": "a", "content": "shot taken"}
    assert out[5]["content"] == [
        {"type": "text", "text": "The images returned by the shot call a:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG.data}"}},
    ]
    assert out[6] == {"role": "user", "content": "and now?"}


def test_without_images_openai_messages_are_unchanged() -> None:
    roles = [m["role"] for m in openai_messages("", _transcript())]
    assert roles == ["user", "assistant", "tool", "tool", "user"]


def test_user_message_images_on_both_wires() -> None:
    message = UserMessage(content="what is this?", images=(PNG,))
    assert anthropic_messages([message])[0]["content"][1]["type"] == "image"
    assert openai_messages("", [message])[0]["content"][1]["type"] == "image_url"


def test_the_mock_server_decodes_images_from_both_wires() -> None:
    anthropic = decode_anthropic_request({"messages": anthropic_messages(_transcript(PNG))})
    results = [m for m in anthropic.messages if isinstance(m, ToolResultMessage)]
    assert results[0].images == (PNG,) and results[0].content == "shot taken"
    openai = decode_openai_request({"messages": openai_messages("", _transcript(PNG))})
    users = [m for m in openai.messages if isinstance(m, UserMessage)]
    assert users[1].images == (PNG,)
