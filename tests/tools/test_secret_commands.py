"""A ``run_command`` line that names a secret file inside a word that is a
command line of its own, by a folder option or by a glob asks every time
(rein.tools.secret_commands; review23 F3, F7): the real run_command over a
tmp workspace with real files, the person declining."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.tools import ToolEnvironment
from rein.tools import RunCommandTool
from rein.tools.secret_commands import NESTING_BOUND, TOO_MANY_FILES, named_in_command
from rein.tools.secret_files import SecretFiles
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles

TOKEN = "aws_Zq8tokenvalue"

#: Lines whose words name infra/.aws/credentials only inside a word that is
#: itself a command line (the shell's -c, eval, ssh, python -c...).
NESTED = (
    "bash -c 'cat infra/.aws/credentials'",
    'sh -c "cd infra && cat .aws/credentials"',
    "bash -c \"bash -c 'cd infra && cd .aws && cat credentials'\"",
    "eval 'cat infra/.aws/credentials'",
    "su -c 'cat infra/.aws/credentials' me",
    "ssh host 'cat infra/.aws/credentials'",
    "env A=1 sh -c 'cd infra/.aws; cat credentials'",
    "xargs sh -c 'cd infra/.aws && cat credentials' < /dev/null",
    "python3 -c \"print(open('infra/.aws/credentials').read())\"",
)
#: ... relative to a folder an option names, or by a glob or a brace.
FOLDER_OR_GLOB = (
    "tar -C infra/.aws -cf - credentials",
    "env -C infra/.aws cat credentials",
    "env --chdir=infra/.aws cat credentials",
    "make -Cinfra/.aws -f credentials",
    "cat infra/.aws/cred*",
    "cat infra/.aws/credential?",
    "cat infra/.a[uvw]s/credentials",
    "cd infra && cat .a*/cred*",
    "cat infra/.aws/{config,credentials}",
    "bash -c 'cd infra/.aws && cat cred*'",
    "shopt -s dotglob; cat infra/*/credentials",
)


@pytest.fixture
def asking(root: Path, write_files: WriteFiles) -> tuple[ToolCallRecorder, FakeApprover]:
    write_files({"infra/.aws/credentials": f"key = {TOKEN}\n", "infra/app.py": "x = 1\n"})
    settings = ToolSettings(approval=ApprovalSettings(command="allow"))
    approver = FakeApprover(False)
    env = ToolEnvironment(workspace=DiskWorkspace(root), settings=settings, approver=approver)
    return ToolCallRecorder(env), approver


@pytest.mark.parametrize("command", NESTED + FOLDER_OR_GLOB)
async def test_a_secret_named_in_a_nested_line_by_a_folder_option_or_a_glob_asks(
    asking: tuple[ToolCallRecorder, FakeApprover], command: str
) -> None:
    calls, approver = asking
    declined = await calls.run(RunCommandTool(), command=command)
    assert declined.is_error and "declined" in declined.content, command
    assert TOKEN not in declined.content
    [asked] = approver.requests
    assert asked.detail.split(":")[0] == (
        "Asked because the command names infra/.aws/credentials, a secret file (tools.secretFiles)"
    )
    assert asked.rules == (), "asked every time"


async def test_a_glob_or_a_nested_line_naming_no_secret_asks_nothing(
    asking: tuple[ToolCallRecorder, FakeApprover],
) -> None:
    calls, approver = asking
    # As bash, * and infra/* leave out .aws (a leading dot is matched when written).
    for command in ("cat infra/*", "ls infra/* *", "bash -c 'cd infra && cat app.py'"):
        assert not (await calls.run(RunCommandTool(), command=command)).is_error, command
    assert approver.requests == []


def test_a_glob_over_too_many_entries_asks(
    root: Path, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rein.tools.secret_commands.GLOB_BOUND", 3)
    write_files({f"big/f{i}.txt": "x\n" for i in range(4)})
    rules = SecretFiles()
    assert named_in_command("cat big/*.txt", rules, str(root)) == ("big/*.txt", TOO_MANY_FILES)
    assert named_in_command("cat big/f1.txt", rules, str(root)) is None


def _nested(line: str, levels: int) -> str:
    for _ in range(levels):
        line = f"bash -c {shlex.quote(line)}"
    return line


def test_lines_nested_past_the_bound_are_still_looked_up() -> None:
    rules, named = SecretFiles(), ("infra/.aws/credentials", ".aws/credentials")
    # Within the bound a cd inside is followed; past it a path as written is seen.
    assert named_in_command(_nested("cd infra/.aws && cat credentials", 2), rules, "/w") == named
    deep = _nested("cd infra && cat infra/.aws/credentials", NESTING_BOUND + 3)
    assert named_in_command(deep, rules, "/w") == named
