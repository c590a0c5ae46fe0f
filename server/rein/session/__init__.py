"""One session assembly for every host.

``rein serve`` (the language server), ``rein run`` (headless) and any later
host build their sessions here: :func:`build_session` makes the agents, the
planner and plan-act flow, the gates, the tools (with the ``task`` subagent
tool) and the system prompts from a configuration and the host's
:class:`SessionPorts`; :class:`SessionManager` keeps the sessions of one
workspace and their SQLite store, loads stored sessions (a waiting
``ask_user`` included) and records every run.

A host supplies only what differs: the workspace, the diagnostics source,
the approver and user channel of a session, the command runner and the
preview's gates.

``SessionBusyError`` (a session refusing a prompt, restore or review while a
run or a restore is active) is :class:`rein.harness.errors.BusyError`, the
one busy error of Rein's error tree, under the name this package exported
before (as ``rein.harness.AgentBusyError`` is for the agent).
"""

from rein.harness.errors import BusyError
from rein.session.builder import bootstrap_messages, build_gates, build_session
from rein.session.manager import SessionManager
from rein.session.ports import Mode, SessionPorts, SessionSpec
from rein.session.results import result_json, usage_json
from rein.session.session import Session, SessionStatus, new_session_id

#: The busy error under its former name: :class:`rein.harness.errors.BusyError`.
SessionBusyError = BusyError

__all__ = [
    "Mode",
    "Session",
    "SessionBusyError",
    "SessionManager",
    "SessionPorts",
    "SessionSpec",
    "SessionStatus",
    "bootstrap_messages",
    "build_gates",
    "build_session",
    "new_session_id",
    "result_json",
    "usage_json",
]
