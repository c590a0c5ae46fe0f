"""What a setup file may not do: lead out of its folder through a symlink,
reach a protected file, or crash discovery with its YAML."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.bring.agents import discover_agents
from rein.bring.commands import discover_commands
from rein.bring.frontmatter import MAX_FRONTMATTER_BYTES, FrontmatterError, parse
from rein.bring.skills import discover_skills
from tests.bring.setup_repo import write

SECRET = "API_KEY=sk-live-123456"


def test_deep_or_huge_frontmatter_is_an_error_not_a_crash() -> None:
    deep = "---\nx: " + "[" * 5000 + "\n---\nbody\n"
    with pytest.raises(FrontmatterError, match="nested too deeply"):
        parse(deep)
    huge = "---\nx: " + "a" * (MAX_FRONTMATTER_BYTES + 1) + "\n---\n"
    with pytest.raises(FrontmatterError, match="over"):
        parse(huge)


def test_setup_files_are_not_read_through_links_out_or_to_protected_files(
    tmp_path: Path,
) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    secret = tmp_path / "secret.env"
    secret.write_text(SECRET + "\n")
    write(
        root,
        {
            ".env": SECRET + "\n",
            ".claude/commands/ok.md": "Fine.\n",
            ".claude/agents/ok.md": "---\nname: ok\ndescription: d\n---\nbody\n",
            ".claude/skills/ok/SKILL.md": "---\nname: ok\ndescription: d\n---\nbody\n",
        },
    )
    commands = root / ".claude" / "commands"
    os.symlink(secret, commands / "review.md")
    os.symlink("../../.env", commands / "env.md")
    os.link(root / ".env", commands / "hard.md")
    os.symlink(secret, root / ".claude" / "agents" / "out.md")
    (root / ".claude" / "skills" / "out").mkdir()
    os.symlink(secret, root / ".claude" / "skills" / "out" / "SKILL.md")
    # A user's file may not lead out of its own folder either.
    write(home, {".claude/commands/mine.md": "Mine.\n"})
    os.symlink(secret, home / ".claude" / "commands" / "leak.md")

    found = discover_commands(root, home)
    assert found.names() == ["mine", "ok"]  # yours first
    reasons = {i.path: i.reason for i in found.invalid}
    assert "symlink out of the workspace" in reasons[".claude/commands/review.md"]
    assert "protected file" in reasons[".claude/commands/env.md"]
    assert "hard link" in reasons[".claude/commands/hard.md"]
    assert "symlink out of its folder" in reasons["~/.claude/commands/leak.md"]
    agents = discover_agents(root, home)
    assert [a.name for a in agents.agents] == ["ok"]
    assert "symlink out of the workspace" in agents.invalid[0].reason
    skills = discover_skills(root, home)
    assert [s.name for s in skills.skills] == ["ok"]
    assert "symlink out of the workspace" in skills.invalid[0].reason
    everything = repr((found, agents, skills))
    assert "sk-live" not in everything


def test_a_commands_folder_is_read_up_to_its_cap(tmp_path: Path, monkeypatch) -> None:
    import rein.bring.commands as commands

    monkeypatch.setattr(commands, "MAX_FILES", 3)
    root = tmp_path / "ws"
    write(root, {f".claude/commands/c{i}.md": "Do it.\n" for i in range(5)})
    found = discover_commands(root)
    assert len(found.commands) == 3
    [cut] = found.invalid
    assert (cut.path, cut.reason) == (
        ".claude/commands",
        "over 3 files: only the first 3 found are read",
    )


def test_an_agent_none_of_whose_tools_is_offered_is_not_a_task_agent(tmp_path: Path) -> None:
    from rein.config import load_config
    from rein.session.setup_files import agent_kinds

    root = tmp_path / "ws"
    write(
        root,
        {
            ".claude/agents/writer.md": "---\nname: writer\ndescription: d\ntools: Edit\n---\nb\n",
            ".claude/agents/reader.md": "---\nname: reader\ndescription: d\ntools: Read\n---\nb\n",
            ".claude/agents/any.md": "---\nname: any\ndescription: d\n---\nb\n",
        },
    )
    config = load_config({"setup": {"userFolders": False}})
    kinds = agent_kinds(config, root, ["read_file", "grep"], None)
    assert sorted(k.name for k in kinds) == ["any", "reader"]


def test_an_agents_disallowed_tools_are_never_its_own(tmp_path: Path) -> None:
    # Defect: Claude Code's disallowedTools was not read, so a reviewer
    # written "every tool but Write, Edit and Bash" could write and run.
    from rein.config import load_config
    from rein.flows.subagent_kinds import kind_tools
    from rein.session.setup_files import agent_kinds

    root = tmp_path / "ws"
    write(
        root,
        {
            ".claude/agents/reviewer.md": (
                "---\nname: reviewer\ndescription: d\n"
                "disallowedTools: Write, Edit, Bash, mcp__db, mcp__gh__push\n---\nb\n"
            ),
            ".claude/agents/notebooks.md": (
                "---\nname: notebooks\ndescription: d\ndisallowedTools: NotebookEdit\n---\nb\n"
            ),
            ".claude/agents/reader.md": (
                "---\nname: reader\ndescription: d\ntools: [Read, Grep, Bash]\n"
                "disallowedTools: [Bash]\n---\nb\n"
            ),
            ".claude/agents/nothing.md": (
                "---\nname: nothing\ndescription: d\ntools: Bash\ndisallowedTools: Bash\n---\nb\n"
            ),
        },
    )
    offered = [
        "read_file", "grep", "edit_file", "write_file", "delete_file", "move_file",
        "run_command", "task", "mcp__db__query", "mcp__gh__push", "mcp__gh__list",
    ]  # fmt: skip
    config = load_config({"setup": {"userFolders": False}})
    kinds = {k.name: kind_tools(k, offered) for k in agent_kinds(config, root, offered, None)}
    assert kinds == {
        "reviewer": ["read_file", "grep", "task", "mcp__gh__list"],
        "reader": ["read_file", "grep"],
        # Every file-changing tool, delete_file and move_file too.
        "notebooks": ["read_file", "grep", "run_command", "task", *offered[-3:]],
    }
    [invalid] = discover_agents(root).invalid
    assert (invalid.path, invalid.reason) == (
        ".claude/agents/nothing.md",
        "disallowedTools: takes away every tool its tools field gives",
    )


def test_an_agents_mcp_tools_are_its_own(tmp_path: Path) -> None:
    # Defect: "tools: Read, mcp__gh__list" gave the agent only read_file and
    # told the model mcp__gh__list "has no Rein tool", while Rein offers the
    # MCP tool under exactly that name.
    from rein.config import load_config
    from rein.flows.subagent_kinds import kind_tools
    from rein.session.setup_files import agent_kinds

    root = tmp_path / "ws"
    write(
        root,
        {
            ".claude/agents/gh.md": (
                "---\nname: gh\ndescription: d\ntools: Read, mcp__gh__list, mcp__db\n---\nb\n"
            ),
            ".claude/agents/only-mcp.md": (
                "---\nname: only-mcp\ndescription: d\ntools: mcp__db__*\n---\nb\n"
            ),
        },
    )
    [gh, only] = sorted(discover_agents(root).agents, key=lambda a: a.name)
    assert (gh.tools, gh.unmapped) == (("read_file", "mcp__gh__list", "mcp__db__*"), ())
    config = load_config({"setup": {"userFolders": False}})
    # Built before the MCP servers start: their tools are not offered yet.
    kinds = {k.name: k for k in agent_kinds(config, root, ["read_file", "grep"], None)}
    assert sorted(kinds) == ["gh", "only-mcp"] and kinds["gh"].note == ""
    offered = ["read_file", "grep", "mcp__gh__list", "mcp__gh__push", "mcp__db__query"]
    assert kind_tools(kinds["gh"], offered) == ["read_file", "mcp__gh__list", "mcp__db__query"]
    assert kind_tools(kinds["only-mcp"], offered) == ["mcp__db__query"]
    assert only.unmapped == ()


def test_a_skill_folder_linked_to_a_broad_folder_is_refused(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    write(home, {"SKILL.md": "---\nname: all\ndescription: d\n---\nb\n", "notes.txt": "x"})
    (home / ".claude" / "skills").mkdir(parents=True)
    os.symlink(home, home / ".claude" / "skills" / "all")
    root.mkdir()
    found = discover_skills(root, home)
    assert found.skills == ()
    [refused] = found.invalid
    assert "a skill's folder holds only the skill" in refused.reason


def test_a_prompt_file_naming_a_custom_agent_says_why_it_is_not_used(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {".github/prompts/r.prompt.md": "---\nagent: reader\n---\nReview.\n"})
    [refused] = discover_commands(root).invalid
    assert refused.reason.startswith("agent: 'reader' is not one of agent, edit, plan, ask")
    assert "run by a custom agent is not supported" in refused.reason


def test_a_workspace_that_is_the_home_folder_reads_its_setup_folders_once(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    write(
        home,
        {
            ".claude/commands/go.md": "Go.\n",
            ".claude/agents/ok.md": "---\nname: ok\ndescription: d\n---\nbody\n",
            ".claude/skills/ok/SKILL.md": "---\nname: ok\ndescription: d\n---\nbody\n",
        },
    )
    commands = discover_commands(home, home)
    agents = discover_agents(home, home)
    skills = discover_skills(home, home)
    assert (commands.names(), commands.invalid) == (["go"], ())
    assert ([a.name for a in agents.agents], agents.invalid) == (["ok"], ())
    assert ([s.name for s in skills.skills], skills.invalid) == (["ok"], ())
    assert {commands.commands[0].scope, agents.agents[0].scope} == {"project"}


async def test_a_commands_bang_lines_never_run_and_the_model_is_told(tmp_path: Path) -> None:
    # Defect: the model read "Status: !`git status`" and "@docs/x.md" as if
    # Claude Code had put in the output and the file; nothing said they
    # were not there. They must still never run: the prompt goes through a
    # session with a real command runner, and the same line, run, would
    # leave the marker (so the check can fail). The note names no tool a
    # session may lack, and only the @ names that are files (not @alice).
    import anyio

    from rein.bring.commands import resolve
    from rein.config import load_config
    from rein.session import SessionSpec
    from rein.session.builder import build_session
    from rein.session.setup_files import prompted
    from tests.fakes.models import FunctionModel, assistant
    from tests.fakes.session import fake_session_ports

    root = tmp_path / "ws"
    marker = tmp_path / "ran"
    write(
        root,
        {
            ".claude/commands/commit.md": (
                "---\nallowed-tools: Bash(touch:*)\n---\n"
                f"- Status: !`touch {marker}`\n- Rules: @docs/rules.md\n- Mail: a@b.com\n"
                "- Ask @alice\n```\n@pytest.fixture\n```\nCommit $ARGUMENTS\n"
            ),
            ".claude/commands/plain.md": "Say $ARGUMENTS\n",
            "docs/rules.md": "rules\n",
        },
    )
    config = load_config({"setup": {"userFolders": False}})
    ran = prompted(config, root, "/commit fix")
    assert ran.text == (
        f"- Status: !`touch {marker}`\n- Rules: @docs/rules.md\n- Mail: a@b.com\n"
        "- Ask @alice\n```\n@pytest.fixture\n```\nCommit fix\n\n"
        "(The !`...` commands above were not run and their output is not here: run those "
        f"you need if one of your tools runs commands (touch {marker}). The files named "
        "with @ above are not attached: read those you need (docs/rules.md).)"
    )
    model = FunctionModel(lambda request: assistant("ok"))
    session = build_session(config, fake_session_ports(root, model), SessionSpec())
    await session.run(lambda: session.agent.prompt(ran.text))
    assert model.requests and not marker.exists()
    with anyio.fail_after(10):
        await anyio.run_process(["sh", "-c", f"touch {marker}"])
    assert marker.exists()  # the line itself works: not running it is what kept it away
    found = discover_commands(root)
    plain = resolve("/plain hi", found)
    assert plain is not None and plain.prompt == "Say hi"
