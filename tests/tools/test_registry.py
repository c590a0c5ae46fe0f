"""default_tools and tool_sections."""

from __future__ import annotations

from rein.tools import (
    READ_ONLY_TOOLS,
    GrepTool,
    ToolOptions,
    ToolSettings,
    default_tools,
    tool_sections,
)
from rein.tools.settings import DEFAULT_TOOL_NAMES

ALL_TOOLS = [
    "read_file",
    "list_dir",
    "glob",
    "grep",
    "edit_file",
    "write_file",
    "delete_file",
    "move_file",
    "run_command",
    "get_diagnostics",
    "ask_user",
]


def test_default_tools_and_their_classes() -> None:
    tools = default_tools()
    assert tools.names() == ALL_TOOLS
    classes = {name: tools.get(name).tool_class for name in ALL_TOOLS}  # type: ignore[union-attr]
    assert classes["run_command"] == "command"
    assert {n for n, c in classes.items() if c == "write"} == {
        "edit_file",
        "write_file",
        "delete_file",
        "move_file",
    }
    assert default_tools(read_only=True).names() == list(READ_ONLY_TOOLS)
    without = default_tools(ToolSettings(tools=ToolOptions(disabled={"run_command"})))
    assert without.names() == [n for n in ALL_TOOLS if n != "run_command"]


def test_the_names_settings_may_disable_are_the_default_tools() -> None:
    assert list(DEFAULT_TOOL_NAMES) == ALL_TOOLS == default_tools().names()


def test_grep_backend_setting() -> None:
    assert isinstance(default_tools().get("grep"), GrepTool)
    assert default_tools().get("grep").backend == "auto"  # type: ignore[union-attr]
    for backend in ("python", "rg"):
        settings = ToolSettings(tools=ToolOptions(grep_backend=backend))
        grep = default_tools(settings).get("grep")
        assert isinstance(grep, GrepTool) and grep.backend == backend


def test_every_argument_is_described_for_the_model() -> None:
    for schema in default_tools().schemas():
        assert len(schema.description) > 80, schema.name
        for field, spec in schema.parameters.get("properties", {}).items():
            assert spec.get("description"), f"{schema.name}.{field} has no description"


def test_tool_sections_cover_every_default_tool() -> None:
    sections = tool_sections()
    assert list(sections) == ALL_TOOLS
    assert all(f"`{name}`" in text for name, text in sections.items())
    assert list(tool_sections(default_tools(read_only=True))) == list(READ_ONLY_TOOLS)
