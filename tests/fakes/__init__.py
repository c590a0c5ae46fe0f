"""Every test double, a package of small modules by port. Each is a real
implementation of a port.

Never redefine a fake in a test module: add it to the module of its port
(models, tools, workspace, diagnostics, editor, acp_client, ...). This
package re-exports every fake, so ``from tests.fakes import X`` keeps working.
"""

from __future__ import annotations

from tests.fakes.acp_client import (
    FakeAcpClient,
    FakeClientLink,
    FakeTerminal,
    LocalTerminal,
    permission_answer,
)
from tests.fakes.approvals import FailingApprover, FakeApprover, FakeUserChannel
from tests.fakes.channel import FakeClientChannel
from tests.fakes.checkpoints import (
    CheckpointJournal,
    FailingCheckpointStore,
    HangingCheckpointStore,
)
from tests.fakes.clock import VirtualTimeLoop, run_in_virtual_time
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import (
    FakeDiagnostics,
    LineAnalyzer,
    SettlingFakeDiagnostics,
    analyzed_env,
)
from tests.fakes.editor import Editor, make_client, paired, wire
from tests.fakes.events import EventLog, WaitingEventLog, assert_well_formed
from tests.fakes.flows import PlanActSetup, build_agent_flow, build_plan_act_flow
from tests.fakes.gates import RaisingGate, SlowGate
from tests.fakes.lm import FakeLmHost, FakeLmProtocol, FakeLmServer, LmReply, wire_lm
from tests.fakes.mcp import FakeMcpConnection, FakeMcpPorts
from tests.fakes.models import (
    FunctionModel,
    PausingModel,
    StallingModel,
    YieldingModel,
    assistant,
    call,
    complete_turn,
    plan_turn,
)
from tests.fakes.persistence import MemoryPersistence
from tests.fakes.preview import FakePreviewFactory, FakePreviewProcess
from tests.fakes.providers import ChunkedStream, SleepLog
from tests.fakes.session import fake_session_ports
from tests.fakes.tools import (
    CommandArgs,
    EchoArgs,
    EchoTool,
    FailArgs,
    FailTool,
    FakeCommandTool,
    FakeWriteTool,
    FixedReadArgs,
    FixedReadTool,
    FlakyTool,
    FunctionTool,
    SleepArgs,
    SleepTool,
    ToolCallRecorder,
    ToolFunction,
    WriteArgs,
)
from tests.fakes.workspace import FakeWorkspace

__all__ = [
    "CheckpointJournal",
    "ChunkedStream",
    "CommandArgs",
    "EchoArgs",
    "EchoTool",
    "Editor",
    "EventLog",
    "FailArgs",
    "FailTool",
    "FailingApprover",
    "FailingCheckpointStore",
    "FakeAcpClient",
    "FakeApprover",
    "FakeClientChannel",
    "FakeClientLink",
    "FakeCommandRunner",
    "FakeCommandTool",
    "FakeDiagnostics",
    "FakeLmHost",
    "FakeLmProtocol",
    "FakeLmServer",
    "FakeMcpConnection",
    "FakeMcpPorts",
    "FakePreviewFactory",
    "FakePreviewProcess",
    "FakeTerminal",
    "FakeUserChannel",
    "FakeWorkspace",
    "FakeWriteTool",
    "FixedReadArgs",
    "FixedReadTool",
    "FlakyTool",
    "FunctionModel",
    "FunctionTool",
    "HangingCheckpointStore",
    "LineAnalyzer",
    "LmReply",
    "LocalTerminal",
    "MemoryPersistence",
    "PausingModel",
    "PlanActSetup",
    "RaisingGate",
    "SettlingFakeDiagnostics",
    "SleepArgs",
    "SleepLog",
    "SleepTool",
    "SlowGate",
    "StallingModel",
    "ToolCallRecorder",
    "ToolFunction",
    "VirtualTimeLoop",
    "WaitingEventLog",
    "WriteArgs",
    "YieldingModel",
    "analyzed_env",
    "assert_well_formed",
    "assistant",
    "build_agent_flow",
    "build_plan_act_flow",
    "call",
    "complete_turn",
    "fake_session_ports",
    "make_client",
    "paired",
    "permission_answer",
    "plan_turn",
    "run_in_virtual_time",
    "wire",
    "wire_lm",
]
