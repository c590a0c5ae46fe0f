"""A tool's display kind: declared by ``@tool``, a toolkit or a ``Tool``
class, carried on ``tool_call_end``, and shown by ``rein run``'s printer
and ``rein acp``'s tool call content."""

from __future__ import annotations

import io
import json
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from rein.harness import Agent
from rein.harness.calls.display import DISPLAY_KINDS, parse_table, table_text
from rein.harness.events import Event, ToolCallEnd
from rein.harness.toolkit import Toolkit, tool
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.providers.replay import ReplayModel
from rein.render import EventPrinter, result_lines


class Report(Toolkit):
    display = "markdown"

    @tool
    async def summary(self) -> str:
        """The summary, in markdown."""
        return "# Report\n\n- one\n- two"

    @tool(display="table")
    async def sizes(self) -> list[dict[str, Any]]:
        """Files and their sizes."""
        return [{"path": "a.py", "lines": 12}, {"path": "b|c.py", "lines": 3, "new": True}]

    @tool(display="json")
    async def settings(self) -> dict[str, Any]:
        """The settings."""
        return {"model": "gpt", "limits": [1, 2]}

    @tool(display="diff")
    async def change(self) -> str:
        """The change."""
        return "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new"

    @tool(display="table")
    async def broken(self) -> str:
        """Fails."""
        raise ValueError("no table today")


@tool
async def plain() -> str:
    """Plain text."""
    return "hello"


@tool(display="table")
async def grid() -> list[list[Any]]:
    """A grid with a header row."""
    return [["name", "score"], ["ann", 3], ["bo"]]


class _NoArgs(BaseModel):
    pass


class Changes(Tool[_NoArgs]):
    name: ClassVar[str] = "changes"
    description: ClassVar[str] = "The pending changes as a diff."
    args_model: ClassVar[type[BaseModel]] = _NoArgs
    display = "diff"

    async def execute(self, args: _NoArgs, ctx: ToolContext) -> ToolResult | str:
        return ToolResult("-a\n+b")


def test_the_display_kinds() -> None:
    assert DISPLAY_KINDS == ("text", "markdown", "diff", "table", "json", "locations")


def test_a_tool_declares_its_display_and_a_toolkit_gives_its_default() -> None:
    kit = Report()
    shown = {t.name: t.display for t in kit.tools()}
    assert shown == {
        "summary": "markdown",
        "sizes": "table",
        "settings": "json",
        "change": "diff",
        "broken": "table",
    }
    assert plain.display == "text" and grid.display == "table"


async def _bad() -> str:
    """Bad."""
    return ""


def test_an_unknown_display_kind_is_an_error_naming_the_tool() -> None:
    with pytest.raises(TypeError, match=r"@tool _bad: display 'html' is not one of text, "):
        tool(display="html")(_bad)  # type: ignore[arg-type]


def test_an_unknown_toolkit_display_is_an_error_naming_the_toolkit() -> None:
    with pytest.raises(TypeError, match=r"toolkit .*Pictures: display 'image' is not one of"):

        class Pictures(Toolkit):
            display = "image"  # type: ignore[assignment]


def test_an_unknown_tool_class_display_is_an_error_naming_the_tool() -> None:
    class Args(BaseModel):
        pass

    with pytest.raises(TypeError, match=r"tool .*Shouting: display 'LOUD' is not one of"):

        class Shouting(Tool[Args]):
            name: ClassVar[str] = "shouting"
            description: ClassVar[str] = "Shouts."
            args_model: ClassVar[type[BaseModel]] = Args
            display = "LOUD"  # type: ignore[assignment]

            async def execute(self, args: Args, ctx: ToolContext) -> ToolResult | str:
                return ""


def test_a_table_is_a_markdown_table_that_reads_back() -> None:
    text = table_text([{"path": "a.py", "lines": 12}, {"path": "b|c.py", "new": True}])
    assert text == (
        "| path | lines | new |\n|---|---|---|\n| a.py | 12 |  |\n| b\\|c.py |  | true |"
    )
    assert parse_table(text) == (
        ["path", "lines", "new"],
        [["a.py", "12", ""], ["b|c.py", "", "true"]],
    )
    assert parse_table("just words") is None
    assert parse_table("| a |\n| b |") is None


async def _run(tools: list[Any], names: list[str]) -> tuple[Agent, list[ToolCallEnd]]:
    model = ReplayModel(
        [*({"tool_calls": [{"name": n, "arguments": {}}]} for n in names), {"text": "done"}]
    )
    agent = Agent(model, tools=tools)
    ends: list[ToolCallEnd] = []

    def listen(event: Event) -> None:
        if isinstance(event, ToolCallEnd):
            ends.append(event)

    agent.subscribe(listen)
    result = await agent.prompt("go")
    assert result.status == "completed", result.error
    return agent, ends


