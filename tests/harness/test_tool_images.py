"""Images a tool returns reach the model with the result, count in the
context budget and leave with an elided result."""

from __future__ import annotations

import base64

from rein.harness import Agent, HarnessConfig, ImagePart, ToolResult, ToolResultMessage
from rein.harness.conversation.tokens import IMAGE_TOKENS, estimate_message_tokens
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog
from tests.fakes.tools import FunctionTool

PNG = ImagePart(mime_type="image/png", data=base64.b64encode(b"\x89PNG" + b"\0" * 60).decode())


def shot() -> FunctionTool:
    return FunctionTool("shot", lambda args, ctx: ToolResult(f"shot {args.text}", images=(PNG,)))


async def test_a_tool_results_images_are_in_the_next_model_request() -> None:
    model = ReplayModel(
        [{"tool_calls": [{"name": "shot", "arguments": {"text": "a"}}]}, {"text": "I see it"}]
    )
    agent = Agent(model, tools=[shot()])
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("take a screenshot")
    assert result.status == "completed", result.error
    # Events carry no image data: the tool result's message_end is text only.
    ends = [e.message for e in log.of("message_end") if e.message.role == "tool"]
    assert [(m.content, m.images) for m in ends] == [("shot a", ())]
    seen = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [(m.content, m.images) for m in seen] == [("shot a", (PNG,))]
    # The transcript keeps them (a resumed session sends them again).
    stored = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert stored[0].images == (PNG,)


def test_an_image_costs_its_estimate() -> None:
    bare = ToolResultMessage(tool_call_id="c", tool_name="shot", content="x")
    with_two = bare.model_copy(update={"images": (PNG, PNG)})
    assert estimate_message_tokens(with_two) - estimate_message_tokens(bare) == 2 * IMAGE_TOKENS


def test_image_size_is_the_decoded_size() -> None:
    assert PNG.size == 64
    assert ImagePart(mime_type="image/png", data=base64.b64encode(b"ab").decode()).size == 2
    assert "image/png, 64 bytes, not shown: why" in PNG.placeholder("why")


async def test_an_elided_result_drops_its_images() -> None:
    turns = [{"tool_calls": [{"name": "shot", "arguments": {"text": f"r{i}"}}]} for i in range(8)]
    model = ReplayModel([*turns, {"text": "done"}])
    # Each image is ~1,600 tokens: eight of them cannot fit in 12,000.
    agent = Agent(model, tools=[shot()], config=HarnessConfig(max_context_tokens=12000))
    log = EventLog()
    agent.subscribe(log)
    result = await agent.prompt("shoot")
    assert result.status == "completed", result.error
    assert log.of("compaction")
    results = [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]
    elided = [r for r in results if r.content.startswith("[tool result elided")]
    assert elided and all(r.images == () for r in elided)
    assert "and 1 images" in elided[0].content
    assert results[-1].images == (PNG,)
