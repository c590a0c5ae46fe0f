"""What a tool returns: the text the model reads, whether it failed, extras
for clients and images. Below both :mod:`rein.harness.tools` and
:mod:`rein.harness.hooks` (an ``after_tool_call`` hook sees and may replace
it); ``rein.harness.tools`` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rein.harness.messages import ImagePart

__all__ = ["ToolResult"]


@dataclass(slots=True)
class ToolResult:
    content: str
    is_error: bool = False
    #: Structured extras for clients (generation, diff, exit code, ...).
    details: dict[str, Any] = field(default_factory=dict)
    #: Images for the model (after the text); providers that take none get
    #: a placeholder naming each.
    images: tuple[ImagePart, ...] = ()
