"""``@tool``, toolkits, and toolkits registered by configuration
(``tools.toolkits``) or by a ``rein.toolkits`` entry point."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import pytest

from rein.config import load_config
from rein.harness import Agent
from rein.harness.errors import ConfigError
from rein.harness.prompts import build_system_prompt
from rein.harness.toolkit import FunctionTool, Toolkit, parse_docstring, tool
from rein.harness.tools import ToolContext, ToolResult
from rein.headless.run import run_task
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from rein.tools import default_tools
from rein.tools import toolkit as toolkit_loader
from rein.tools.settings import ToolSettings
from tests.session.notes_toolkit import NOTES_PATH


@tool(tool_class="read")
async def find_symbol(
    name: str, kind: Literal["function", "class"] = "function", limit: int = 5
) -> str:
    """Find where a symbol is defined.

    Looks through the project's index.

    Args:
        name: The symbol's name,
            without its module.
        kind (str): What the symbol is.
        limit: At most this many places.

    Returns:
        The places, one a line.
    """
    return f"{name} {kind} {limit}"


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    schema = find_symbol.schema()
    assert schema.name == "find_symbol"
    assert (
        schema.description
        == "Find where a symbol is defined.\n\nLooks through the project's index."
    )
    params = schema.parameters
    assert params["required"] == ["name"]
    props = params["properties"]
    assert props["name"]["type"] == "string"
    assert props["name"]["description"] == "The symbol's name, without its module."
    assert props["kind"]["enum"] == ["function", "class"] and props["kind"]["default"] == "function"
    assert props["kind"]["description"] == "What the symbol is."
    assert props["limit"] == {
        "default": 5,
        "description": "At most this many places.",
        "title": "Limit",
        "type": "integer",
    }
    assert find_symbol.tool_class == "read"
    assert find_symbol.prompt_section == "`find_symbol`: Find where a symbol is defined."


def test_parse_docstring_sections() -> None:
    description, args = parse_docstring(
        """Summary line.

        Args:
            a: First.
            b (int): Second,
                continued.
        Raises:
            ValueError: never an argument.
        """
    )
    assert description == "Summary line."
    assert args == {"a": "First.", "b": "Second, continued."}
    assert parse_docstring(None) == ("", {})


async def untyped(x) -> str:  # type: ignore[no-untyped-def]
    """Untyped."""
    return ""


async def undocumented(x: int) -> str:
    return ""


async def stray_arg(x: int) -> str:
    """Stray.

    Args:
        y: Not a parameter.
    """
    return ""


async def star(*xs: int) -> str:
    """Star."""
    return ""


def sync(x: int) -> str:
    """Sync."""
    return ""


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        pytest.param(untyped, "argument 'x' needs a type annotation", id="untyped"),
        pytest.param(undocumented, "needs a docstring", id="no-docstring"),
        pytest.param(stray_arg, "the docstring's Args name y", id="stray-arg"),
        pytest.param(star, r"\*xs cannot be a tool argument", id="star-args"),
        pytest.param(sync, "must be an async function", id="sync"),
    ],
)
def test_a_bad_definition_fails_at_decoration(fn: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        tool(fn)


@tool(name="shout")
async def _shout(text: str, ctx: ToolContext) -> ToolResult:
    """Say it loudly.

    Args:
        text: What to say.
    """
    return ToolResult(text.upper(), details={"call": ctx.tool_call_id})


@tool(name="wrong_result")
async def _wrong_result(text: str) -> str:
    """Returns the wrong type."""
    return 42  # type: ignore[return-value]


async def test_a_decorated_tool_runs_in_the_loop_with_its_context() -> None:
    assert "ctx" not in _shout.schema().parameters["properties"]
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]},
            {"tool_calls": [{"name": "shout", "arguments": {}}]},
            {"tool_calls": [{"name": "wrong_result", "arguments": {"text": "x"}}]},
            {"text": "done"},
        ]
    )
    agent = Agent(model, tools=[_shout, _wrong_result])
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    results = [m for m in agent.messages if m.role == "tool"]
    assert results[0].content == "HI" and not results[0].is_error  # type: ignore[union-attr]
    assert results[1].is_error and "text" in results[1].content  # type: ignore[union-attr]
    assert results[2].is_error and "returned int" in results[2].content  # type: ignore[union-attr]


class ProjectIndex(Toolkit):
    instructions = "Prefer the index to grep."

    def __init__(self) -> None:
        self.calls = 0

    @tool(tool_class="read")
    async def lookup(self, name: str) -> str:
        """Look a name up.

        Args:
            name: The name.
        """
        self.calls += 1
        return f"{name} #{self.calls}"

    @tool(tool_class="read")
    async def refresh(self) -> str:
        """Refresh the index."""
        return "ok"


async def test_a_toolkits_methods_are_tools_bound_to_it() -> None:
    assert ProjectIndex.name == "project_index"
    kit = ProjectIndex()
    tools = kit.tools()
    assert [t.name for t in tools] == ["lookup", "refresh"]
    assert all(isinstance(t, FunctionTool) and t.toolkit is kit for t in tools)
    assert tools[0].schema().parameters["required"] == ["name"]
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "lookup", "arguments": {"name": "a"}}]},
            {"tool_calls": [{"name": "lookup", "arguments": {"name": "b"}}]},
            {"text": "done"},
        ]
    )
    agent = Agent(model, tools=tools)
    await agent.prompt("go")
    assert kit.calls == 2
    assert [m.content for m in agent.messages if m.role == "tool"] == ["a #1", "b #2"]
    with pytest.raises(TypeError, match="toolkit method"):
        await ProjectIndex.lookup.execute(ProjectIndex.lookup.args_model(name="x"), None)  # type: ignore[arg-type]


def test_the_rules_section_appears_only_with_the_toolkits_tools() -> None:
    kit = ProjectIndex()
    read = default_tools().subset(["read_file"]).tools()
    with_kit = build_system_prompt([*read, *kit.tools()[:1]], "agent")
    assert "<project_index_rules>\nPrefer the index to grep.\n</project_index_rules>" in with_kit
    assert with_kit.index("# Tools") < with_kit.index("<project_index_rules>")
    assert with_kit.index("<project_index_rules>") < with_kit.index("# Role:")
    assert "project_index_rules" not in build_system_prompt(read, "agent")


# ------------------------------------------------------- registration


def _settings(toolkits: list[str]) -> ToolSettings:
    return load_config({"tools": {"toolkits": toolkits}}).tool_settings()


def test_a_configured_toolkit_joins_the_default_tools() -> None:
    names = default_tools(_settings([NOTES_PATH])).names()
    assert names[-2:] == ["read_note", "write_note"]
    # Explain mode keeps the toolkit's read tools only.
    read_only = default_tools(_settings([NOTES_PATH]), read_only=True).names()
    assert "read_note" in read_only and "write_note" not in read_only
    assert "read_note" not in default_tools().names()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param("no_such_module_xyz:Kit", "cannot import no_such_module_xyz", id="module"),
        pytest.param("tests.session.notes_toolkit:Missing", "has no attribute Missing", id="attr"),
        pytest.param(
            "tests.session.notes_toolkit:NotAToolkit", "not a rein.harness.toolkit", id="type"
        ),
    ],
)
def test_a_bad_toolkit_path_is_an_error_naming_the_setting(path: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        default_tools(_settings([path]))
    assert str(info.value).startswith(f"tools.toolkits: {path!r}")
    assert info.value.key == "tools.toolkits"


def test_a_malformed_toolkit_entry_fails_the_configuration() -> None:
    with pytest.raises(ConfigError, match=r"tools\.toolkits") as info:
        load_config({"tools": {"toolkits": ["notes_toolkit.NotesToolkit"]}})
    assert "package.module:ClassName" in str(info.value)
    with pytest.raises(ConfigError, match=r"tools\.toolkits"):
        load_config({"tools": {"toolkits": "x:Y"}})


class Clashing(Toolkit):
    @tool
    async def grep(self, pattern: str) -> str:
        """Another grep.

        Args:
            pattern: What to find.
        """
        return pattern


def test_a_toolkit_tool_cannot_take_a_standard_tools_name() -> None:
    with pytest.raises(ConfigError, match="toolkit 'clashing' has a tool named 'grep'"):
        default_tools(_settings([f"{__name__}:Clashing"]))


def _entry_points(*entries: metadata.EntryPoint) -> Any:
    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        return [e for e in entries if e.group == group]

    return entry_points


def test_an_entry_point_registers_a_toolkit(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = metadata.EntryPoint(name="notes", value=NOTES_PATH, group="rein.toolkits")
    other = metadata.EntryPoint(name="x", value="no_such_module_xyz:Kit", group="other.group")
    monkeypatch.setattr(toolkit_loader.metadata, "entry_points", _entry_points(entry, other))
    assert default_tools().names()[-2:] == ["read_note", "write_note"]
    # Named both ways: one toolkit.
    assert default_tools(_settings([NOTES_PATH])).names().count("read_note") == 1


def test_an_installed_distributions_entry_point_registers_a_toolkit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real distribution on sys.path (its .dist-info), found by importlib.metadata.
    dist = tmp_path / "rein_notes_kit-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rein-notes-kit\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[rein.toolkits]\nnotes = {NOTES_PATH}\n")
    assert "read_note" not in default_tools().names()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert default_tools().names()[-2:] == ["read_note", "write_note"]


def test_a_broken_entry_point_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = metadata.EntryPoint(name="gone", value="no_such_module_xyz:Kit", group="rein.toolkits")
    monkeypatch.setattr(toolkit_loader.metadata, "entry_points", _entry_points(entry))
    with pytest.raises(ConfigError, match=r"rein\.toolkits entry point gone"):
        default_tools()


async def test_a_configured_toolkit_works_in_a_real_session(tmp_path: Path) -> None:
    model = ReplayModel(
        [
            {"tool_calls": [{"name": "write_note", "arguments": {"key": "k", "text": "use tabs"}}]},
            {"tool_calls": [{"name": "read_note", "arguments": {"key": "k"}}]},
            {"tool_calls": [{"name": "read_note", "arguments": {"key": "nope"}}]},
            {"text": "done"},
        ]
    )
    config = load_config(
        {"tools": {"toolkits": [NOTES_PATH]}, "gates": {"analyzer": {"enabled": False}}}
    )
    async with HeadlessSession(tmp_path, model, config, analyzers=(), watch=False) as host:
        result = await host.prompt("take a note")
        tools = host.session.tools
    assert result.status == "completed", result.error
    assert tools is not None and {"read_note", "write_note"} <= set(tools.names())
    assert "<notes_rules>" in model.requests[0].system
    contents = [m.content for m in host.session.agent.messages if m.role == "tool"]
    assert contents[:2] == ["Stored 'k'.", "use tabs"]
    assert "No note 'nope'" in contents[2]


def test_rein_run_reports_a_bad_toolkit_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(json.dumps([{"text": "never asked"}]))
    config = tmp_path / "rein.json"
    config.write_text(
        json.dumps(
            {
                "model": {"provider": "replay", "script": str(script)},
                "tools": {"toolkits": ["no_such_module_xyz:Kit"]},
                "gates": {"analyzer": {"enabled": False}},
            }
        )
    )
    code = run_task(
        "task",
        workspace=str(tmp_path),
        config_file=str(config),
        overrides={},
        as_json=False,
        assume_yes=True,
        mode="agent",
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "rein run: tools.toolkits: 'no_such_module_xyz:Kit': cannot import" in err
