"""Secret files (``tools.secretFiles``, rein.tools.secret_files): no path by
which a tool or the session's set-up reads a workspace file shows one to the
model, with real files in a tmp workspace. The files here are secrets the
older protected globs (``approval.denyGlobs``) do not cover (``.npmrc``,
``id_rsa``, ``.aws/credentials``...), so each test fails without the list.
Attachments are refused through the real server in
tests/lsp/test_attachments.py (``secret-file``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rein.bring.commands import discover_commands, resolve
from rein.config import load_config, resolve_config
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ConfigError, ToolError
from rein.harness.tools import ToolEnvironment
from rein.session.setup_files import prompted
from rein.tools import (
    EditFileTool,
    GrepTool,
    ListDirTool,
    ReadFileTool,
    RunCommandTool,
    WriteFileTool,
)
from rein.tools.bootstrap import bootstrap_message, find_instructions, instructions_text
from rein.tools.file_ops import DeleteFileTool, MoveFileTool
from rein.tools.secret_commands import named_in_command
from rein.tools.secret_files import (
    DEFAULT_SECRET_FILES,
    NO_SECRET_FILES,
    SecretFiles,
    glob_matches,
)
from rein.tools.settings import ApprovalSettings, GrepBackend, ToolOptions, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles

TOKEN = "npm_Zq8tokenvalue"
#: Secret files the defaults name, each holding TOKEN; none is a protected
#: (approval.denyGlobs) file.
SECRETS: dict[str, str | bytes] = {
    ".npmrc": f"//registry.npmjs.org/:_authToken={TOKEN}\n",
    ".pypirc": f"[pypi]\npassword = {TOKEN}\n",
    ".netrc": f"machine api.example.com password {TOKEN}\n",
    ".git-credentials": f"https://me:{TOKEN}@github.com\n",
    "deploy/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{TOKEN}\n",
    "svc/credentials.json": f'{{"token": "{TOKEN}"}}\n',
    "infra/.aws/credentials": f"[default]\naws_secret_access_key = {TOKEN}\n",
    ".docker/config.json": f'{{"auths": {{"r": {{"auth": "{TOKEN}"}}}}}}\n',
    "k8s/secrets.yaml": f"token: {TOKEN}\n",
}
PLAIN: dict[str, str | bytes] = {
    "app.py": "registry = 'npm'\n",
    ".env.example": "TOKEN=\n",  # a template: protected (denyGlobs), not secret
    "deploy/id_rsa.pub": "ssh-ed25519 AAAA me\n",
}


@pytest.fixture
def secrets(write_files: WriteFiles) -> None:
    write_files({**SECRETS, **PLAIN})


def _with(calls: ToolCallRecorder, **tools: object) -> ToolCallRecorder:
    calls.env.settings = ToolSettings(tools=ToolOptions.model_validate(tools))
    return calls


@pytest.mark.usefixtures("secrets")
@pytest.mark.parametrize("path", sorted(SECRETS))
async def test_read_file_refuses_a_secret_file_even_with_approval(
    calls: ToolCallRecorder, path: str
) -> None:
    approver = FakeApprover(True)
    calls.env.approver = approver
    with pytest.raises(ToolError, match=r"is a secret file \(tools\.secretFiles: ") as info:
        await calls.run(ReadFileTool(), path=path)
    assert str(info.value).startswith(f"{path} is a secret file")
    assert "ask the person" in str(info.value)
    assert TOKEN not in str(info.value)
    assert approver.requests == [], "a secret file is not offered for approval"


@pytest.mark.usefixtures("secrets")
async def test_a_link_to_a_secret_file_is_refused_and_a_template_is_not_secret(
    calls: ToolCallRecorder, root: Path
) -> None:
    (root / "notes.txt").symlink_to(root / ".npmrc")
    with pytest.raises(ToolError, match=r"notes\.txt is a secret file .*'\.npmrc'"):
        await calls.run(ReadFileTool(), path="notes.txt")
    calls.env.approver = FakeApprover(True)
    template = await calls.run(ReadFileTool(), path=".env.example")
    assert template.content == "     1\tTOKEN="
    public = await calls.run(ReadFileTool(), path="deploy/id_rsa.pub")
    assert "ssh-ed25519" in public.content


@pytest.mark.usefixtures("secrets")
@pytest.mark.parametrize("backend", ["python", "rg"])
async def test_grep_skips_secret_files_and_refuses_to_search_one(
    calls: ToolCallRecorder, backend: GrepBackend
) -> None:
    found = await calls.run(GrepTool(backend), pattern="npm|token|password")
    assert found.content.splitlines()[0] == "app.py:1: registry = 'npm'"
    assert TOKEN not in found.content and found.details["files"] == 1
    with pytest.raises(ToolError, match=r"\.npmrc is a secret file"):
        await calls.run(GrepTool(backend), pattern="npm", path=".npmrc")


@pytest.mark.usefixtures("secrets")
async def test_list_dir_names_a_secret_file_marked_and_shows_nothing_of_it(
    calls: ToolCallRecorder,
) -> None:
    listed = await calls.run(ListDirTool())
    lines = listed.content.splitlines()
    assert f"  .npmrc ({len(SECRETS['.npmrc'])} B, secret)" in lines
    assert "  app.py (17 B)" in lines
    assert TOKEN not in listed.content


@pytest.mark.usefixtures("secrets")
async def test_the_persons_list_decides_and_an_empty_list_turns_it_off(
    calls: ToolCallRecorder,
) -> None:
    _with(calls, secretFiles=[])
    read = await calls.run(ReadFileTool(), path=".npmrc")
    assert TOKEN in read.content
    _with(calls, secretFiles=["*.py"])
    with pytest.raises(ToolError, match=r"app\.py is a secret file \(tools\.secretFiles: '\*\.py'"):
        await calls.run(ReadFileTool(), path="app.py")
    assert TOKEN in (await calls.run(ReadFileTool(), path=".npmrc")).content


def test_a_workspace_only_adds_secret_files() -> None:
    # The person turned the list off; the workspace's settings add a glob.
    config = load_config({"tools": {"secretFiles": [], "workspaceSecretFiles": ["*.cfg"]}})
    rules = config.tool_settings().secret_files
    assert rules.matched_by("deploy/prod.cfg") == "*.cfg"
    assert rules.matched_by(".npmrc") is None
    # An exception from a workspace would unlock a file: refused, naming the setting.
    with pytest.raises(ConfigError, match=r"rein\.tools\.workspaceSecretFiles: .*only adds"):
        load_config({"tools": {"workspaceSecretFiles": ["!.npmrc", "*.cfg"]}})
    # The language server falls back (to no additions) and says so.
    resolved = resolve_config({"tools": {"workspaceSecretFiles": ["!.env"]}})
    assert [i.key for i in resolved.issues] == ["tools.workspaceSecretFiles"]
    assert resolved.config.tool_settings().secret_files.matched_by(".env") == ".env"
    # A workspace's glob wins over the person's exception: adding is all it can do.
    both = SecretFiles.of((".env.*", "!.env.example"), (".env.example", "!.env.local"))
    assert both.matched_by(".env.example") == ".env.example"
    assert both.matched_by(".env.local") == ".env.*"
    assert not NO_SECRET_FILES and SecretFiles()


@pytest.mark.usefixtures("secrets")
async def test_edit_is_refused_and_a_write_asks_every_time(
    calls: ToolCallRecorder, root: Path
) -> None:
    with pytest.raises(ToolError, match=r"\.npmrc is a secret file .*edit_file does not change"):
        await calls.run(EditFileTool(), path=".npmrc", old_string="x", new_string="y")
    approver = FakeApprover(True)
    calls.env.approver = approver
    written = await calls.run(WriteFileTool(), path=".npmrc", content="registry=x\n")
    assert not written.is_error and TOKEN not in written.content
    [asked] = approver.requests
    assert asked.detail.startswith("Asked because .npmrc is a secret file (tools.secretFiles).")
    assert asked.rules == (), "no rule is offered to keep: asked every time"
    approver.answer = False
    declined = await calls.run(WriteFileTool(), path="infra/.aws/credentials", content="x")
    assert declined.is_error and "declined" in declined.content
    assert TOKEN in (root / "infra/.aws/credentials").read_text()


def test_a_claude_md_import_of_a_secret_file_is_not_read(
    root: Path, write_files: WriteFiles
) -> None:
    write_files({**SECRETS, "CLAUDE.md": "Publish with @.npmrc and @k8s/secrets.yaml\n"})
    found = find_instructions(root)
    assert [f.path for f in found.files] == ["CLAUDE.md"]
    assert TOKEN not in (instructions_text(found.files) or "")
    assert list(found.notes) == [
        "CLAUDE.md imports @.npmrc: .npmrc was not read: it is a secret file "
        "(tools.secretFiles: '.npmrc').",
        "CLAUDE.md imports @k8s/secrets.yaml: k8s/secrets.yaml was not read: it is a secret "
        "file (tools.secretFiles: 'secrets.yaml').",
    ]
    # The person's list decides here too.
    opened = find_instructions(root, secret_files=NO_SECRET_FILES)
    assert TOKEN in (instructions_text(opened.files) or "")


def test_a_slash_commands_at_file_that_is_secret_is_not_offered_to_read(
    root: Path, write_files: WriteFiles
) -> None:
    write_files(
        {**SECRETS, "app.py": "x = 1\n", ".claude/commands/publish.md": "Check @app.py @.npmrc\n"}
    )
    found = discover_commands(root)
    invocation = resolve("/publish", found, root)
    assert invocation is not None
    prompt = invocation.prompt
    assert "read those you need (app.py)." in prompt
    assert "secret files (tools.secretFiles: .npmrc) are not shown to you" in prompt
    assert TOKEN not in prompt
    # Through the session's prompt, with the person's settings.
    config = load_config({"setup": {"userFolders": False}})
    assert "secret files (tools.secretFiles: .npmrc)" in prompted(config, root, "/publish").text
    off = load_config({"setup": {"userFolders": False}, "tools": {"secretFiles": []}})
    assert "read those you need (app.py, .npmrc)." in prompted(off, root, "/publish").text


async def test_a_secret_file_is_refused_through_the_disk_workspace(root: Path) -> None:
    # The tools' environment as a headless session builds it (no settings: the defaults).
    (root / "id_ed25519").write_text(f"{TOKEN}\n")
    calls = ToolCallRecorder(ToolEnvironment(workspace=DiskWorkspace(root)))
    with pytest.raises(ToolError, match=r"id_ed25519 is a secret file"):
        await calls.run(ReadFileTool(), path="./id_ed25519")


@pytest.mark.usefixtures("secrets")
async def test_a_command_that_names_a_secret_file_asks_every_time(root: Path) -> None:
    settings = ToolSettings(approval=ApprovalSettings(command="allow"))
    approver = FakeApprover(False)
    env = ToolEnvironment(workspace=DiskWorkspace(root), settings=settings, approver=approver)
    calls = ToolCallRecorder(env)
    plain = await calls.run(RunCommandTool(), command="cat app.py")
    assert "registry = 'npm'" in plain.content and approver.requests == []
    named = ("cat .npmrc", f"cat {root}/infra/.aws/credentials | head", "x --rc=./.netrc")
    for command in named:
        declined = await calls.run(RunCommandTool(), command=command)
        assert (
            declined.is_error and "declined" in declined.content and TOKEN not in declined.content
        )
    assert [r.detail.split(":")[0] for r in approver.requests] == [
        "Asked because the command names .npmrc, a secret file (tools.secretFiles)",
        "Asked because the command names infra/.aws/credentials, a secret file (tools.secretFiles)",
        "Asked because the command names .netrc, a secret file (tools.secretFiles)",
    ]
    assert all(r.rules == () for r in approver.requests), "asked every time"
    approver.answer = True
    shown = await calls.run(RunCommandTool(), command="cat .npmrc")
    assert TOKEN in shown.content, "the person approved it"


#: Commands that name infra/.aws/credentials only relative to a folder they
#: moved into (review20a D).
MOVED_INTO = (
    "cd infra/.aws && cat credentials",
    "cd infra; cd .aws; cat credentials",
    "pushd infra/.aws && cat credentials",
    "(cd infra/.aws && cat credentials) | head",
    "git -C infra show HEAD:.aws/credentials",
    "git -C infra/.aws diff --no-index credentials /dev/null",
    "git --git-dir=infra/.git show HEAD:.aws/credentials",
    "git --work-tree infra diff .aws/credentials",
)


@pytest.mark.usefixtures("secrets")
async def test_a_command_naming_a_secret_file_from_a_folder_it_moved_into_asks(
    root: Path,
) -> None:
    settings = ToolSettings(approval=ApprovalSettings(command="allow"))
    approver = FakeApprover(False)
    env = ToolEnvironment(workspace=DiskWorkspace(root), settings=settings, approver=approver)
    calls = ToolCallRecorder(env)
    for command in MOVED_INTO:
        declined = await calls.run(RunCommandTool(), command=command)
        assert declined.is_error and "declined" in declined.content, command
        assert TOKEN not in declined.content
    assert [r.detail.split(":")[0] for r in approver.requests] == [
        "Asked because the command names infra/.aws/credentials, a secret file (tools.secretFiles)"
    ] * len(MOVED_INTO)
    # A folder moved into that holds no secret asks nothing.
    plain = await calls.run(RunCommandTool(), command="cd infra && cd .. && cat app.py")
    assert not plain.is_error and len(approver.requests) == len(MOVED_INTO)


def test_a_quoted_or_moved_into_name_is_seen_and_a_plain_one_is_not() -> None:
    rules = SecretFiles()
    assert named_in_command('cat .e""nv', rules, "/w") == (".env", ".env")
    assert named_in_command("cd /w/a && cat .env", rules, "/w") == ("a/.env", ".env")
    assert named_in_command("cd src && cat app.py; cat ../README.md", rules, "/w") is None
    assert named_in_command("cd ~ && cat notes", rules, "/w") is None


async def test_moving_or_deleting_a_folder_that_holds_a_secret_file_asks_every_time(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    # .aws and aws match no glob: only a look inside the folder sees the file.
    write_files({".aws/credentials": f"key = {TOKEN}\n", "src/app.py": "x = 1\n"})
    approver = FakeApprover(False)
    calls.env.approver = approver
    moved = await calls.run(MoveFileTool(), path=".aws", new_path="aws")
    deleted = await calls.run(DeleteFileTool(), path=".aws")
    assert moved.is_error and deleted.is_error and "declined" in moved.content
    assert (root / ".aws/credentials").read_text() == f"key = {TOKEN}\n"
    assert [r.detail.split("\n")[0] for r in approver.requests] == [
        "Asked every time because the folder .aws holds .aws/credentials, a secret file "
        "(tools.secretFiles: '.aws/credentials'); once moved it is aws/credentials, which no "
        "secret glob names, so the agent can read it.",
        "Asked every time because the folder .aws holds .aws/credentials, a secret file "
        "(tools.secretFiles: '.aws/credentials').",
    ]
    assert all(r.rules == () for r in approver.requests), "no rule is offered to keep"
    # Into the glob counts too (aws to .aws), and a folder of none is not asked about.
    (root / ".aws").rename(root / "aws")
    assert (await calls.run(MoveFileTool(), path="aws", new_path=".aws")).is_error
    assert approver.requests[-1].detail.startswith(
        "Asked every time because the folder aws holds .aws/credentials"
    )
    asked = len(approver.requests)
    assert not (await calls.run(MoveFileTool(), path="src", new_path="lib")).is_error
    assert len(approver.requests) == asked and (root / "lib/app.py").is_file()


async def test_a_folder_too_large_to_look_through_asks(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rein.tools.secret_walk.WALK_BOUND", 3)
    write_files({f"big/f{i}.txt": "x\n" for i in range(4)})
    approver = FakeApprover(False)
    calls.env.approver = approver
    assert (await calls.run(DeleteFileTool(), path="big")).is_error
    [asked] = approver.requests
    assert asked.detail.startswith("Asked every time because the folder big has more than 3")


async def test_a_hard_link_to_a_secret_file_is_asked_about_as_one(
    calls: ToolCallRecorder, root: Path, write_files: WriteFiles
) -> None:
    write_files({".npmrc": f"_authToken={TOKEN}\n", "plain.txt": "hello\n"})
    os.link(root / ".npmrc", root / "notes.txt")
    os.link(root / "plain.txt", root / "other.txt")
    approver = FakeApprover(False)
    calls.env.approver = approver
    assert (await calls.run(ReadFileTool(), path="notes.txt")).is_error
    assert (await calls.run(ReadFileTool(), path="other.txt")).is_error
    secret, plain = (r.detail for r in approver.requests)
    assert secret == (
        "The agent wants to read notes.txt, but it is another name of .npmrc, a secret file "
        "(tools.secretFiles: '.npmrc')."
    )
    assert "secret" not in plain and "hard link (2 names)" in plain


def test_a_command_naming_a_secret_file_after_a_colon_or_by_an_odd_path_is_seen() -> None:
    rules = SecretFiles()
    assert named_in_command("git show HEAD:.env", rules, "/w") == (".env", ".env")
    assert named_in_command("cat /w//a/.env", rules, "/w") == ("a/.env", ".env")
    for command in ("cat .aws/./credentials", "cat .aws//credentials", "cat x/../.aws/credentials"):
        assert named_in_command(command, rules, "/w") == (".aws/credentials", ".aws/credentials")
    assert named_in_command("cat src/../../.env https://x.org/a", rules, "/w") is None


def test_a_path_outside_the_workspace_is_left_to_the_os_sandbox() -> None:
    rules = SecretFiles()
    assert named_in_command("cat ~/.npmrc /etc/.netrc ../.env", rules, "/w") is None
    assert named_in_command("source /w/sub/.env && pytest", rules, "/w") == ("sub/.env", ".env")
    assert named_in_command("cp .env.example .env", rules, "/w") == (".env", ".env")
    assert named_in_command("cat .env", NO_SECRET_FILES, "/w") is None


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        "a/b/.ENV.Production",
        ".env.example",
        "x/.env.sample",
        "id_rsa.pub",
        "keys/id_rsa",
        "infra/.aws/credentials",
        ".aws/config",
        ".aws/credentials/old",
        ".env/lib/python3.12/site-packages/x.py",  # a virtual environment named .env
        "svc/service-account-prod.json",
        "terraform/prod.tfvars",
        "src/secrets.py",
        "notes.md",
        "a/vault/b.txt",
        "top/x",
        "sub/top/x",
        "q/deploy/a.cfg",
    ],
)
def test_the_combined_match_agrees_with_each_glob(path: str) -> None:
    rules = SecretFiles((*DEFAULT_SECRET_FILES, "vault/", "/top/**", "deploy/*.cfg"))
    exceptions = [g[1:] for g in rules.globs if g.startswith("!")]
    naive = next(
        (
            g
            for g in rules.globs
            if not g.startswith("!")
            and glob_matches(g, path)
            and not any(glob_matches(e, path) for e in exceptions)
        ),
        None,
    )
    assert rules.matched_by(path) == naive


def test_a_glob_names_files_and_a_folder_glob_its_files() -> None:
    rules = SecretFiles(("vault/", "/top/**", "deploy/*.cfg", ".env"))
    assert rules.matched_by("a/vault/x/y.txt") == "vault/"
    assert rules.matched_by("top/k.txt") == "/top/**"
    assert rules.matched_by("sub/top/k.txt") is None  # anchored at the root
    assert rules.matched_by("x/deploy/prod.cfg") == "deploy/*.cfg"
    assert rules.matched_by(".env/bin/python") is None  # a folder named .env is no secret
    assert rules.matched_by("vault") is None


def test_the_extensions_default_is_the_servers() -> None:
    manifest = Path(__file__).resolve().parents[2] / "vscode-client" / "package.json"
    properties = json.loads(manifest.read_text(encoding="utf-8"))["contributes"]["configuration"]
    setting = properties["properties"]["rein.tools.secretFiles"]
    assert tuple(setting["default"]) == DEFAULT_SECRET_FILES
    assert "scope" not in setting, "a workspace may add (the extension sends its values apart)"


def test_the_bootstrap_context_follows_the_persons_list(
    root: Path, write_files: WriteFiles
) -> None:
    write_files({"CLAUDE.md": "See @notes.txt\n", "notes.txt": f"key {TOKEN}\n"})
    shown = bootstrap_message(root, include_instructions=True)
    assert TOKEN in shown
    hidden = bootstrap_message(
        root, include_instructions=True, secret_files=SecretFiles(("notes.txt",))
    )
    assert TOKEN not in hidden
    assert "notes.txt was not read: it is a secret file (tools.secretFiles: 'notes.txt')" in hidden
