"""FolderHost: what one folder needs, given its workspace and diagnostics
source as ports, whichever host serves it (rein serve builds one over the
editor; rein run and rein acp through WorkspaceHost)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rein.config import ReinConfig
from rein.disk.watcher import DiskWatcher
from rein.harness.events import Event
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import Mutation, SendingListener
from rein.hosting.folder import FolderHost
from rein.hosting.workspace_host import WorkspaceHost
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.workspace import FakeWorkspace


def _folder(root: Path, config: ReinConfig, **kw: Any) -> FolderHost[TrackedWorkspace]:
    mutations = MutationLog()
    workspace = TrackedWorkspace(FakeWorkspace(root=str(root)), mutations)
    events: list[Event] = []
    return FolderHost(
        root,
        lambda: config,
        mutations,
        workspace,
        FakeDiagnostics(),
        lambda _config: None,  # type: ignore[arg-type,return-value]
        storage=lambda: None,
        emit=events.append,
        note_external=lambda paths: None,
        **kw,
    )


def test_the_sessions_ports_are_the_folders_shared_parts(tmp_path: Path) -> None:
    folder = _folder(tmp_path, ReinConfig(), watch=False)
    first, second = folder.ports(), folder.ports()
    for ports in (first, second):
        assert ports.root == tmp_path
        assert ports.workspace is folder.workspace
        assert ports.diagnostics is folder.diagnostics
        assert ports.changes is folder.mutations
        assert ports.mcp is folder.mcp
        assert ports.runner is folder.runner
        assert ports.settle_changes is None
    assert folder.diagnostics.source is folder.source
    assert folder.manager is folder.manager


def test_the_watcher_is_made_once_with_the_first_session_and_handed_to_the_host(
    tmp_path: Path,
) -> None:
    started: list[DiskWatcher] = []
    folder = _folder(tmp_path, ReinConfig(), on_watch=started.append)
    assert folder.watcher is None
    ports = folder.ports()
    folder.ports()
    assert started == [folder.watcher]
    assert ports.settle_changes == started[0].settle


def test_the_preview_follows_the_configuration_and_gates_only_when_on(tmp_path: Path) -> None:
    off = ReinConfig()
    on = ReinConfig.model_validate({"gates": {"preview": {"command": "python app.py"}}})
    config = off
    mutations = MutationLog()
    folder = FolderHost(
        tmp_path,
        lambda: config,
        mutations,
        TrackedWorkspace(FakeWorkspace(root=str(tmp_path)), mutations),
        FakeDiagnostics(),
        lambda _config: None,  # type: ignore[arg-type,return-value]
        storage=lambda: None,
        emit=lambda event: None,
        note_external=lambda paths: None,
        watch=False,
    )
    assert not off.gates.preview.enabled and on.gates.preview.enabled
    assert folder.preview.gates() == []
    # No preview made yet: every path is kept by the watcher's filter.
    assert folder.preview.without_outputs(("app.log",)) == ("app.log",)
    config = on
    assert [gate.name for gate in folder.preview.gates()]
    made = folder.preview.coordinator
    assert made.config == on.gates.preview
    # A new command applies to the same preview (from its next start).
    config = ReinConfig.model_validate({"gates": {"preview": {"command": "python other.py"}}})
    assert folder.preview.coordinator is made
    assert made.config == config.gates.preview


def test_rein_run_and_rein_acp_host_their_folder_in_one(tmp_path: Path) -> None:
    host = WorkspaceHost(tmp_path, ReinConfig(), lambda _config: None, analyzers=(), watch=False)  # type: ignore[arg-type,return-value]
    assert host.mutations is host.folder.mutations
    assert host.diagnostics is host.folder.diagnostics
    assert host.diagnostics.source is host.pool
    assert host.manager is host.folder.manager
    assert host.mcp is host.folder.mcp
    # The headless preview is made at once: it observes the folder from the start.
    assert host.preview is host.folder.preview.coordinator
    assert host.ports().workspace is host.workspace


class _HearingDiagnostics(FakeDiagnostics):
    """A diagnostics source that wants every change (as the editor's)."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[Mutation] = []

    def notify_mutation(self, mutation: Mutation) -> None:
        self.heard.append(mutation)


class _SendingWorkspace(TrackedWorkspace):
    """A workspace that sends its changes and says so first (as the editor's)."""

    def __init__(self, inner: FakeWorkspace, mutations: MutationLog) -> None:
        super().__init__(inner, mutations)
        self.listeners: list[SendingListener] = []

    def on_sending(self, listener: SendingListener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)


def test_the_folder_wires_a_listening_source_and_a_sending_workspace_itself(
    tmp_path: Path,
) -> None:
    mutations = MutationLog()
    workspace = _SendingWorkspace(FakeWorkspace(root=str(tmp_path)), mutations)
    source = _HearingDiagnostics()
    folder = FolderHost(
        tmp_path,
        ReinConfig,
        mutations,
        workspace,
        source,
        lambda _config: None,  # type: ignore[arg-type,return-value]
        storage=lambda: None,
        emit=lambda event: None,
        note_external=lambda paths: None,
        watch=False,
    )
    mutation = Mutation(1, ("a.py",), "person")
    mutations.record(mutation)
    assert source.heard == [mutation]
    assert folder.diagnostics.generation == 1
    assert workspace.listeners == [folder.diagnostics.expect]


def test_the_session_manager_is_made_on_first_use_with_the_hosts_hooks(tmp_path: Path) -> None:
    made: list[object] = []
    folder = _folder(tmp_path, ReinConfig(), watch=False, on_new_session=(made.append,))
    folder.ports()
    assert not folder.has_manager
    manager = folder.manager
    assert folder.has_manager
    assert manager.on_new_session == [made.append]
