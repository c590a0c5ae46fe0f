"""default_tools and tool_sections."""

from __future__ import annotations

import pytest

from rein.tools import READ_ONLY_TOOLS, GrepTool, default_tools, tool_sections

ALL_TOOLS = [
    "read_file",
    "list_dir",
    "glob",
    "grep",
    "edit_file",
    "write_file",
    "run_command",
    "get_diagnostics",
    "ask_user",
]


def test_default_tools_and_their_classes() -> None:
    tools = default_tools()
    assert tools.names() == ALL_TOOLS
    classes = {name: tools.get(name).tool_class for name in ALL_TOOLS}  # type: ignore[union-attr]
    assert classes["run_command"] == "command"
    assert {n for n, c in classes.items() if c == "write"} == {"edit_file", "write_file"}
    assert default_tools(read_only=True).names() == list(READ_ONLY_TOOLS)
    assert "run_command" not in default_tools({"disabled_tools": ["run_command"]})


def test_grep_backend_setting(caplog: pytest.LogCaptureFixture) -> None:
    grep = default_tools({"grep_backend": "python"}).get("grep")
    assert isinstance(grep, GrepTool) and grep.backend == "python"
    fallback = default_tools({"grep_backend": "fast"}).get("grep")
    assert isinstance(fallback, GrepTool) and fallback.backend == "auto"
    assert "grep_backend" in caplog.text


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