async def test_the_tool_call_end_carries_the_display_and_the_model_reads_text() -> None:
    names = ["summary", "sizes", "settings", "change", "broken", "plain", "grid", "changes"]
    agent, ends = await _run([*Report().tools(), plain, grid, Changes()], names)
    assert [(e.name, e.display) for e in ends] == [
        ("summary", "markdown"),
        ("sizes", "table"),
        ("settings", "json"),
        ("change", "diff"),
        ("broken", "text"),  # a failed call's error is text
        ("plain", "text"),
        ("grid", "table"),
        ("changes", "diff"),  # a Tool class's own
    ]
    read = {m.tool_name: m.content for m in agent.messages if m.role == "tool"}  # type: ignore[union-attr]
    assert read["sizes"] == (
        "| path | lines | new |\n|---|---|---|\n| a.py | 12 |  |\n| b\\|c.py | 3 | true |"
    )
    assert json.loads(read["settings"]) == {"model": "gpt", "limits": [1, 2]}
    assert read["settings"].startswith('{\n  "model"')
    assert read["grid"] == "| name | score |\n|---|---|\n| ann | 3 |\n| bo |  |"
    assert ends[1].model_dump(mode="json")["display"] == "table"


@tool(display="json")
async def not_json() -> object:
    """Returns a set."""
    return {1, 2}


@tool(display="markdown")
async def not_text() -> object:
    """Returns a number."""
    return 42


async def test_a_result_the_kind_cannot_serialise_is_an_error_the_model_reads() -> None:
    agent, ends = await _run([not_json, not_text], ["not_json", "not_text"])
    assert [e.is_error for e in ends] == [True, True]
    read = [m.content for m in agent.messages if m.role == "tool"]  # type: ignore[union-attr]
    assert "tool 'not_json': the result is not JSON" in read[0]
    assert "tool 'not_text' returned int" in read[1]


def _end(content: str, display: Any, *, is_error: bool = False) -> ToolCallEnd:
    return ToolCallEnd(
        tool_call_id="c1",
        name="t",
        is_error=is_error,
        content=content,
        duration_ms=5,
        display=display,
    )


def _printed(event: Event, *, tty: bool = False) -> str:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return tty

    out = Terminal()
    EventPrinter(out)(event)
    return out.getvalue()


def test_rein_run_prints_text_on_one_line() -> None:
    assert _printed(_end("hello\nworld", "text")) == "    ✓ t (5 ms): hello\n"


def test_rein_run_prints_markdown_as_it_is() -> None:
    assert _printed(_end("# Report\n\n- one", "markdown")) == (
        "    ✓ t (5 ms):\n      # Report\n\n      - one\n"
    )


def test_rein_run_colours_a_diff_in_a_terminal_only() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same"
    assert _printed(_end(diff, "diff")) == (
        "    ✓ t (5 ms):\n      --- a/x\n      +++ b/x\n      @@ -1 +1 @@\n"
        "      -old\n      +new\n       same\n"
    )
    coloured = _printed(_end(diff, "diff"), tty=True)
    assert "      \x1b[31m-old\x1b[0m\n" in coloured
    assert "      \x1b[32m+new\x1b[0m\n" in coloured
    assert "      \x1b[36m@@ -1 +1 @@\x1b[0m\n" in coloured
    assert "      --- a/x\n      +++ b/x\n" in coloured


def test_rein_run_aligns_a_table() -> None:
    text = table_text([{"path": "a.py", "lines": 12}, {"path": "long/b.py", "lines": 3}])
    assert _printed(_end(text, "table")) == (
        "    ✓ t (5 ms):\n"
        "      path       lines\n"
        "      ---------  -----\n"
        "      a.py       12\n"
        "      long/b.py  3\n"
    )


def test_rein_run_pretty_prints_json() -> None:
    assert _printed(_end('{"a": [1, 2]}', "json")) == (
        '    ✓ t (5 ms):\n      {\n        "a": [\n          1,\n          2\n        ]\n      }\n'
    )


def test_rein_run_shows_what_it_cannot_read_as_it_is_and_an_error_as_text() -> None:
    assert result_lines('{"cut', "json") == ['{"cut']
    assert result_lines("no | table", "table") == ["no | table"]
    assert (
        _printed(_end("boom\nmore", "json", is_error=True)) == "    ✗ t (5 ms): boom\n      more\n"
    )


def test_rein_run_shows_why_a_command_failed() -> None:
    # Defect: a failed run_command printed only its first line, "$ cmd",
    # the command the line above had already shown: no output, no exit code.
    out = "\n".join(f"line {i}" for i in range(20))
    printed = _printed(_end(f"$ make test\n{out}\n[exit code 2]", "text", is_error=True))
    assert printed == (
        "    ✗ t (5 ms): $ make test\n      … (13 lines before)\n"
        + "".join(f"      line {i}\n" for i in range(13, 20))
        + "      [exit code 2]\n"
    )
    assert _printed(_end("$ true\nok\n[exit code 0]", "text")) == "    ✓ t (5 ms): $ true\n"


def test_rein_run_shows_an_errors_reason_whole() -> None:
    # Defect: cut at 100 characters, an edit_file refusal lost its advice
    # ("... Include more surrounding l…").
    reason = "old_string occurs 3 times in toolz/functoolz.py (at lines 26, 737, 947). " + (
        "Include more surrounding lines to make it unique, or set replace_all."
    )
    assert _printed(_end(reason, "text", is_error=True)) == f"    ✗ t (5 ms): {reason}\n"
    assert _printed(_end("x" * 150, "text")) == f"    ✓ t (5 ms): {'x' * 99}…\n"


def test_rein_run_shows_a_long_result_in_part() -> None:
    lines = result_lines("\n".join(str(i) for i in range(50)), "markdown")
    assert lines[-1] == "… (10 more lines)" and len(lines) == 41
