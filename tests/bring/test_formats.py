"""The setup files' formats, read from real files: frontmatter, skills
(the Agent Skills rules), custom agents (Claude Code's and Copilot's, their
tools mapped to Rein's), commands (namespaces, arguments, what is not a
command), the skill tool, and the one view of them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.bring.agents import CLAUDE_TOOLS, COPILOT_TOOLS, discover_agents, map_tools
from rein.bring.commands import CommandError, discover_commands, resolve
from rein.bring.frontmatter import FrontmatterError, parse
from rein.bring.skills import SkillArgs, SkillTool, discover_skills
from rein.config import load_config
from rein.harness.errors import ToolError
from rein.session.setup_files import (
    prompted,
    setup_inventory,
    setup_problems,
    skill_tool,
    skills_of,
)
from tests.bring.setup_repo import setup_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return setup_repo(tmp_path / "repo")


def test_frontmatter_is_read_strictly() -> None:
    doc = parse("---\nname: a\n---\nbody\n")
    assert (doc.meta, doc.body) == ({"name": "a"}, "body\n")
    assert parse("no block\n").meta == {}
    with pytest.raises(FrontmatterError, match="no closing"):
        parse("---\nname: a\n")
    with pytest.raises(FrontmatterError, match="not valid YAML"):
        parse("---\nname: [a\n---\n")
    with pytest.raises(FrontmatterError, match="not a mapping"):
        parse("---\n- a\n---\n")


def test_an_argument_hint_is_its_text_as_claude_code_documents_it(tmp_path: Path) -> None:
    # Defect: Claude Code's own examples made the command invalid: YAML
    # reads "[message]" as a list, and "[pr-number] [priority]" not at all.
    root = tmp_path / "r"
    hints = {
        "commit": "[message]",
        "review-pr": "[pr-number] [priority] [assignee]",
        "tag": "add [tagId] | remove [tagId] | list  # a comment",
        "quoted": "'it''s [x]'",
    }
    write(
        root,
        {
            f".claude/commands/{name}.md": f"---\nargument-hint: {hint}\ndescription: d\n---\nDo $1.\n"
            for name, hint in hints.items()
        },
    )
    found = discover_commands(root)
    assert found.invalid == ()
    assert {c.name: c.argument_hint for c in found.commands} == {
        "commit": "[message]",
        "review-pr": "[pr-number] [priority] [assignee]",
        "tag": "add [tagId] | remove [tagId] | list",
        "quoted": "it's [x]",
    }
    # Only that field: another value that is not YAML is still an error.
    with pytest.raises(FrontmatterError, match="not valid YAML"):
        parse("---\ndescription: [a] [b]\n---\nx\n")


def test_skills_follow_the_specification_and_the_invalid_are_reported(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    write(
        home,
        {
            ".claude/skills/mine/SKILL.md": "---\nname: mine\ndescription: Mine.\n---\nDo it.\n",
            ".claude/skills/Upper/SKILL.md": "---\nname: Upper\ndescription: x\n---\n",
            ".claude/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n",
            ".claude/skills/meta/SKILL.md": (
                "---\nname: meta\ndescription: x\nmetadata: {a: 1}\n---\n"
            ),
            ".claude/skills/greeting/SKILL.md": "---\nname: greeting\ndescription: x\n---\n",
        },
    )
    found = discover_skills(repo, home)
    assert [s.name for s in found.skills] == ["greeting", "mine"]
    # Your own skill keeps its name over the workspace's (Claude Code:
    # personal over project).
    assert found.skills[0].source == "~/.claude/skills/greeting/SKILL.md"
    greeting = discover_skills(repo).skills[0]
    assert greeting.files == ("references/style.md", "scripts/hello.sh")
    assert greeting.in_workspace == ".claude/skills/greeting"
    assert greeting.allowed_tools == ("Bash(bash:*)", "Read")
    reasons = {i.path: i.reason for i in found.invalid}
    assert reasons == {
        ".claude/skills/broken/SKILL.md": "name: 'other' is not the name of its folder 'broken'",
        "~/.claude/skills/Upper/SKILL.md": (
            "name: 'Upper' is not lowercase letters, digits and single hyphens "
            "(not at the start or end)"
        ),
        "~/.claude/skills/nodesc/SKILL.md": "description: required",
        "~/.claude/skills/meta/SKILL.md": "metadata: must be a mapping of strings to strings",
        ".claude/skills/greeting/SKILL.md": (
            "a skill named greeting is already ~/.claude/skills/greeting/SKILL.md"
        ),
    }


async def test_the_skill_tool_loads_a_skill_and_reads_only_an_outside_skills_files(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    write(
        home,
        {
            ".claude/skills/mine/SKILL.md": "---\nname: mine\ndescription: Mine.\n---\nDo it.\n",
            ".claude/skills/mine/ref.md": "the reference\n",
            ".claude/skills/mine/.env.example": "KEY=1\n",
            ".claude/skills/mine/id_rsa": "PRIVATE\n",
            "secret.txt": "not the skill's\n",
        },
    )
    (home / ".claude/skills/mine/out.md").symlink_to(home / "secret.txt")
    tool = SkillTool(discover_skills(repo, home).skills)
    assert "  - greeting: Greets people the house way." in tool.prompt_section
    ctx: object = None
    loaded = await tool.execute(SkillArgs(name="greeting"), ctx)  # type: ignore[arg-type]
    assert "Run `scripts/hello.sh NAME`" in loaded.content
    assert "read_file (.claude/skills/greeting/<file>)" in loaded.content
    assert "- scripts/hello.sh" in loaded.content
    mine = await tool.execute(SkillArgs(name="mine", file="ref.md"), ctx)  # type: ignore[arg-type]
    assert mine.content == "the reference\n"
    for args, message in [
        (SkillArgs(name="mine", file="../../../secret.txt"), "is not a file of the skill mine"),
        (SkillArgs(name="mine", file="out.md"), "is not a file of the skill mine"),
        (SkillArgs(name="mine", file=str(home / "secret.txt")), "is not a file of the skill"),
        (SkillArgs(name="mine", file=".env.example"), "is a protected file"),
        (SkillArgs(name="mine", file="id_rsa"), "id_rsa is a secret file (tools.secretFiles"),
        (SkillArgs(name="greeting", file="references/style.md"), "read its files with read_file"),
        (SkillArgs(name="nope"), "no skill named 'nope'; the skills are: mine, greeting"),
    ]:
        with pytest.raises(ToolError, match=message.replace("(", r"\(")):
            await tool.execute(args, ctx)  # type: ignore[arg-type]


def test_a_skill_is_a_slash_command_and_one_only_the_person_starts_is_not_listed(
    tmp_path: Path,
) -> None:
    # Defect: /greeting was an unknown command (in Claude Code a skill is
    # /its-name), and a disable-model-invocation skill was listed to the
    # model as any other.
    root = setup_repo(tmp_path / "repo")
    write(
        root,
        {
            ".claude/skills/deploy/SKILL.md": (
                "---\nname: deploy\ndescription: Deploys.\ndisable-model-invocation: true\n"
                "argument-hint: [environment]\n---\nDeploy to $1 with scripts/go.sh.\n"
            ),
            ".claude/skills/deploy/scripts/go.sh": "echo go\n",
            ".claude/skills/quiet/SKILL.md": (
                "---\nname: quiet\ndescription: Background.\nuser-invocable: false\n---\nq\n"
            ),
            ".claude/skills/odd/SKILL.md": (
                "---\nname: odd\ndescription: d\nuser-invocable: 'no'\n---\nq\n"
            ),
            ".claude/commands/deploy.md": "the command file of the same name\n",
        },
    )
    config = load_config({"setup": {"userFolders": False}})
    ran = prompted(config, root, "/deploy staging")
    assert ran.command is not None and ran.command.source == ".claude/skills/deploy/SKILL.md"
    assert ran.text.startswith("# Skill: deploy\n\nDeploy to staging with scripts/go.sh.")
    assert "read its files with read_file (.claude/skills/deploy/<file>)" in ran.text
    assert "- scripts/go.sh" in ran.text
    greeting = prompted(config, root, "/greeting Ann")
    assert greeting.text.endswith("ARGUMENTS: Ann")
    with pytest.raises(CommandError, match="unknown command /quiet"):
        prompted(config, root, "/quiet")
    tool = skill_tool(config, root)
    assert tool is not None
    assert "  - greeting:" in tool.prompt_section and "quiet" in tool.prompt_section
    assert "deploy" not in tool.prompt_section
    items = {(i.kind, i.name): i for i in setup_inventory(config, root).items}
    assert items[("command", "/deploy")].source == ".claude/skills/deploy/SKILL.md"
    assert items[("skill", "deploy")].detail == "Deploys. (only with /deploy)"
    problems = setup_problems(config, root)
    assert (
        "command .claude/commands/deploy.md is not used: /deploy is already the skill "
        ".claude/skills/deploy/SKILL.md" in problems
    )
    assert any("user-invocable: must be true or false, not 'no'" in p for p in problems)


def test_custom_agents_of_both_formats_with_their_tools_mapped(repo: Path) -> None:
    write(
        repo,
        {
            ".github/agents/planner.agent.md": (
                "---\ndescription: Plans.\ntools: ['search', 'read', 'fetch']\n---\nPlan it.\n"
            )
        },
    )
    found = discover_agents(repo)
    by_name = {a.name: a for a in found.agents}
    assert by_name["reader"].tools == ("read_file", "grep", "glob")
    assert by_name["reader"].model == "sonnet"
    assert by_name["reader"].instructions.startswith("You are a careful reader.")
    assert by_name["planner"].tools == ("grep", "glob", "list_dir", "read_file")
    assert by_name["planner"].unmapped == ("fetch",)
    assert [(i.path, i.reason) for i in found.invalid] == [
        (".claude/agents/nameless.md", "name: required")
    ]
    assert map_tools(("Bash(git diff:*)", "Edit", "WebFetch"), CLAUDE_TOOLS) == (
        ["run_command", "edit_file"],
        ["WebFetch"],
    )
    assert map_tools(("edit/editFiles",), COPILOT_TOOLS)[0] == [
        "edit_file",
        "write_file",
        "delete_file",
        "move_file",
    ]


def test_an_agent_with_no_rein_tool_is_invalid_not_used(tmp_path: Path) -> None:
    # Defect: rein doctor listed it "used (tools: none; ...)", but the task
    # tool never offered it (none of its tools is offered).
    root = tmp_path / "r"
    write(
        root,
        {
            ".claude/agents/webby.md": "---\nname: webby\ndescription: d\ntools: WebFetch, WebSearch\n---\nx\n",
            ".claude/agents/half.md": "---\nname: half\ndescription: d\ntools: WebFetch, Read\n---\nx\n",
        },
    )
    found = discover_agents(root)
    assert [(a.name, a.tools, a.unmapped) for a in found.agents] == [
        ("half", ("read_file",), ("WebFetch",))
    ]
    assert [(i.path, i.reason) for i in found.invalid] == [
        (".claude/agents/webby.md", "tools: none of WebFetch, WebSearch is a Rein tool")
    ]


def test_commands_take_arguments_and_only_a_command_name_is_a_command(repo: Path) -> None:
    found = discover_commands(repo)
    assert found.names() == ["file", "explain"]
    review = found.get("file")
    assert found.get("review:file") is review  # its folder:name runs it too
    assert review is not None and review.argument_hint == "FILE CONCERN"
    assert review.allowed_tools == ("Read", "Grep")
    assert [(i.path, i.reason.split(" (")[0]) for i in found.invalid] == [
        (".claude/commands/bad.md", "the frontmatter is not valid YAML")
    ]
    ran = resolve('/review:file app.py "error handling"', found)
    assert ran is not None
    assert ran.prompt == (
        'Review app.py for error handling only. The whole request: app.py "error handling"'
    )
    explain = resolve("/explain rein.bring", found)
    assert explain is not None and explain.prompt == "Explain rein.bring briefly."
    assert explain.command.mode == "explain"
    # Paths and file names are not commands; // sends a leading slash.
    for text in ("/etc/hosts explain", "/setup.py what is it", "fix /x", "//review:file a"):
        assert resolve(text, found) is None
    with pytest.raises(CommandError) as caught:
        resolve("/nope now", found)
    assert str(caught.value) == (
        "unknown command /nope; the known commands are: /file, /explain "
        "(to send a text that starts with '/', start it with '//')"
    )


def test_a_body_without_placeholders_gets_the_arguments_and_modes_apply(tmp_path: Path) -> None:
    root = tmp_path / "r"
    write(root, {".claude/commands/go.md": "---\nmode: plan\n---\nDo the thing.\n"})
    config = load_config({"setup": {"userFolders": False}}, "test")
    ran = prompted(config, root, "/go fast")
    assert ran.text == "Do the thing.\n\nARGUMENTS: fast"
    # The mode asked for wins, agent too; none asked: the command's.
    assert (ran.mode(None), ran.mode("agent"), ran.mode("explain")) == ("plan", "agent", "explain")
    assert prompted(config, root, "plain").mode(None) == "agent"
    assert prompted(config, root, "//go").text == "/go"
    # Substituted once: an argument's own placeholders stay as written.
    write(root, {".claude/commands/two.md": "A $1 B $2 C $ARGUMENTS\n"})
    assert prompted(config, root, "/two $2 $ARGUMENTS").text == "A $2 B $ARGUMENTS C $2 $ARGUMENTS"
    write(root, {".claude/commands/odd.md": "$0 $ARGUMENTS[1] $1\n"})
    assert prompted(config, root, "/odd x y").text == "$0 $ARGUMENTS[1] x"
    off = load_config({"setup": {"userFolders": False, "commands": False}}, "test")
    with pytest.raises(CommandError, match="the known commands are: none"):
        prompted(off, root, "/go")


def test_a_command_file_with_no_body_is_invalid_and_running_it_says_why(tmp_path: Path) -> None:
    # Defect: an empty command file was listed as used, and `/zero` sent an
    # empty prompt (`/zero args` only "ARGUMENTS: args"), saying nothing.
    root = tmp_path / "r"
    write(
        root,
        {
            ".claude/commands/zero.md": "",
            ".github/prompts/blank.prompt.md": "---\ndescription: nothing\n---\n\n  \n",
            ".claude/commands/ok.md": "Do it.\n",
        },
    )
    found = discover_commands(root)
    assert found.names() == ["ok"]
    reason = "the body is empty: a command's body is the prompt it sends"
    assert sorted((i.path, i.reason) for i in found.invalid) == [
        (".claude/commands/zero.md", reason),
        (".github/prompts/blank.prompt.md", reason),
    ]
    for name, path in (
        ("zero", ".claude/commands/zero.md"),
        ("blank", ".github/prompts/blank.prompt.md"),
    ):
        with pytest.raises(CommandError) as caught:
            resolve(f"/{name} some args", found)
        assert str(caught.value) == (
            f"/{name} is not usable: {path}: {reason}; the known commands are: /ok "
            "(to send a text that starts with '/', start it with '//')"
        )


def test_a_commands_model_is_mapped_to_the_configured_providers(repo: Path) -> None:
    mapped = load_config(
        {
            "model": {"provider": "anthropic", "model": "claude-opus-4-1"},
            "setup": {"userFolders": False, "agentModels": {"haiku": "claude-haiku-4-5"}},
        },
        "test",
    )
    config, said = prompted(mapped, repo, "/file a b").configured(mapped)
    assert (config.model.model, config.model.provider) == ("claude-haiku-4-5", "anthropic")
    assert said == "/file runs on claude-haiku-4-5"
    unmapped = load_config({"setup": {"userFolders": False}}, "test")
    config, said = prompted(unmapped, repo, "/review:file a b").configured(unmapped)
    assert config is unmapped and said is not None and "is not mapped" in said
    assert prompted(unmapped, repo, "/explain x").configured(unmapped) == (unmapped, None)


def test_the_setup_view_lists_every_kind_with_its_source_and_status(repo: Path) -> None:
    write(repo, {"AGENTS.md": "Be brief.\n"})
    config = load_config({"setup": {"userFolders": False}}, "test")
    lines = setup_inventory(config, repo).lines()
    assert lines[0] == "hooks: none found"
    text = "\n".join(lines)
    for expected in [
        "  greeting (.claude/skills/greeting/SKILL.md): used",
        "  broken (.claude/skills/broken/SKILL.md): invalid\n"
        "      name: 'other' is not the name of its folder 'broken'",
        "  reader (.claude/agents/reader.md): used\n"
        "      Reads code and reports; never changes anything. "
        "(tools: read_file, grep, glob; model sonnet)",
        "  /file (.claude/commands/review/file.md): used",
        "  /explain (.github/prompts/explain.prompt.md): used",
        "  AGENTS.md (AGENTS.md): used\n      applies to the whole workspace",
    ]:
        assert expected in text, text


def test_a_subfolder_is_shown_not_named_and_two_files_of_one_name_clash(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(
        root,
        {
            ".claude/commands/backend/build.md": "Build the API.\n",
            ".claude/commands/frontend/build.md": "Build the UI.\n",
            ".claude/commands/frontend/component.md": "Make a component $1.\n",
        },
    )
    found = discover_commands(root)
    assert found.names() == ["build", "component"]
    assert found.get("component").description == "Make a component $1. (project:frontend)"
    assert resolve("/component Button", found).prompt == "Make a component Button."
    assert resolve("/frontend:component Button", found).prompt == "Make a component Button."
    [clash] = found.invalid
    assert clash.path == ".claude/commands/frontend/build.md"
    assert clash.reason == "/build is already .claude/commands/backend/build.md"


def test_a_skill_path_that_is_not_a_folder_is_said(tmp_path: Path) -> None:
    # Defect: a setup.skillPaths entry with a typo was skipped silently.
    root = tmp_path / "r"
    write(root, {"tools/skills/lint/SKILL.md": "---\nname: lint\ndescription: d\n---\nx\n"})
    config = load_config(
        {"setup": {"userFolders": False, "skillPaths": ["tools/skills", "tools/skils"]}}, "test"
    )
    found = skills_of(config, root)
    assert [s.name for s in found.skills] == ["lint"]
    assert [i.line() for i in found.invalid] == [
        "skill tools/skils is not used: setup.skillPaths names it, but it is not a folder"
    ]


async def test_a_skill_only_the_person_starts_is_refused_until_they_start_it(
    tmp_path: Path,
) -> None:
    # Defect: disable-model-invocation hid the skill from the list, but
    # skill(name="deploy") still loaded it for the model.
    from rein.harness.messages import ToolCall, ToolResultMessage
    from rein.session import SessionSpec
    from rein.session.builder import build_session
    from tests.fakes.models import FunctionModel, assistant
    from tests.fakes.session import fake_session_ports

    root = tmp_path / "ws"
    write(
        root,
        {
            ".claude/skills/deploy/SKILL.md": (
                "---\nname: deploy\ndescription: Deploys.\ndisable-model-invocation: true\n"
                "---\nRun scripts/go.sh --prod.\n"
            )
        },
    )
    config = load_config({"setup": {"userFolders": False}})

    def reply(request: object) -> object:
        messages = request.messages  # type: ignore[attr-defined]
        if isinstance(messages[-1], ToolResultMessage):
            return assistant("done")
        skill = ToolCall(id=f"c{len(messages)}", name="skill", arguments={"name": "deploy"})
        return assistant("", skill)

    model = FunctionModel(reply)
    session = build_session(config, fake_session_ports(root, model), SessionSpec())

    def results() -> list[ToolResultMessage]:
        return [m for m in model.requests[-1].messages if isinstance(m, ToolResultMessage)]

    await session.run(lambda: session.agent.prompt("deploy it"))
    [refused] = results()
    assert refused.is_error and "started only by the person, with /deploy" in refused.content
    await session.run(lambda: session.agent.prompt(prompted(config, root, "/deploy").text))
    assert results()[-1].content.startswith("# Skill: deploy\n\nRun scripts/go.sh --prod.")


def test_your_own_command_or_skill_keeps_its_name_over_the_workspaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defect: the workspace's .claude/skills/commit took /commit from your
    # ~/.claude/commands/commit.md (and a workspace skill won over yours);
    # Claude Code's rule is personal over project.
    root, home = tmp_path / "ws", tmp_path / "home"
    write(
        home,
        {
            ".claude/commands/commit.md": "MY COMMIT TEXT\n",
            ".claude/skills/review/SKILL.md": "---\nname: review\ndescription: d\n---\nMINE\n",
        },
    )
    write(
        root,
        {
            ".claude/skills/commit/SKILL.md": "---\nname: commit\ndescription: d\n---\nTHEIRS\n",
            ".claude/skills/review/SKILL.md": "---\nname: review\ndescription: d\n---\nTHEIRS\n",
        },
    )
    monkeypatch.setattr("rein.session.setup_files._home", lambda: home)
    config = load_config({})
    assert prompted(config, root, "/commit").text == "MY COMMIT TEXT"
    assert "MINE" in prompted(config, root, "/review").text
    problems = setup_problems(config, root)
    assert (
        "command .claude/skills/commit/SKILL.md is not used: /commit is already your command "
        "~/.claude/commands/commit.md" in problems
    ), problems
