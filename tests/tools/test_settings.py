"""The tools' settings from the ``rein`` configuration: validated once in
load_config (errors name the key), frozen, and read by the tools and the
registry as typed attributes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from rein.config import load_config
from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.errors import ConfigError, SandboxError
from rein.harness.prompts import build_system_prompt
from rein.harness.tools import ToolEnvironment
from rein.tools import (
    DEFAULT_DENY_GLOBS,
    GrepTool,
    ReadFileTool,
    ToolSettings,
    WriteFileTool,
    default_tools,
)
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles


def test_an_empty_section_gives_the_default_settings() -> None:
    settings = load_config({}).tool_settings()
    assert settings == ToolSettings()
    assert settings.approval.policy("command") == "sandboxed"
    assert settings.deny_globs == DEFAULT_DENY_GLOBS
    assert settings.grep_backend == "auto"
    assert settings.disabled_tools == frozenset()
    assert settings.max_tool_result_chars == 16_000


def test_camel_case_keys_become_typed_attributes() -> None:
    config = load_config(
        {
            "approval": {"write": "ask", "denyGlobs": ["*.lock"]},
            "tools": {"grepBackend": "python", "disabled": ["run_command", "ask_user"]},
            "harness": {"maxToolResultChars": 4_000},
        }
    )
    settings = config.tool_settings()
    assert settings.approval.policy("write") == "ask"
    assert settings.approval.policy("command") == "sandboxed"
    assert settings.deny_globs == ("*.lock",)
    assert settings.grep_backend == "python"
    assert settings.disabled_tools == frozenset({"run_command", "ask_user"})
    assert settings.max_tool_result_chars == 4_000


def test_the_settings_are_frozen() -> None:
    settings = load_config({"tools": {"grepBackend": "rg"}}).tool_settings()
    with pytest.raises(ValidationError):
        settings.max_tool_result_chars = 1  # type: ignore[misc]
    with pytest.raises(ValidationError):
        settings.tools.grep_backend = "python"  # type: ignore[misc]
    assert settings.grep_backend == "rg"


@pytest.mark.parametrize(
    ("section", "key", "says"),
    [
        pytest.param(
            {"tools": {"grepBackend": "fast"}},
            "tools.grepBackend",
            "'auto', 'rg' or 'python'",
            id="grep-backend",
        ),
        pytest.param(
            {"tools": {"disabled": ["run_command", "shell"]}},
            "tools.disabled",
            "unknown tool name(s) 'shell'; the tools are read_file",
            id="unknown-tool",
        ),
        pytest.param(
            {"tools": {"disabled": "run_command"}},
            "tools.disabled",
            "must be a list of tool names",
            id="not-a-list",
        ),
        pytest.param(
            {"tools": {"grep": "rg"}}, "tools.grep", "Extra inputs", id="unknown-tools-key"
        ),
        pytest.param(
            {"approval": {"write": "sometimes"}},
            "approval.write",
            "'allow', 'ask', 'deny' or 'review'",
            id="policy",
        ),
        pytest.param(
            {"approval": {"denyGlobs": "*.lock"}},
            "approval.denyGlobs",
            "valid tuple",
            id="deny-globs",
        ),
    ],
)
def test_an_invalid_value_is_reported_naming_its_key(
    section: dict[str, object], key: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(section, "settings")
    assert caught.value.key == key
    assert str(caught.value).startswith(f"invalid settings: rein.{key}: ")
    assert says in str(caught.value)


def test_a_disabled_tool_is_neither_registered_nor_in_the_prompt() -> None:
    settings = load_config({"tools": {"disabled": ["run_command", "grep"]}}).tool_settings()
    tools = default_tools(settings)
    assert "run_command" not in tools and "grep" not in tools
    assert tools.names() == [
        "read_file",
        "list_dir",
        "glob",
        "edit_file",
        "write_file",
        "delete_file",
        "move_file",
        "get_diagnostics",
        "ask_user",
    ]
    assert {s.name for s in tools.schemas()} == set(tools.names())
    prompt = build_system_prompt(tools.tools(), "agent")
    assert "run_command" not in prompt
    assert "`grep`" not in prompt
    assert "`edit_file`" in prompt and "`read_file`" in prompt
    # The same registry without the setting does list them: the check can fail.
    full = default_tools(load_config({}).tool_settings())
    full_prompt = build_system_prompt(full.tools(), "agent")
    assert "`run_command`" in full_prompt and "`grep`" in full_prompt


def test_disabling_applies_to_the_read_only_set_too() -> None:
    settings = load_config({"tools": {"disabled": ["grep"]}}).tool_settings()
    assert default_tools(settings, read_only=True).names() == [
        "read_file",
        "list_dir",
        "glob",
        "get_diagnostics",
        "ask_user",
    ]


def test_the_configured_grep_backend_is_the_tools() -> None:
    settings = load_config({"tools": {"grepBackend": "python"}}).tool_settings()
    grep = default_tools(settings).get("grep")
    assert isinstance(grep, GrepTool)
    assert grep.backend == "python"
    assert grep.ripgrep() is None


async def test_configured_deny_globs_reach_the_sandbox(root: Path) -> None:
    settings = load_config({"approval": {"denyGlobs": ["*.lock"]}}).tool_settings()
    calls = ToolCallRecorder(ToolEnvironment(workspace=DiskWorkspace(root), settings=settings))
    with pytest.raises(SandboxError, match=r"'\*\.lock'.*approval\.denyGlobs"):
        await calls.run(WriteFileTool(), path="poetry.lock", content="x")
    assert not (root / "poetry.lock").exists()
    # Setting the globs replaces the defaults.
    written = await calls.run(WriteFileTool(), path=".env.example", content="A=1\n")
    assert not written.is_error


async def test_the_result_limit_sets_the_read_page(root: Path, write_files: WriteFiles) -> None:
    write_files({"wide.txt": ("y" * 90 + "\n") * 200})
    pages = {}
    for limit in (2_000, 8_000):
        settings = load_config({"harness": {"maxToolResultChars": limit}}).tool_settings()
        calls = ToolCallRecorder(ToolEnvironment(workspace=DiskWorkspace(root), settings=settings))
        result = await calls.run(ReadFileTool(), path="wide.txt")
        assert len(result.content) <= limit
        pages[limit] = result.details["end_line"]
    assert pages[2_000] < pages[8_000] < 200
