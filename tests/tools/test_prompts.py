"""The system prompt and the bootstrap context; the prompt names no tool
that is not registered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rein.harness.prompts import MODE_SECTIONS, PromptMode, build_system_prompt
from rein.harness.tools import ToolRegistry
from rein.tools import (
    bootstrap_message,
    default_tools,
    project_instructions,
    tool_sections,
    workspace_summary,
)
from tests.tools.conftest import WriteFiles

MODES: list[PromptMode] = ["agent", "plan", "explain"]
# A backticked identifier, or a snake_case word anywhere.
TOOL_LIKE = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`|\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")


def _prompt(
    tools: ToolRegistry, mode: PromptMode = "agent", instructions: str | None = None
) -> str:
    return build_system_prompt(tools.names(), tool_sections(tools), mode, instructions)


def _unknown_identifiers(prompt: str, tools: ToolRegistry) -> set[str]:
    allowed = set(tools.names())
    for schema in tools.schemas():
        allowed |= set(schema.parameters.get("properties", {}))
    found = {a or b for a, b in TOOL_LIKE.findall(prompt)}
    return found - allowed


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("read_only", [False, True], ids=["all-tools", "read-only"])
def test_prompt_names_only_registered_tools(mode: PromptMode, read_only: bool) -> None:
    tools = default_tools(read_only=read_only)
    prompt = _prompt(tools, mode)
    assert _unknown_identifiers(prompt, tools) == set()
    for name in tools.names():
        assert f"`{name}`" in prompt


@pytest.mark.parametrize("name", default_tools().names())
def test_each_tool_alone_gets_a_prompt_naming_only_itself(name: str) -> None:
    tools = default_tools().subset([name])
    prompt = _prompt(tools)
    assert _unknown_identifiers(prompt, tools) == set()
    others = set(default_tools().names()) - {name}
    assert not any(f"`{other}`" in prompt for other in others)


def test_guard_catches_a_missing_tool() -> None:
    tools = default_tools().subset(["read_file"])
    prompt = build_system_prompt(["read_file"], {"read_file": "use `edit_file` after"}, "agent")
    assert _unknown_identifiers(prompt, tools) == {"edit_file"}


def test_layout_modes_and_project_instructions() -> None:
    tools = default_tools()
    prompt = _prompt(tools, "plan", "Run `make check` before you finish.")
    headings = [line for line in prompt.splitlines() if line.startswith("# ")]
    assert headings == ["# Rules", "# Tools", "# Mode: plan", "# Project instructions"]
    assert MODE_SECTIONS["plan"] in prompt
    assert prompt.endswith("Run `make check` before you finish.")
    tool_lines = prompt.split("# Tools\n")[1].split("\n\n")[0].splitlines()
    assert [re.findall(r"`(\w+)`", line)[0] for line in tool_lines] == tools.names()


def test_prompt_without_tools_or_sections() -> None:
    assert "No tools are available" in build_system_prompt([], {}, "explain")
    assert "- `custom`" in build_system_prompt(["custom"], {}, "agent")
    with pytest.raises(ValueError, match="unknown prompt mode"):
        build_system_prompt([], {}, "chat")  # type: ignore[arg-type]


def test_project_instructions_precedence_and_bound(root: Path, write_files: WriteFiles) -> None:
    assert project_instructions(root) is None
    write_files({".github/copilot-instructions.md": "copilot"})
    assert project_instructions(root) == "copilot"
    write_files({"CLAUDE.md": "claude"})
    assert project_instructions(root) == "claude"
    write_files({"AGENTS.md": "agents " * 5000})
    text = project_instructions(root)
    assert text is not None and text.startswith("agents agents")
    assert text.endswith("[... AGENTS.md cut here ...]")
    assert len(text) < 16_100


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
