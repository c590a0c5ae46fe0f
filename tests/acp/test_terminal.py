"""``run_command`` in the ACP client's terminal (``rein.acp.terminal``),
against the fake client of tests/fakes.py: the output streams, the exit
code is the command's, a timeout and an abort kill the command, and the
terminal is released whatever happens."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp.exceptions import RequestError
from acp.schema import EnvVariable

from rein.acp.terminal import ClientTerminalCommands, _NewOutput, client_terminal
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ToolError
from rein.harness.tools import ToolEnvironment
from rein.tools import RunCommandTool
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.acp_client import FakeAcpClient, FakeClientLink, FakeTerminal
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.tools import ToolCallRecorder


def commands(client: FakeAcpClient, root: Path, **options: float) -> ClientTerminalCommands:
    return ClientTerminalCommands(
        FakeClientLink(client),  # type: ignore[arg-type]
        root,
        lambda: "sess-1",
        poll_s=options.pop("poll_s", 0.001),
        **options,  # type: ignore[arg-type]
    )


def tool_run(client: FakeAcpClient, root: Path) -> ToolCallRecorder:
    return ToolCallRecorder(
        ToolEnvironment(
            workspace=DiskWorkspace(root),
            settings=ToolSettings(approval=ApprovalSettings(command="allow")),
            commands=commands(client, root),
        )
    )


class Seen:
    def __init__(self) -> None:
        self.output: list[str] = []
        self.terminals: list[str] = []


async def run(
    executor: ClientTerminalCommands, root: Path, seen: Seen, timeout_s: float = 60
) -> object:
    return await executor.run(
        "make test",
        cwd=str(root),
        timeout_s=timeout_s,
        on_output=seen.output.append,
        on_terminal=seen.terminals.append,
    )


async def test_the_output_streams_and_the_exit_code_is_the_command_s(tmp_path: Path) -> None:
    client = FakeAcpClient(terminals=[FakeTerminal(["one\n", "two\n", "three\n"], exit_code=3)])
    seen = Seen()
    result = await run(commands(client, tmp_path), tmp_path, seen)
    assert seen.terminals == ["term-1"]
    assert seen.output == ["one\n", "two\n", "three\n"]  # piece by piece, as polled
    assert result.exit_code == 3 and result.output == "one\ntwo\nthree\n"  # type: ignore[attr-defined]
    assert not result.timed_out  # type: ignore[attr-defined]
    create = client.params("terminal/create")[0]
    assert (create["session_id"], create["command"], create["args"], create["cwd"]) == (
        "sess-1",
        "bash",
        ["-c", "make test"],
        str(tmp_path),
    )
    assert create["output_byte_limit"] > 0
    assert EnvVariable(name="PAGER", value="cat") in create["env"]
    # git never takes a folder for a bare repository (issue 30).
    git = {v.name: v.value for v in create["env"] if v.name.startswith("GIT_CONFIG_")}
    count = int(git["GIT_CONFIG_COUNT"])
    assert git[f"GIT_CONFIG_KEY_{count - 1}"] == "safe.bareRepository"
    assert git[f"GIT_CONFIG_VALUE_{count - 1}"] == "explicit"
    methods = client.methods()
    assert "terminal/kill" not in methods
    assert methods[-1] == "terminal/release"
    assert client.terminals["term-1"].released


async def test_run_command_shows_the_terminal_and_reads_its_result(tmp_path: Path) -> None:
    client = FakeAcpClient(terminals=[FakeTerminal(["ok 1\n", "FAILED 2\n"], exit_code=1)])
    recorder = tool_run(client, tmp_path)
    result = await recorder.run(RunCommandTool(), command="pytest -q")
    assert ("term-1", "terminal") in recorder.updates
    assert recorder.output() == "ok 1\nFAILED 2\n"
    assert result.is_error
    assert result.content.splitlines() == ["$ pytest -q", "ok 1", "FAILED 2", "[exit code 1]"]
    assert result.details["terminal_id"] == "term-1"
    assert client.params("terminal/create")[0]["args"] == ["-c", "pytest -q"]


def test_a_timeout_kills_the_command_and_releases_the_terminal(tmp_path: Path) -> None:
    client = FakeAcpClient(terminals=[FakeTerminal(["building\n"], hangs=True)])

    async def main() -> None:
        recorder = tool_run(client, tmp_path)
        started = anyio.current_time()
        result = await recorder.run(RunCommandTool(), command="sleep 1000", timeout=20)
        assert anyio.current_time() - started == pytest.approx(20, abs=1)
        assert result.is_error and result.details["timed_out"] is True
        assert result.details["exit_code"] == -9  # SIGKILL, as the client says
        assert "building" in result.content
        assert "[Timed out after 20 s" in result.content

    run_in_virtual_time(main)
    methods = client.methods()
    assert methods.index("terminal/kill") < methods.index("terminal/release")
    assert client.terminals["term-1"].killed and client.terminals["term-1"].released


async def test_an_abort_kills_the_command_and_releases_the_terminal(tmp_path: Path) -> None:
    client = FakeAcpClient(terminals=[FakeTerminal(["working\n"], hangs=True)])
    seen = Seen()
    started = anyio.Event()

    def on_output(text: str) -> None:
        seen.output.append(text)
        started.set()

    executor = commands(client, tmp_path)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def command() -> None:
                await executor.run(
                    "serve",
                    cwd=str(tmp_path),
                    timeout_s=600,
                    on_output=on_output,
                    on_terminal=seen.terminals.append,
                )
                raise AssertionError("the aborted command returned")

            tg.start_soon(command)
            await started.wait()
            tg.cancel_scope.cancel()  # the run is aborted
    assert seen.output == ["working\n"]
    assert client.methods()[-2:] == ["terminal/kill", "terminal/release"]
    assert client.terminals["term-1"].killed and client.terminals["term-1"].released


async def test_steering_ends_the_command_in_the_terminal(tmp_path: Path) -> None:
    client = FakeAcpClient(terminals=[FakeTerminal(["watching\n"], hangs=True)])
    recorder = tool_run(client, tmp_path)
    original = client.terminal_output

    async def output_then_steer(**params: object) -> object:
        answer = await original(**params)  # type: ignore[arg-type]
        recorder.steering.set()  # the person sends a message meanwhile
        return answer

    client.terminal_output = output_then_steer  # type: ignore[method-assign]
    with anyio.fail_after(10):
        result = await recorder.run(RunCommandTool(), command="npm run watch")
    assert result.details["stopped_for_steering"] is True
    assert "watching" in result.content and "the person sent a message" in result.content
    assert client.methods()[-2:] == ["terminal/kill", "terminal/release"]


async def test_the_terminal_is_released_when_the_client_fails(tmp_path: Path) -> None:
    failing = RequestError(-32603, "Internal error", {"details": "pty closed"})
    client = FakeAcpClient(
        terminals=[FakeTerminal(["x\n"])],
        fail={"terminal/wait_for_exit": failing},
    )
    with pytest.raises(ToolError, match=r"terminal/wait_for_exit with an error.*pty closed"):
        await run(commands(client, tmp_path), tmp_path, Seen())
    assert client.methods()[-2:] == ["terminal/kill", "terminal/release"]


async def test_a_terminal_that_cannot_be_made_is_a_tool_error(tmp_path: Path) -> None:
    client = FakeAcpClient(fail={"terminal/create": RequestError(-32601, "Method not found")})
    recorder = tool_run(client, tmp_path)
    with pytest.raises(ToolError, match="terminal/create with an error: Method not found"):
        await recorder.run(RunCommandTool(), command="ls")
    assert client.methods() == ["terminal/create"]  # nothing to release


def test_an_abort_is_not_held_up_by_a_client_that_stops_answering(tmp_path: Path) -> None:
    client = FakeAcpClient(
        terminals=[FakeTerminal(hangs=True)],
        hang=["terminal/kill", "terminal/release"],
    )

    async def main() -> None:
        executor = commands(client, tmp_path, kill_grace_s=5)
        with anyio.move_on_after(1):  # the abort, one second in
            await run(executor, tmp_path, Seen())
        # The clean-up took its bounds (5 s each), not forever.
        assert anyio.current_time() == pytest.approx(11, abs=0.5)

    run_in_virtual_time(main)
    assert client.methods()[-2:] == ["terminal/kill", "terminal/release"]


async def test_secret_variables_are_blanked_for_the_client_s_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("DEPLOY_TOKEN", "t")
    client = FakeAcpClient(terminals=[FakeTerminal()])
    executor = ClientTerminalCommands(
        FakeClientLink(client),  # type: ignore[arg-type]
        tmp_path,
        lambda: "sess-1",
        pass_env=["DEPLOY_TOKEN"],
    )
    await run(executor, tmp_path, Seen())
    env = client.params("terminal/create")[0]["env"]
    assert EnvVariable(name="OPENAI_API_KEY", value="") in env
    assert not any(v.name == "DEPLOY_TOKEN" for v in env)
    assert not any("sk-test" in v.value for v in env)


def test_the_client_s_terminal_is_used_only_when_offered(tmp_path: Path) -> None:
    client = FakeAcpClient()
    assert client_terminal(FakeClientLink(client, terminal=False), tmp_path, lambda: "s") is None  # type: ignore[arg-type]
    assert client_terminal(FakeClientLink(client, initialized=False), tmp_path, lambda: "s") is None  # type: ignore[arg-type]
    offered = client_terminal(FakeClientLink(client), tmp_path, lambda: "s")  # type: ignore[arg-type]
    assert isinstance(offered, ClientTerminalCommands)


def test_new_output_survives_the_client_dropping_the_start() -> None:
    pieces: list[str] = []
    new = _NewOutput(pieces.append)
    new.feed("abc\n")
    new.feed("abc\ndef\n")
    new.feed("c\ndef\nghi\n")  # the client dropped "ab"
    new.feed("c\ndef\nghi\n")  # nothing new
    assert pieces == ["abc\n", "def\n", "ghi\n"]
