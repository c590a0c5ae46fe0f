"""An edit that changes a Python signature says where the symbol is used
(a scripted navigator), within a bound; other edits say nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.navigation_ports import CodeLocation, Position
from rein.harness.tools import ToolEnvironment
from rein.tools.edit import EditFileTool, WriteFileTool
from rein.tools.impact import changed_signatures
from tests.fakes.navigator import FakeNavigator, at
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles

CORE = "class A:\n    def m(self, x: int) -> int:\n        return x\n\n\ndef f(x):\n    return x\n"


def test_signature_changes_are_told_from_other_edits() -> None:
    changed, renamed = changed_signatures(CORE, CORE.replace("def f(x):", "def f(x, y=0):"))
    assert [(s.qualname, s.line, s.column) for s in changed] == [("f", 5, 4)]
    assert renamed == []
    changed, _ = changed_signatures(CORE, CORE.replace("-> int:", "-> str:"))
    assert [s.qualname for s in changed] == ["A.m"]
    body_only = changed_signatures(CORE, CORE.replace("return x\n", "return x + 1\n"))
    assert body_only == ([], [])
    assert changed_signatures(CORE, CORE.replace("class A:", "class B:")) == ([], ["A"])
    assert changed_signatures(CORE, "def f(:\n") == ([], [])


class SlowNavigator(FakeNavigator):
    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        await anyio.Event().wait()  # never answers
        return []


class FailingNavigator(FakeNavigator):
    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        raise RuntimeError("the server crashed")


@pytest.fixture
def navigator() -> FakeNavigator:
    nav = FakeNavigator()
    nav.references_of[("core.py", Position(5, 4))] = [at(f"use{i}.py", i, 0) for i in range(7)]
    return nav


async def test_an_edit_of_a_signature_names_the_first_references(
    disk: DiskWorkspace, write_files: WriteFiles, navigator: FakeNavigator
) -> None:
    write_files({"core.py": CORE})
    calls = ToolCallRecorder(ToolEnvironment(workspace=disk, navigator=navigator))
    result = await calls.run(
        EditFileTool(), path="core.py", old_string="def f(x):", new_string="def f(x, y):"
    )
    assert result.content.endswith(
        "\n`f`'s signature changed; 7 references: use0.py:1, use1.py:2, use2.py:3, use3.py:4, "
        "use4.py:5, ... (2 more) (find_references lists them)."
    )
    renamed = await calls.run(
        WriteFileTool(), path="core.py", content=CORE.replace("def f(x):", "def g(x):")
    )
    assert renamed.content.endswith(
        "\n`f` is no longer defined in core.py: its callers still use the old name "
        "(rename_symbol renames a symbol with its references)."
    )
    body = await calls.run(EditFileTool(), path="core.py", old_string="A:", new_string="A:  # a")
    assert "reference" not in body.content and "signature" not in body.content


async def test_a_slow_server_omits_the_note_within_the_bound(
    disk: DiskWorkspace, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rein.tools.impact.IMPACT_BOUND_S", 0.2)
    write_files({"core.py": CORE})
    calls = ToolCallRecorder(ToolEnvironment(workspace=disk, navigator=SlowNavigator()))
    # The bound (0.2 s) ends the wait; this only keeps a broken bound from hanging.
    with anyio.fail_after(60):
        result = await calls.run(
            EditFileTool(), path="core.py", old_string="def f(x):", new_string="def f(x, y):"
        )
    assert not result.is_error
    assert "signature" not in result.content


async def test_a_failing_note_never_fails_the_edit_already_written(
    disk: DiskWorkspace, write_files: WriteFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = "x = 1" + " + 1" * 3000 + "\n"  # ast.parse: RecursionError
    write_files({"core.py": CORE, "deep.py": deep})
    calls = ToolCallRecorder(ToolEnvironment(workspace=disk, navigator=FailingNavigator()))
    result = await calls.run(
        EditFileTool(), path="core.py", old_string="def f(x):", new_string="def f(x, y):"
    )
    assert not result.is_error and "signature" not in result.content
    assert "def f(x, y):" in (Path(disk.root) / "core.py").read_text()
    result = await calls.run(WriteFileTool(), path="deep.py", content=deep + "y = 2\n")
    assert not result.is_error and result.content.startswith("Overwrote deep.py")
    # A file too large to parse twice within the bound gets no note (nor a parse).
    monkeypatch.setattr("rein.tools.impact.MAX_IMPACT_CHARS", 10)
    monkeypatch.setattr("rein.tools.impact.changed_signatures", _never)
    result = await calls.run(
        EditFileTool(), path="core.py", old_string="def f(x, y):", new_string="def f(x):"
    )
    assert not result.is_error


def _never(before: str, after: str) -> object:
    raise AssertionError("a large file is not parsed")


async def test_the_note_names_only_the_tools_the_agent_is_offered(
    disk: DiskWorkspace, write_files: WriteFiles, navigator: FakeNavigator
) -> None:
    write_files({"core.py": CORE})
    env = ToolEnvironment(workspace=disk, navigator=navigator)
    calls = ToolCallRecorder(env, offered=frozenset({"edit_file", "write_file"}))
    result = await calls.run(
        EditFileTool(), path="core.py", old_string="def f(x):", new_string="def f(x, y):"
    )
    assert result.content.endswith("use4.py:5, ... (2 more).")
    renamed = await calls.run(WriteFileTool(), path="core.py", content=CORE.replace("f(", "g("))
    assert renamed.content.endswith(
        "\n`f` is no longer defined in core.py: its callers still use the old name."
    )
