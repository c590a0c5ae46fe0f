"""The core: messages, events, the loop and the Agent, ports, tools.

Imports no pygls, lsprotocol, httpx or sqlite3 (a test checks it). Its
wings (:mod:`rein.checkpoints`, :mod:`rein.preview`, :mod:`rein.flows`)
import it; it imports none of them.
"""

from rein.harness.agent import Agent, AgentBusyError, RunOptions, RunResult
from rein.harness.agent_state import AgentState
from rein.harness.config import HarnessConfig, StuckToolConfig, ToolMisuseBreakerConfig
from rein.harness.conversation.relief import ElideThenSummarise, OverWindowRelief, ReliefRequest
from rein.harness.events import Event, EventAdapter
from rein.harness.hooks import Block, Hooks, TurnInfo, TurnOverrides
from rein.harness.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from rein.harness.run.loop import LoopContext, RunControl, run_loop
from rein.harness.tools import (
    Tool,
    ToolCallExecutor,
    ToolContext,
    ToolEnvironment,
    ToolRegistry,
    ToolResult,
)

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentState",
    "AssistantMessage",
    "Block",
    "ElideThenSummarise",
    "Event",
    "EventAdapter",
    "HarnessConfig",
    "Hooks",
    "ImagePart",
    "LoopContext",
    "Message",
    "OverWindowRelief",
    "ReliefRequest",
    "RunControl",
    "RunOptions",
    "RunResult",
    "StuckToolConfig",
    "TextPart",
    "ThinkingPart",
    "Tool",
    "ToolCall",
    "ToolCallExecutor",
    "ToolContext",
    "ToolEnvironment",
    "ToolMisuseBreakerConfig",
    "ToolRegistry",
    "ToolResult",
    "ToolResultMessage",
    "TurnInfo",
    "TurnOverrides",
    "Usage",
    "UserMessage",
    "run_loop",
]
