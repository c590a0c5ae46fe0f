"""The system prompt and the bootstrap context; the prompt names no tool
that is not registered."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rein.flows.plan_tools import complete_step_tool, planner_system_prompt, toolkit_overview
from rein.harness.prompts import (
    ACTING_ROLES,
    NO_COMMAND,
    NO_WRITE,
    ROLE_SECTIONS,
    Role,
    build_system_prompt,
)
from rein.harness.tools import Tool, ToolRegistry
from rein.tools import (
    bootstrap_message,
    default_tools,
    project_instructions,
    workspace_summary,
)
from tests.fakes.tools import EchoTool
from tests.tools.conftest import WriteFiles

# A backticked identifier, or a snake_case word anywhere.
TOOL_LIKE = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")


def _offered(tools: ToolRegistry, role: Role) -> list[Tool[Any]]:
    return [*tools.tools(), complete_step_tool()] if role == "executor" else tools.tools()


def _prompt(tools: ToolRegistry, role: Role = "agent", instructions: str | None = None) -> str:
    return build_system_prompt(_offered(tools, role), role, instructions)


def _unknown_identifiers(prompt: str, tools: list[Tool[Any]]) -> set[str]:
    allowed = {t.name for t in tools}
    for tool in tools:
        allowed |= set(tool.schema().parameters.get("properties", {}))
    found = {a or b for a, b in TOOL_LIKE.findall(prompt)}
    return found - allowed


@pytest.mark.parametrize("role", ACTING_ROLES)
@pytest.mark.parametrize("read_only", [False, True], ids=["all-tools", "read-only"])
def test_prompt_names_only_registered_tools(role: Role, read_only: bool) -> None:
    tools = default_tools(read_only=read_only)
    prompt = _prompt(tools, role)
    assert _unknown_identifiers(prompt, _offered(tools, role)) == set()
    for tool in _offered(tools, role):
        assert f"`{tool.name}`" in prompt


@pytest.mark.parametrize("name", default_tools().names())
def test_each_tool_alone_gets_a_prompt_naming_only_itself(name: str) -> None:
    tools = default_tools().subset([name])
    prompt = _prompt(tools)
    assert _unknown_identifiers(prompt, tools.tools()) == set()
    others = set(default_tools().names()) - {name}
    assert not any(f"`{other}`" in prompt for other in others)


def test_guard_catches_a_missing_tool() -> None:
    tools = default_tools().subset(["read_file"])
    prompt = build_system_prompt(
        tools.tools(), "agent", sections={"read_file": "use `edit_file` after"}
    )
    assert _unknown_identifiers(prompt, tools.tools()) == {"edit_file"}


def test_planner_prompt_names_its_tool_and_the_executors_only() -> None:
    tools = default_tools()
    prompt = planner_system_prompt(toolkit_overview(tools), "Use tabs.")
    executor = [t for t in tools.tools() if t.name != "ask_user"]
    assert _unknown_identifiers(prompt, executor) == {"submit_plan"}
    assert "`submit_plan`" in prompt and prompt.endswith("Use tabs.")
    assert "# The executor's tools (not yours)" in prompt


def test_layout_roles_and_project_instructions() -> None:
    tools = default_tools()
    prompt = _prompt(tools, "executor", "Run `make check` before you finish.")
    headings = [line for line in prompt.splitlines() if line.startswith("# ")]
    assert headings == ["# Rules", "# Tools", "# Role: executor", "# Project instructions"]
    assert ROLE_SECTIONS["executor"] in prompt
    assert prompt.endswith("Run `make check` before you finish.")
    tool_lines = prompt.split("# Tools\n")[1].split("\n\n")[0].splitlines()
    assert [re.findall(r"`(\w+)`", line)[0] for line in tool_lines] == [
        *tools.names(),
        "complete_step",
    ]


def test_the_role_text_follows_the_tool_classes() -> None:
    everything = _prompt(default_tools(), "subagent")
    assert NO_WRITE not in everything and NO_COMMAND not in everything
    assert "smallest change" in everything
    read_only = _prompt(default_tools(read_only=True), "subagent")
    assert NO_WRITE in read_only and NO_COMMAND in read_only
    assert "smallest change" not in read_only
    writes = _prompt(default_tools().subset(["read_file", "edit_file"]), "agent")
    assert NO_WRITE not in writes and NO_COMMAND in writes


def test_prompt_without_tools_or_sections() -> None:
    assert "No tools are available" in build_system_prompt([], "explainer")
    assert "- `echo`: Echo the text back.\n" in build_system_prompt([EchoTool()], "agent")
    with pytest.raises(ValueError, match="unknown acting role"):
        build_system_prompt([], "planner")


def test_project_instructions_reads_every_file_found_each_bounded(
    root: Path, write_files: WriteFiles
) -> None:
    """Issue 21: CLAUDE.md and the others are read as well as AGENTS.md, not
    instead of it; each file is cut at its bound."""
    assert project_instructions(root) is None
    write_files({".github/copilot-instructions.md": "copilot"})
    assert project_instructions(root) == (
        '<project_instructions file=".github/copilot-instructions.md">\ncopilot\n'
        "</project_instructions>"
    )
    write_files({"CLAUDE.md": "claude", "AGENTS.md": "agents " * 5000})
    text = project_instructions(root)
    assert text is not None
    assert text.startswith(
        "Instruction files found: AGENTS.md, CLAUDE.md, .github/copilot-instructions.md.\n"
    )
    agents = text.split('<project_instructions file="AGENTS.md">\n', 1)[1]
    agents = agents.split("\n</project_instructions>", 1)[0]
    assert agents.startswith("agents agents")
    assert agents.endswith("[... AGENTS.md cut here ...]")
    assert len(agents) < 16_100
    assert text.index("\nclaude\n") < text.index("\ncopilot\n")


@pytest.mark.usefixtures("ignore_tree")
def test_workspace_summary_is_gitignore_aware(root: Path) -> None:
    summary = workspace_summary(root)
    lines = summary.splitlines()
    assert "build/" not in summary and "debug.log" not in summary and ".git/" not in summary
    assert "sub/ (4 entries)" in lines
    assert "  special.log" in lines and "  local.txt" not in lines
    assert lines[-1] == "(4 top-level entries ignored by .gitignore not shown)"


def test_workspace_summary_is_bounded(root: Path, write_files: WriteFiles) -> None:
    write_files({f"f{i:03}.txt": "" for i in range(50)})
    write_files({f"pkg/m{i:02}.py": "" for i in range(20)})
    lines = workspace_summary(root, max_entries=10).splitlines()
    assert lines[:10] == [f"f{i:03}.txt" for i in range(10)]
    assert lines[-1] == "... 41 more top-level entries not shown"
    many = workspace_summary(root).splitlines()
    assert "pkg/ (20 entries)" in many and "  ... 12 more" in many


def test_bootstrap_message(root: Path, write_files: WriteFiles) -> None:
    write_files({"AGENTS.md": "Use tabs.", "src/app.py": ""})
    message = bootstrap_message(root)
    assert f'<workspace root="{root.resolve()}">' in message
    assert "src/ (1 entry)" in message
    assert "Use tabs." not in message
    with_instructions = bootstrap_message(root, include_instructions=True)
    assert '<project_instructions file="AGENTS.md">\nUse tabs.\n</project_instructions>' in (
        with_instructions
    )
