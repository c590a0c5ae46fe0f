"""A turn's usage estimated from its request and reply, for a server that
reports no counts (VS Code's language models; an OpenAI-compatible server
that sent no usage chunk)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rein.harness.conversation.tokens import estimate_message_tokens, estimate_tokens
from rein.harness.messages import AssistantMessage, ContentPart, Usage
from rein.harness.ports import ModelRequest

__all__ = ["estimated_usage"]


def estimated_usage(request: ModelRequest, reply: Sequence[ContentPart]) -> Usage:
    """What the turn cost, estimated (marked ``estimated``)."""
    tools = json.dumps([t.parameters for t in request.tools]) if request.tools else ""
    prompt = estimate_tokens(request.system) + estimate_tokens(tools)
    prompt += sum(estimate_message_tokens(m) for m in request.messages)
    output = estimate_message_tokens(AssistantMessage(content=tuple(reply)))
    return Usage(input_tokens=prompt, output_tokens=output, estimated=True)
