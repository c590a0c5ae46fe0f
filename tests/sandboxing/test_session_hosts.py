"""A session's own hosts (issue 38): with the real sandbox and proxy, a
host the proxy refused is named in ``run_command``'s result and the person
is asked; allowed, session A reaches it from its next command on, and
session B (a sandbox and proxy of its own) is still refused. A session
started with the host (``rein run --allow-host``, ``allowHosts``) reaches
it at once; a bad host is refused by name before anything starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from rein.config import ReinConfig
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.tools import ToolEnvironment
from rein.headless.run import run_task
from rein.lsp.params import NewSessionParams, parse
from rein.sandboxing import BwrapSandbox, SandboxSettings, proxy
from rein.sandboxing.failures import unresolved_hosts
from rein.session import SessionSpec
from rein.session.builder import build_session
from rein.tools import ApprovalSettings, RunCommandTool, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.models import FunctionModel, assistant
from tests.fakes.session import fake_session_ports
from tests.fakes.tools import ToolCallRecorder
from tests.sandboxing.hello_host import hello_host

#: A listed host, so each session runs its proxy (never reached here).
SETTINGS = SandboxSettings(network=["pypi"])


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with hello_host() as port:
        yield port


def _session(
    root: Path,
    approver: FakeApprover,
    hosts: tuple[str, ...] = (),
    settings: SandboxSettings = SETTINGS,
) -> ToolCallRecorder:
    sandbox = BwrapSandbox(str(root), settings, hosts)
    if sandbox.unavailable() is not None:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox.unavailable()}")
    tools = ToolSettings(approval=ApprovalSettings.model_validate({"command": "sandboxed"}))
    env = ToolEnvironment(
        workspace=DiskWorkspace(root), approver=approver, settings=tools, sandbox=sandbox
    )
    return ToolCallRecorder(env)


async def test_a_refused_host_allowed_for_one_session_only(
    tmp_path: Path, port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test's host is on the loopback, which the proxy never offers nor
    # lets a host allowed for the session reach (tests/sandboxing/
    # test_proxy_names.py): here it counts as a public address.
    monkeypatch.setattr(proxy, "local_address", lambda address: False)
    host = f"localhost:{port}"
    fetch = f"curl -sSf -m 5 http://{host}/"
    approver_a, approver_b = FakeApprover(True), FakeApprover(False)
    session_a = _session(tmp_path, approver_a)
    session_b = _session(tmp_path, approver_b)

    refused = await session_a.run(RunCommandTool(), command=fetch)
    assert refused.is_error
    assert f"Rein's sandbox refused {host} (not in sandbox.network)" in refused.content
    assert f"The person allowed {host} for this session" in refused.content
    assert refused.details["sandbox_refused_hosts"] == [host]
    [asked] = approver_a.requests
    assert asked.title == f"Allow {host} for this session"
    assert asked.subject == host and asked.rules == ()

    again = await session_a.run(RunCommandTool(), command=fetch)
    assert not again.is_error, again.content
    assert "hello from the host" in again.content
    assert len(approver_a.requests) == 1  # allowed: not asked again

    other = await session_b.run(RunCommandTool(), command=fetch)
    assert other.is_error
    assert "It was not allowed for this session" in other.content
    assert [r.title for r in approver_b.requests] == [f"Allow {host} for this session"]
    still = await session_b.run(RunCommandTool(), command=fetch)
    assert still.is_error and still.details["sandbox_refused_hosts"] == [host]


async def test_a_session_started_with_a_host_reaches_it_without_asking(
    tmp_path: Path, port: int
) -> None:
    approver = FakeApprover(False)
    session = _session(tmp_path, approver, (f"127.0.0.1:{port}",))
    result = await session.run(RunCommandTool(), command=f"curl -sSf -m 5 http://127.0.0.1:{port}/")
    assert not result.is_error, result.content
    assert "hello from the host" in result.content and approver.requests == []


def test_a_new_sessions_hosts_reach_its_sandbox_and_no_other(tmp_path: Path) -> None:
    ports = fake_session_ports(tmp_path, FunctionModel(lambda request: assistant("ok")))
    config = ReinConfig.model_validate({"sandbox": {"network": ["npm"]}})
    with_host = build_session(config, ports, SessionSpec(allow_hosts=("pypi", "example.com")))
    without = build_session(config, ports, SessionSpec())
    assert isinstance(with_host.agent.env.sandbox, BwrapSandbox)
    assert isinstance(without.agent.env.sandbox, BwrapSandbox)
    assert {"pypi.org", "example.com", "registry.npmjs.org"} <= with_host.agent.env.sandbox.hosts
    assert "example.com" not in without.agent.env.sandbox.hosts


def test_a_bad_host_is_refused_by_name_at_the_start(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=r"allowHosts: .*'http://x': each entry is"):
        parse(NewSessionParams, {"allowHosts": ["http://x"]}, "rein/newSession")
    with pytest.raises(JsonRpcInvalidParams, match="allowHosts: not available for an isolated"):
        parse(NewSessionParams, {"allowHosts": ["pypi"], "isolated": True}, "rein/newSession")
    assert parse(NewSessionParams, {"allowHosts": ["pypi"]}, "m").allow_hosts == ("pypi",)
    common: dict[str, Any] = {
        "workspace": ".",
        "config_file": None,
        "overrides": {},
        "as_json": True,
        "assume_yes": False,
        "mode": None,
    }
    assert run_task("t", allow_hosts=("http://x",), **common) == 2
    assert "rein run: --allow-host: 'http://x': each entry is" in capsys.readouterr().err
    assert run_task("t", allow_hosts=("pypi",), resume="s-1", **common) == 2
    assert "--allow-host is for a new session" in capsys.readouterr().err


async def test_without_any_host_an_unresolved_host_is_asked_about_and_then_proxied(
    tmp_path: Path,
) -> None:
    """The default (no ``sandbox.network``): no proxy, no name resolution;
    the host the command could not resolve is asked about, and once
    allowed the session's commands go through a proxy of its own (which
    lets it through: here it cannot resolve ``.invalid`` either, and says
    so). Another session still has no network."""
    fetch = "curl -sS -m 5 http://example.invalid/"
    approver = FakeApprover(True)
    session = _session(tmp_path, approver, settings=SandboxSettings())
    other = _session(tmp_path, FakeApprover(False), settings=SandboxSettings())
    first = await session.run(RunCommandTool(), command=fetch)
    assert "Could not resolve host: example.invalid" in first.content
    assert [r.title for r in approver.requests] == ["Allow example.invalid for this session"]
    again = await session.run(RunCommandTool(), command=fetch)
    assert "Rein's sandbox proxy could not reach example.invalid:80" in again.content
    assert "sandbox_refused_hosts" not in again.details
    alone = await other.run(RunCommandTool(), command=fetch)
    assert "Could not resolve host: example.invalid" in alone.content
    assert "It was not allowed for this session" in alone.content


@pytest.mark.parametrize(
    ("output", "hosts"),
    [
        ("curl: (6) Could not resolve host: Example.com\n", ["example.com"]),
        (
            "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
            ["github.com"],
        ),
        (
            "HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded "
            "HTTPConnectionPool(host='mirror.example', port=8080): x",
            ["pypi.org", "mirror.example:8080"],
        ),
        (
            "npm error request to https://r.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
            ["registry.npmjs.org"],
        ),
        ("wget: unable to resolve host address \u2018example.org\u2019", ["example.org"]),
        ("Could not resolve host: intranet\nTemporary failure in name resolution", []),
    ],
)
def test_the_hosts_a_failed_command_could_not_resolve(output: str, hosts: list[str]) -> None:
    assert unresolved_hosts(output) == hosts
