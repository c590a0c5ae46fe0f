"""A session manager's ports over fakes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.fakes.approvals import FakeApprover
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.workspace import FakeWorkspace

if TYPE_CHECKING:
    from rein.session import SessionPorts


def fake_session_ports(root: Path, model: Any) -> SessionPorts:
    """A session manager's ports over fakes: a FakeWorkspace at ``root``, no
    diagnostics, commands or questions, every approval granted, and ``model``
    for every run."""
    from rein.session import SessionPorts

    return SessionPorts(
        root=root,
        workspace=FakeWorkspace(root=str(root)),
        diagnostics=FakeDiagnostics(),
        runner=FakeCommandRunner(),
        approver=lambda _id: FakeApprover(),
        user=lambda _id: None,
        model_factory=lambda _config: model,
    )
