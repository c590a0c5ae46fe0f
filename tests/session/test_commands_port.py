"""The host's command executor reaches a session's tools: ``SessionPorts.commands``
is asked with the session's id, and what it returns is the tools'
``ToolEnvironment.commands`` (None keeps ``run_command`` local)."""

from __future__ import annotations

from pathlib import Path

from rein.config import ReinConfig
from rein.harness.ports import CommandExecutor
from rein.session import SessionSpec
from rein.session.builder import build_session
from tests.fakes.models import FunctionModel, assistant
from tests.fakes.session import fake_session_ports


def _model() -> FunctionModel:
    return FunctionModel(lambda request: assistant("ok"))


def test_a_session_gets_the_executor_made_for_its_id(tmp_path: Path) -> None:
    asked: list[str] = []
    executor = object()

    def commands(session_id: str) -> CommandExecutor | None:
        asked.append(session_id)
        return executor  # type: ignore[return-value]

    ports = fake_session_ports(tmp_path, _model())
    ports.commands = commands
    session = build_session(ReinConfig(), ports, SessionSpec(session_id="s-1"))
    assert asked == ["s-1"]
    assert session.agent.env.commands is executor


def test_without_an_executor_commands_stay_local(tmp_path: Path) -> None:
    session = build_session(
        ReinConfig(), fake_session_ports(tmp_path, _model()), SessionSpec(mode="plan")
    )
    assert session.agent.env.commands is None
