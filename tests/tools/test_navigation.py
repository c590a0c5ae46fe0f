"""The navigation tools over a scripted navigator (tests/fakes/navigator.py)
and a workspace on disk: the symbol's column from its name on a line
(UTF-16, whole words, ambiguity and absence as errors the model reads),
the bounded ``locations`` text and its parse, alias following, and
``rename_symbol`` as one approved edit of every file it touches."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from rein.disk.disk_workspace import DiskWorkspace
from rein.harness.calls.display import parse_locations
from rein.harness.errors import ToolError
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    CodeSymbol,
    FileEdits,
    PartialLocations,
    Position,
    TextReplacement,
)
from rein.harness.ports import Diagnostic, FileContent, Mutation
from rein.harness.tools import ToolEnvironment
from rein.tools.edit import path_lock
from rein.tools.nav_names import declares_member
from rein.tools.nav_text import Found, format_locations, symbol_position
from rein.tools.navigation import FindDefinitionTool, FindReferencesTool, HoverTool, SymbolsTool
from rein.tools.rename import RenameSymbolTool, apply_replacements
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.fakes.approvals import FakeApprover
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.navigator import FakeNavigator, at
from tests.fakes.tools import ToolCallRecorder
from tests.tools.conftest import WriteFiles

CORE = "def f(x):\n    return x\n\n\ndef other():\n    return f(2)\n"
USE = "from pkg.core import f as g\n\n\ndef h():\n    return g(3) + g(4)\n"


# ----------------------------------------------------------- symbol -> column


def test_the_symbol_is_found_as_a_whole_word_and_counted_in_utf16() -> None:
    text = "x = 'é😀' + fx + f(1)\n"
    # "f" stands alone once (fx is another word); 😀 is two UTF-16 units.
    assert symbol_position("a.py", text, 1, "f") == Position(0, 17)
    assert symbol_position("a.py", text, 1, "obj.f()") == Position(0, 17)
    assert symbol_position("a.py", "g(f, f)\n", 1, "f", occurrence=2) == Position(0, 5)


def test_a_dotted_symbol_written_whole_on_the_line_is_the_one_meant() -> None:
    # gopls's project: `tu.Reverse` is there once; `Reverse` three times
    # (the call, a string, a field). The model named the call: no
    # "occurs 3 times" refusal, and the column of the name after `tu.`.
    text = '\té := "😀"; fmt.Println(tu.Reverse(é), "Reverse", tu.Box{Reverse: true})\n'
    assert symbol_position("m.go", text, 1, "tu.Reverse") == Position(0, 27)
    assert symbol_position("m.go", text, 1, "tu.Reverse()") == Position(0, 27)
    # Written whole twice: which one is asked; `xtu.Reverse` is not `tu.Reverse`.
    twice = "a.f(b.f, xa.f, a.f)\n"
    with pytest.raises(
        ToolError, match=r"`f` occurs 2 times on line 1 of a\.py \(at columns 3, 18\)"
    ):
        symbol_position("a.py", twice, 1, "a.f")
    assert symbol_position("a.py", twice, 1, "a.f", occurrence=2) == Position(0, 17)
    # Not on the line so: the name alone, as before.
    assert symbol_position("a.py", "g(b.f)\n", 1, "a.f") == Position(0, 4)


def test_an_ambiguous_or_absent_symbol_or_line_is_an_error_the_model_can_act_on() -> None:
    with pytest.raises(ToolError, match=r"occurs 2 times on line 1 of a\.py \(at columns 3, 6\)"):
        symbol_position("a.py", "g(f, f)\n", 1, "f")
    with pytest.raises(ToolError, match=r"`h` is not on line 1 of a\.py.*\n1: g\(f, f\)"):
        symbol_position("a.py", "g(f, f)\n", 1, "h")
    with pytest.raises(ToolError, match="has 1 line; there is no line 3"):
        symbol_position("a.py", "g(f, f)\n", 3, "f")
    with pytest.raises(ToolError, match="occurrence 3 does not exist"):
        symbol_position("a.py", "g(f, f)\n", 1, "f", occurrence=3)


# ----------------------------------------------------------- the text


def test_locations_are_grouped_by_file_bounded_and_parse_back() -> None:
    found = [
        Found(at("b.py", 2, 4), "    y = f(1)"),
        Found(at("a.py", 0, 4), "def f(x):"),
        Found(at("b.py", 0, 0), "from a import f as g", "(as g)"),
    ]
    text = format_locations("3 references to `f` in 2 files (fake):", found)
    assert text == (
        "3 references to `f` in 2 files (fake):\n"
        "a.py\n  1:5: def f(x):\n"
        "b.py\n  1:1: from a import f as g (as g)\n  3:5: y = f(1)"
    )
    header, groups, trailer = parse_locations(text) or ("", [], None)
    assert header.startswith("3 references")
    assert groups == [
        ("a.py", [(1, 5, "def f(x):")]),
        ("b.py", [(1, 1, "from a import f as g (as g)"), (3, 5, "y = f(1)")]),
    ]
    assert trailer is None
    many = [Found(at(f"m{i // 10}.py", i % 10, 0), "x") for i in range(250)]
    bounded = format_locations("250 references:", many, max_locations=100)
    parsed = parse_locations(bounded)
    assert parsed is not None
    assert sum(len(lines) for _, lines in parsed[1]) == 100
    assert parsed[2] == "(150 more left out)"
    # The workspace's places first, then those outside it: gopls's fuzzy
    # matches in Go's standard library no longer push the project's out.
    outside = [Found(at(f"/usr/lib/go/src/p{i}.go", 0, 0), None) for i in range(5)]
    mixed = format_locations("h", [*outside, Found(at("cmd/m.go", 2, 5))], max_locations=3)
    assert mixed.splitlines()[1:4] == ["cmd/m.go", "  3:6:", "/usr/lib/go/src/p0.go"]
    assert mixed.endswith("(3 more left out)")
    short = format_locations("h", many, max_lines=12)
    assert len(short.splitlines()) == 12 and short.endswith("more left out)")
    # Columns are 1-based UTF-16 code units, as the editor counts them.
    astral = format_locations("h", [Found(at("e.py", 0, 7), "s='😀';f()")])
    assert astral == "h\ne.py\n  1:8: s='😀';f()"
    with pytest.raises(ToolError, match=r"at columns 5, 8\)"):
        symbol_position("e.py", "😀; f; f\n", 1, "f")
    assert parse_locations("No definition found.") == ("No definition found.", [], None)
    assert parse_locations("header\na.py\n  not a location") is None
    assert parse_locations("header\n  1:1: a location before any path") is None


# ----------------------------------------------------------- the tools


@pytest.fixture
def project(write_files: WriteFiles) -> None:
    write_files({"pkg/core.py": CORE, "pkg/use.py": USE})


@pytest.fixture
def navigator() -> FakeNavigator:
    nav = FakeNavigator()
    # f's references stop at the import that renames it; g's go on.
    nav.references_of[("pkg/core.py", Position(0, 4))] = [
        at("pkg/core.py", 0, 4),
        at("pkg/core.py", 5, 11),
        at("pkg/use.py", 0, 21),
    ]
    nav.references_of[("pkg/use.py", Position(0, 26))] = PartialLocations(
        [at("pkg/use.py", 0, 26), at("pkg/use.py", 4, 11), at("pkg/use.py", 4, 18)],
        "the server may not have indexed the project yet",
    )
    nav.definitions_of[("pkg/use.py", Position(4, 11))] = [at("pkg/core.py", 0, 4)]
    nav.hovers[("pkg/core.py", Position(0, 4))] = "```python\ndef f(x) -> int\n```"
    f = CodeSymbol("f", "function", at("pkg/core.py", 0, 4))
    nav.outlines["pkg/core.py"] = [
        f,
        CodeSymbol("other", "function", at("pkg/core.py", 4, 4), children=(f,)),
    ]
    return nav


@pytest.fixture
def env(disk: DiskWorkspace, navigator: FakeNavigator) -> ToolEnvironment:
    return ToolEnvironment(workspace=TrackedWorkspace(disk, MutationLog()), navigator=navigator)


async def test_find_references_follows_an_import_alias_and_says_what_may_be_missing(
    calls: ToolCallRecorder, project: None, navigator: FakeNavigator
) -> None:
    result = await calls.run(FindReferencesTool(), path="pkg/core.py", line=1, symbol="f")
    assert not result.is_error, result.content
    assert result.content == (
        "6 references to `f` in 2 files (fake-server):\n"
        "pkg/core.py\n  1:5: def f(x):\n  6:12: return f(2)\n"
        "pkg/use.py\n"
        "  1:22: from pkg.core import f as g\n"
        "  1:27: from pkg.core import f as g (as g)\n"
        "  5:12: return g(3) + g(4) (as g)\n"
        "  5:19: return g(3) + g(4) (as g)\n"
        "(the server may not have indexed the project yet)"
    )
    assert ("references", "pkg/use.py", Position(0, 26)) in navigator.asked


async def test_definition_hover_and_symbols_answer_from_the_navigator(
    calls: ToolCallRecorder, project: None
) -> None:
    found = await calls.run(
        FindDefinitionTool(), path="pkg/use.py", line=5, symbol="g", occurrence=1
    )
    assert found.content == "1 definition of `g` (fake-server):\npkg/core.py\n  1:5: def f(x):"
    hover = await calls.run(HoverTool(), path="pkg/core.py", line=1, symbol="f")
    assert hover.content == "```python\ndef f(x) -> int\n```"
    outline = await calls.run(SymbolsTool(), path="pkg/core.py")
    assert outline.content == (
        "3 symbols in pkg/core.py (fake-server):\npkg/core.py\n"
        "  1:5: function f\n  1:5: · function f\n  5:5: function other"
    )
    search = await calls.run(SymbolsTool(), query="oth")
    assert "5:5: function other" in search.content
    with pytest.raises(ToolError, match="Give either path"):
        await calls.run(SymbolsTool(), path="pkg/core.py", query="f")
    with pytest.raises(ToolError, match="fake-server knows nothing"):
        await calls.run(FindReferencesTool(), path="pkg/use.py", line=4, symbol="h")


async def test_the_outline_of_a_file_that_is_not_there_is_an_error(
    calls: ToolCallRecorder, project: None
) -> None:
    """It was 'No symbols in pkg/nope.py (basedpyright).': the model could
    take the file for an empty one."""
    with pytest.raises(ToolError, match=r"File not found: pkg/nope\.py"):
        await calls.run(SymbolsTool(), path="pkg/nope.py")


async def test_without_a_navigator_the_tools_say_so(disk: DiskWorkspace, project: None) -> None:
    calls = ToolCallRecorder(ToolEnvironment(workspace=disk))
    with pytest.raises(ToolError, match="needs a language server"):
        await calls.run(FindReferencesTool(), path="pkg/core.py", line=1, symbol="f")


# ----------------------------------------------------------- rename


async def test_protected_files_are_read_only_with_approval_and_never_shown(
    root: Path, project: None, write_files: WriteFiles, navigator: FakeNavigator
) -> None:
    secret = "API_KEY=sk-live-SECRET123\n"
    write_files({".env.example": secret, "pkg/h.py": "TOKEN = 'hard-linked-secret'\n"})
    os.link(root / "pkg/h.py", root / "elsewhere.py")
    navigator.references_of[("pkg/core.py", Position(0, 4))] = [
        at("pkg/core.py", 0, 4),
        at(".env.example", 0, 0),
        at("pkg/h.py", 0, 0),
    ]
    approver = FakeApprover(False)
    calls = ToolCallRecorder(
        ToolEnvironment(workspace=DiskWorkspace(root), navigator=navigator, approver=approver)
    )
    asks = [
        (FindDefinitionTool(), {"path": ".env.example", "line": 1, "symbol": "nothere"}),
        (HoverTool(), {"path": ".env.example", "line": 1, "symbol": "API_KEY"}),
        (SymbolsTool(), {"path": ".env.example"}),
        (
            RenameSymbolTool(),
            {"path": ".env.example", "line": 1, "symbol": "API_KEY", "new_name": "K"},
        ),
        (FindDefinitionTool(), {"path": "pkg/h.py", "line": 1, "symbol": "nothere"}),
    ]
    for tool, params in asks:
        with pytest.raises(ToolError) as refused:
            await calls.run(tool, **params)
        assert "SECRET" not in str(refused.value) and "hard-linked" not in str(refused.value)
    assert [r.title for r in approver.requests] == ["Read .env.example"] * 4 + ["Read pkg/h.py"]
    assert not navigator.asked
    # Where a protected file is among the answers, its place is listed without its text.
    listed = await calls.run(FindReferencesTool(), path="pkg/core.py", line=1, symbol="f")
    assert "SECRET" not in listed.content and "hard-linked" not in listed.content
    assert ".env.example\n  1:1:\n" in listed.content and listed.content.endswith(
        "pkg/h.py\n  1:1:"
    )


async def test_secret_files_are_never_read_asked_about_shown_or_renamed(
    root: Path, project: None, write_files: WriteFiles, navigator: FakeNavigator
) -> None:
    write_files({".npmrc": "//r/:_authToken=npm_SECRET\n", "svc/credentials.json": "{}\n"})
    navigator.references_of[("pkg/core.py", Position(0, 4))] = [
        at("pkg/core.py", 0, 4),
        at(".npmrc", 0, 0),
    ]
    approver = FakeApprover(True)
    calls = ToolCallRecorder(
        ToolEnvironment(workspace=DiskWorkspace(root), navigator=navigator, approver=approver)
    )
    for tool, params in (
        (FindDefinitionTool(), {"path": ".npmrc", "line": 1, "symbol": "r"}),
        (SymbolsTool(), {"path": ".npmrc"}),
    ):
        with pytest.raises(ToolError, match=r"\.npmrc is a secret file") as refused:
            await calls.run(tool, **params)
        assert "SECRET" not in str(refused.value)
    listed = await calls.run(FindReferencesTool(), path="pkg/core.py", line=1, symbol="f")
    assert "SECRET" not in listed.content and ".npmrc\n  1:1:\n" in listed.content
    # A rename the server plans into a secret file is refused whole: its diff would show it.
    navigator.renames[("pkg/core.py", Position(0, 4))] = {
        "pkg/core.py": [TextReplacement(CodeRange(Position(0, 4), Position(0, 5)), "inc")],
        "svc/credentials.json": [TextReplacement(CodeRange(Position(0, 0), Position(0, 1)), "[")],
    }
    with pytest.raises(ToolError, match=r"svc/credentials\.json, a secret file .*nothing changed"):
        await calls.run(RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc")
    assert (root / "pkg/core.py").read_text() == CORE
    assert approver.requests == []


def _rename_f(navigator: FakeNavigator) -> None:
    def edit(line: int, character: int) -> TextReplacement:
        return TextReplacement(
            CodeRange(Position(line, character), Position(line, character + 1)), "inc"
        )

    navigator.renames[("pkg/core.py", Position(0, 4))] = {
        "pkg/core.py": [edit(5, 11), edit(0, 4)],
        "pkg/use.py": [edit(0, 21)],
    }


def test_replacements_apply_from_utf16_ranges_and_say_where_they_landed() -> None:
    text = "s = '😀'; f(f)\n"
    edits = [
        TextReplacement(CodeRange(Position(0, 12), Position(0, 13)), "inc"),
        TextReplacement(CodeRange(Position(0, 10), Position(0, 11)), "inc"),
    ]
    updated, where = apply_replacements(text, edits)
    assert updated == "s = '😀'; inc(inc)\n"
    assert where == [Position(0, 10), Position(0, 14)]
    overlapping = [*edits, TextReplacement(CodeRange(Position(0, 10), Position(0, 13)), "z")]
    with pytest.raises(ToolError, match="overlapping"):
        apply_replacements(text, overlapping)


def _replace(line: int, start: int, end: int, new: str) -> TextReplacement:
    return TextReplacement(CodeRange(Position(line, start), Position(line, end)), new)


def test_lines_are_counted_as_the_language_server_counts_them() -> None:
    # Only \n, \r\n and \r break a line (not a form feed, \x85, \u2028...).
    for odd in ("\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"):
        text = f"x = '{odd}'\n\ndef foo():\n    return foo\n"
        updated, where = apply_replacements(text, [_replace(2, 4, 7, "bar")])
        assert updated == text.replace("def foo", "def bar"), repr(odd)
        assert where == [Position(2, 4)]
        assert symbol_position("a.py", text, 3, "foo") == Position(2, 4)
    mixed = "a = 1\r\nb = 2\rfoo = 3\n"
    assert apply_replacements(mixed, [_replace(2, 0, 3, "bar")]) == (
        "a = 1\r\nb = 2\rbar = 3\n",
        [Position(2, 0)],
    )
    assert symbol_position("a.py", mixed, 3, "foo") == Position(2, 0)
    # A character past the end of its line is the line's end (LSP clamps it).
    assert apply_replacements("ab\ncd\n", [_replace(0, 5, 5, "X")])[0] == "abX\ncd\n"
    assert apply_replacements("ab\r\ncd", [_replace(0, 9, 9, "X")])[0] == "abX\r\ncd"


async def test_rename_is_one_approved_change_of_every_file(
    root: Path, project: None, navigator: FakeNavigator
) -> None:
    _rename_f(navigator)
    log = MutationLog()
    approver = FakeApprover()
    calls = ToolCallRecorder(
        ToolEnvironment(
            workspace=TrackedWorkspace(DiskWorkspace(root), log),
            navigator=navigator,
            approver=approver,
            settings=ToolSettings(approval=ApprovalSettings(write="ask")),
        )
    )
    result = await calls.run(
        RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc"
    )
    assert not result.is_error, result.content
    assert result.content == (
        "Renamed `f` to `inc`: 3 edits in 2 files:\n"
        "pkg/core.py\n  1:5: def inc(x):\n  6:12: return inc(2)\n"
        "pkg/use.py\n  1:22: from pkg.core import inc as g\n"
        "(one change: generation 1)"
    )
    assert (root / "pkg/core.py").read_text() == CORE.replace("f(", "inc(")
    assert (root / "pkg/use.py").read_text() == USE.replace("import f", "import inc")
    # One approval, showing every file's diff.
    assert len(approver.requests) == 1
    assert "+++ b/pkg/core.py" in approver.requests[0].detail
    assert "+++ b/pkg/use.py" in approver.requests[0].detail
    # One mutation generation with every file.
    assert [m.paths for m in log.since(0)] == [("pkg/core.py", "pkg/use.py")]
    assert result.details["generation"] == 1


async def test_a_declined_or_refused_rename_changes_nothing(
    root: Path, project: None, navigator: FakeNavigator
) -> None:
    _rename_f(navigator)
    calls = ToolCallRecorder(
        ToolEnvironment(
            workspace=DiskWorkspace(root),
            navigator=navigator,
            approver=FakeApprover(False),
            settings=ToolSettings(approval=ApprovalSettings(write="ask")),
        )
    )
    declined = await calls.run(
        RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc"
    )
    assert declined.is_error
    assert (root / "pkg/core.py").read_text() == CORE
    with pytest.raises(ToolError, match="is not a name"):
        await calls.run(RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="a b")
    for keyword_or_dollar, why in (("class", "a reserved word in Python"), ("$f", "a \\$")):
        with pytest.raises(ToolError, match=why):
            await calls.run(
                RenameSymbolTool(),
                path="pkg/core.py",
                line=1,
                symbol="f",
                new_name=keyword_or_dollar,
            )
    outside = CodeLocation("/usr/lib/x.py", CodeRange(Position(0, 0), Position(0, 1))).path
    navigator.renames[("pkg/core.py", Position(0, 4))] = {
        outside: [TextReplacement(CodeRange(Position(0, 0), Position(0, 1)), "inc")]
    }
    with pytest.raises(ToolError, match="outside the workspace; nothing changed"):
        await calls.run(RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc")
    assert (root / "pkg/core.py").read_text() == CORE
    # The server's refusal (gopls: "renaming this func ... conflicts with")
    # says that nothing changed.
    del navigator.renames[("pkg/core.py", Position(0, 4))]
    with pytest.raises(ToolError, match=r"fake-server knows nothing at .*\) Nothing changed\.$"):
        await calls.run(RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc")


class _FailingSecondWrite:
    """A plain Workspace (no multi-file change of its own) over the disk:
    writes pkg/core.py, then fails pkg/use.py; records whether every
    file's lock was held at each write."""

    def __init__(self, root: Path) -> None:
        self.disk = DiskWorkspace(root)
        self.locked: list[bool] = []

    @property
    def root(self) -> str:
        return self.disk.root

    @property
    def generation(self) -> int:
        return self.disk.generation

    async def read_text(self, path: str) -> FileContent:
        return await self.disk.read_text(path)

    async def exists(self, path: str) -> bool:
        return await self.disk.exists(path)

    async def write_text(
        self,
        path: str,
        text: str,
        *,
        expected_version: int | None = None,
        expected_text: str | None = None,
    ) -> Mutation:
        self.locked.append(
            all(path_lock(self.root, p).locked() for p in ("pkg/core.py", "pkg/use.py"))
        )
        if path == "pkg/use.py" and text != USE:
            raise ToolError("the disk is full")
        return await self.disk.write_text(
            path, text, expected_version=expected_version, expected_text=expected_text
        )

    async def delete(self, path: str) -> Mutation:
        return await self.disk.delete(path)

    async def rename(self, old: str, new: str) -> Mutation:
        return await self.disk.rename(old, new)


async def test_a_rename_holds_every_lock_and_puts_back_what_it_wrote_when_a_write_fails(
    root: Path, project: None, navigator: FakeNavigator
) -> None:
    _rename_f(navigator)
    workspace = _FailingSecondWrite(root)
    log = MutationLog()
    calls = ToolCallRecorder(
        ToolEnvironment(workspace=TrackedWorkspace(workspace, log), navigator=navigator)
    )
    with pytest.raises(ToolError) as failed:
        await calls.run(RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc")
    assert str(failed.value) == (
        "The rename was not applied: Could not write pkg/use.py (the disk is full); it was not "
        "changed. Put back as they were: pkg/core.py. Nothing stays changed. Read the files "
        "again; rename again or finish it with edit_file."
    )
    assert (root / "pkg/core.py").read_text() == CORE
    assert (root / "pkg/use.py").read_text() == USE
    assert workspace.locked[:2] == [True, True]
    assert log.since(0) == []  # nothing recorded: no change stays


class _TypingApprover:
    """Approves, while the person changes pkg/use.py (after the rename was planned)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def confirm(self, request: object) -> bool:
        (self.root / "pkg/use.py").write_text(USE + "# typed\n")
        return True


async def test_a_file_changed_after_the_rename_was_planned_stops_it_before_any_write(
    root: Path, project: None, navigator: FakeNavigator
) -> None:
    _rename_f(navigator)
    log = MutationLog()
    calls = ToolCallRecorder(
        ToolEnvironment(
            workspace=TrackedWorkspace(DiskWorkspace(root), log),
            navigator=navigator,
            approver=_TypingApprover(root),
            settings=ToolSettings(approval=ApprovalSettings(write="ask")),
        )
    )
    with pytest.raises(ToolError) as failed:
        await calls.run(RenameSymbolTool(), path="pkg/core.py", line=1, symbol="f", new_name="inc")
    assert str(failed.value) == (
        "The rename was not applied: pkg/use.py changed since it was read (by another edit, "
        "session or the person); nothing was written. Rename again."
    )
    assert (root / "pkg/core.py").read_text() == CORE
    assert log.since(0) == []


async def test_rename_edits_for_another_text_or_version_twice_named_or_doubled_are_refused(
    root: Path, project: None, calls: ToolCallRecorder, navigator: FakeNavigator
) -> None:
    def edit(line: int, character: int, width: int = 1) -> TextReplacement:
        end = Position(line, character + width)
        return TextReplacement(CodeRange(Position(line, character), end), "inc")

    key = ("pkg/core.py", Position(0, 4))
    rename = {"path": "pkg/core.py", "line": 1, "symbol": "f"}
    for stale in (FileEdits([edit(0, 4)], version=3), FileEdits([edit(0, 4)], text="old")):
        navigator.renames[key] = {"pkg/core.py": stale}
        with pytest.raises(ToolError, match=r"pkg/core\.py changed after the language server"):
            await calls.run(RenameSymbolTool(), **rename, new_name="inc")
    doubled = [edit(0, 4, 0), edit(0, 4, 0)]
    navigator.renames[key] = {"pkg/core.py": doubled}
    with pytest.raises(ToolError, match="overlapping"):
        await calls.run(RenameSymbolTool(), **rename, new_name="inc")
    assert (root / "pkg/core.py").read_text() == CORE
    # One file named twice (two spellings of its path): its edits merged, once each.
    navigator.renames[key] = {
        "pkg/core.py": FileEdits([edit(0, 4), edit(5, 11)], text=CORE),
        "pkg/../pkg/core.py": [edit(0, 4)],
    }
    result = await calls.run(RenameSymbolTool(), **rename, new_name="inc")
    assert result.content.startswith("Renamed `f` to `inc`: 2 edits in 1 file:")
    assert (root / "pkg/core.py").read_text() == CORE.replace("f(", "inc(")


class _NeverAnswersForAliases(FakeNavigator):
    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        if path == "pkg/use.py":
            await anyio.Event().wait()  # never answers
        return await super().references(path, position, include_declaration=include_declaration)


async def test_an_alias_that_cannot_be_followed_keeps_the_references_found(
    calls: ToolCallRecorder,
    project: None,
    navigator: FakeNavigator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    del navigator.references_of[("pkg/use.py", Position(0, 26))]
    failed = await calls.run(FindReferencesTool(), path="pkg/core.py", line=1, symbol="f")
    assert failed.content.startswith("3 references to `f` in 2 files (fake-server):\n")
    assert failed.content.endswith(
        "\n(the uses of the alias `g` are not listed: fake-server knows nothing at "
        "pkg/use.py Position(line=0, character=26))"
    )
    monkeypatch.setattr("rein.tools.navigation.ALIASES_BOUND_S", 0.05)
    slow = _NeverAnswersForAliases(references_of=navigator.references_of)
    env = ToolEnvironment(workspace=calls.env.workspace, navigator=slow)
    with anyio.fail_after(60):  # only against a broken bound: 0.05 s ends the wait
        bounded = await ToolCallRecorder(env).run(
            FindReferencesTool(), path="pkg/core.py", line=1, symbol="f"
        )
    assert bounded.content.startswith("3 references to `f` in 2 files (fake-server):\n")
    assert bounded.content.endswith(
        "\n(import aliases not all followed: 0.05 s spent (the uses of `g` and later aliases "
        "are not listed))"
    )


async def test_a_javascript_name_may_hold_a_dollar(
    root: Path, write_files: WriteFiles, calls: ToolCallRecorder, navigator: FakeNavigator
) -> None:
    write_files({"web/a.ts": "const el = 1;\n"})
    place = CodeRange(Position(0, 6), Position(0, 8))
    navigator.renames[("web/a.ts", Position(0, 6))] = {"web/a.ts": [TextReplacement(place, "$el")]}
    result = await calls.run(
        RenameSymbolTool(), path="web/a.ts", line=1, symbol="el", new_name="$el"
    )
    assert not result.is_error
    assert (root / "web/a.ts").read_text() == "const $el = 1;\n"


async def test_a_reserved_word_of_the_files_language_is_refused_before_a_rename_is_asked(
    root: Path, write_files: WriteFiles, calls: ToolCallRecorder, navigator: FakeNavigator
) -> None:
    # typescript-language-server renamed `const shout` to `const class`
    # (which does not parse), and the gate met it after the write.
    files = {
        "web/a.ts": "const shout = 1;\n",
        "cmd/m.go": "var shout = 1\n",
        "src/m.c": "int shout;\n",
        "src/m.cpp": "int shout;\n",
    }
    write_files(files)
    for path, reserved, language in (
        ("web/a.ts", "class", "JavaScript/TypeScript"),
        ("web/a.ts", "await", "JavaScript/TypeScript"),
        ("cmd/m.go", "func", "Go"),
        ("cmd/m.go", "$x", None),
        ("src/m.c", "int", "C"),
        ("src/m.cpp", "namespace", "C++"),
    ):
        why = f"a reserved word in {language}" if language else "not a Go name"
        with pytest.raises(ToolError, match=why):
            await calls.run(
                RenameSymbolTool(), path=path, line=1, symbol="shout", new_name=reserved
            )
    # No rename asked; in TypeScript, the definition (a member may have the word).
    assert navigator.asked == [("definition", "web/a.ts", Position(0, 6))] * 2
    assert all((root / path).read_text() == text for path, text in files.items())
    # A C++ word is a name in C.
    place = CodeRange(Position(0, 4), Position(0, 9))
    navigator.renames[("src/m.c", Position(0, 4))] = {"src/m.c": [TextReplacement(place, "class")]}
    result = await calls.run(
        RenameSymbolTool(), path="src/m.c", line=1, symbol="shout", new_name="class"
    )
    assert not result.is_error, result.content
    assert (root / "src/m.c").read_text() == "int class;\n"


async def test_a_javascript_member_may_be_renamed_to_a_reserved_word_a_binding_may_not(
    root: Path, write_files: WriteFiles, calls: ToolCallRecorder, navigator: FakeNavigator
) -> None:
    # class Cache { remove() {} } -> delete() (Map.prototype.delete) parses;
    # const shout -> const class does not.
    text = "const shout = 1;\nclass Cache {\n  remove() {}\n}\nnew Cache().remove();\n"
    write_files({"web/a.ts": text})
    method = at("web/a.ts", 2, 2, 6)
    navigator.outlines["web/a.ts"] = (
        CodeSymbol("shout", "constant", at("web/a.ts", 0, 6, 5)),
        CodeSymbol("Cache", "class", at("web/a.ts", 1, 6, 5), children=(
            CodeSymbol("remove", "method", method, container="Cache"),
        )),
    )  # fmt: skip
    use = Position(4, 12)
    navigator.definitions_of[("web/a.ts", use)] = [method]
    navigator.definitions_of[("web/a.ts", Position(0, 6))] = [at("web/a.ts", 0, 6, 5)]
    navigator.renames[("web/a.ts", use)] = {
        "web/a.ts": [
            TextReplacement(method.range, "delete"),
            TextReplacement(CodeRange(use, Position(4, 18)), "delete"),
        ]
    }
    result = await calls.run(
        RenameSymbolTool(), path="web/a.ts", line=5, symbol="remove", new_name="delete"
    )
    assert not result.is_error, result.content
    assert (root / "web/a.ts").read_text() == text.replace("remove", "delete")
    with pytest.raises(ToolError, match=r"reserved word in JavaScript/TypeScript \(a method"):
        await calls.run(
            RenameSymbolTool(), path="web/a.ts", line=1, symbol="shout", new_name="class"
        )
    assert [m for m, _, _ in navigator.asked].count("rename") == 1
    # typescript-language-server outlines an enum's member as a constant.
    member = at("web/e.ts", 0, 9, 6)
    navigator.outlines["web/e.ts"] = (
        CodeSymbol("E", "enum", at("web/e.ts", 0, 5), children=(CodeSymbol("remove", "constant", member),)),
    )  # fmt: skip
    navigator.definitions_of[("web/e.ts", Position(1, 2))] = [member]
    assert await declares_member(navigator, "web/e.ts", Position(1, 2))


async def test_a_rename_says_where_a_python_stub_still_names_the_old_name(
    root: Path, write_files: WriteFiles, calls: ToolCallRecorder, navigator: FakeNavigator
) -> None:
    # attrs: basedpyright renamed `astuple` in _funcs.py and in the
    # package's __init__.py, not in __init__.pyi (its own declaration),
    # where importers resolve it; the analyzer gate saw nothing wrong.
    write_files(
        {
            "attr/_funcs.py": "def astuple(x):\n    return x\n",
            "attr/__init__.py": "from ._funcs import astuple\n",
            "attr/__init__.pyi": "# astuple's stub\nx = 1\ndef astuple(x: int) -> int: ...\n",
            "attr/_funcs.pyi": "def other() -> None: ...\n",
        }
    )
    navigator.renames[("attr/_funcs.py", Position(0, 4))] = {
        "attr/_funcs.py": [_replace(0, 4, 11, "as_tuple")],
        "attr/__init__.py": [_replace(0, 20, 27, "as_tuple")],
    }
    result = await calls.run(
        RenameSymbolTool(), path="attr/_funcs.py", line=1, symbol="astuple", new_name="as_tuple"
    )
    assert not result.is_error, result.content
    assert result.content.endswith(
        "(one change: generation 1; not renamed: attr/__init__.pyi (the stub of "
        "attr/__init__.py) still names `astuple` (lines 1, 3); the language server's rename "
        "does not cross a module and its stub. Rename it there with edit_file if it is the "
        "same symbol.)"
    )
    # _funcs.pyi does not name it: nothing said of it.
    assert "_funcs.pyi" not in result.content
    # A rename that changed the stub too says nothing.
    navigator.renames[("attr/_funcs.py", Position(0, 4))] = {
        "attr/_funcs.py": [_replace(0, 4, 12, "tup")],
        "attr/__init__.py": [_replace(0, 20, 28, "tup")],
        "attr/__init__.pyi": [_replace(0, 2, 9, "tup"), _replace(2, 4, 11, "tup")],
    }
    result = await calls.run(
        RenameSymbolTool(), path="attr/_funcs.py", line=1, symbol="as_tuple", new_name="tup"
    )
    assert not result.is_error, result.content
    assert result.content.endswith("(one change: generation 2)")


def body_end_at(line: int) -> CodeRange:
    return CodeRange(Position(5, 0), Position(line, 0))


async def test_find_definition_shows_the_definitions_lines_bounded_by_its_outline(
    calls: ToolCallRecorder, write_files: WriteFiles, navigator: FakeNavigator
) -> None:
    long_body = "".join(f"    x{i} = {i}\n" for i in range(50))
    write_files(
        {
            "lib.py": "def short(a):\n    '''Doc.'''\n    return a\n\n\n"
            f"def long():\n{long_body}    return x0\n",
            "main.py": "from lib import short, long\n",
        }
    )
    whole = CodeRange(Position(0, 0), Position(2, 12))
    navigator.outlines["lib.py"] = [
        CodeSymbol("short", "function", at("lib.py", 0, 4), extent=whole),
        # An end at column 0 of the next line is this line's end.
        CodeSymbol("long", "function", at("lib.py", 5, 4), extent=body_end_at(57)),
    ]
    navigator.definitions_of[("main.py", Position(0, 16))] = [at("lib.py", 0, 4)]
    navigator.definitions_of[("main.py", Position(0, 23))] = [at("lib.py", 5, 4)]
    short = await calls.run(FindDefinitionTool(), path="main.py", line=1, symbol="short")
    assert short.content == (
        "1 definition of `short` (fake-server):\nlib.py\n"
        "  1:5: def short(a):\n    2|     '''Doc.'''\n    3|     return a"
    )
    long = await calls.run(FindDefinitionTool(), path="main.py", line=1, symbol="long")
    lines = long.content.splitlines()
    head = ["1 definition of `long` (fake-server):", "lib.py", "  6:5: def long():"]
    assert lines[:4] == [*head, "    7|     x0 = 0"]
    # 40 lines of the definition shown, its other 12 counted.
    assert lines[-2:] == ["    45|     x38 = 38", "    … 12 more lines"]
    assert len(lines) == 2 + 40 + 1
    # The body is no place: the panel and ACP read one.
    assert parse_locations(long.content) == (
        "1 definition of `long` (fake-server):",
        [("lib.py", [(6, 5, "def long():")])],
        None,
    )


async def test_a_definition_outside_the_workspace_says_why_its_line_is_not_shown(
    calls: ToolCallRecorder, write_files: WriteFiles, navigator: FakeNavigator, tmp_path: Path
) -> None:
    """gopls answers fmt.Println with Go's own source: Rein reads no file
    outside the workspace, and the answer was an empty '293:6:'."""
    library = tmp_path.parent / "golib" / "print.go"
    library.parent.mkdir(exist_ok=True)
    library.write_text("package fmt\n\nfunc Println(a ...any) {}\n")
    write_files({"main.go": "package main\n\nfunc main() { fmt.Println(1) }\n"})
    navigator.definitions_of[("main.go", Position(2, 18))] = [at(str(library), 2, 5)]
    found = await calls.run(FindDefinitionTool(), path="main.go", line=3, symbol="Println")
    assert found.content == (
        f"1 definition of `Println` (fake-server):\n{library}\n"
        "  3:6: (outside the workspace: not read; hover gives its signature)"
    )
    assert "func Println" not in found.content


async def test_an_empty_answer_in_a_file_that_does_not_parse_says_so(
    disk: DiskWorkspace, write_files: WriteFiles
) -> None:
    """basedpyright drops what follows an unclosed parenthesis: 'No
    definition of `echo` found' read as if echo were undefined."""
    write_files({"broken.py": "from u import echo\n\ndef f(:\n    return echo\n"})
    parse_error = Diagnostic(
        path="broken.py", line=2, character=6, code="invalid-syntax", source="Ruff",
        message="Expected a parameter or the end of the parameter list",
    )  # fmt: skip
    type_error = Diagnostic(path="broken.py", line=0, code="reportMissingImports", message="x")
    diagnostics = FakeDiagnostics([type_error, parse_error])
    nav = FakeNavigator()
    nav.definitions_of[("broken.py", Position(3, 11))] = []
    nav.hovers[("broken.py", Position(3, 11))] = ""
    nav.renames[("broken.py", Position(3, 11))] = {}
    env = ToolEnvironment(workspace=disk, navigator=nav, diagnostics=diagnostics)
    calls = ToolCallRecorder(env)
    found = await calls.run(FindDefinitionTool(), path="broken.py", line=4, symbol="echo")
    assert found.content == (
        "No definition of `echo` found (fake-server). (broken.py does not parse: line 3: "
        "Expected a parameter or the end of the parameter list; the server may not have "
        "understood the code after it: fix that first, or read the file)"
    )
    hover = await calls.run(HoverTool(), path="broken.py", line=4, symbol="echo")
    assert "broken.py does not parse: line 3" in hover.content
    with pytest.raises(ToolError, match=r"nothing changed\. \(broken\.py does not parse: line 3"):
        await calls.run(RenameSymbolTool(), path="broken.py", line=4, symbol="echo", new_name="e")
    # A server's refusal there (gopls: "no identifier found") says it too.
    with pytest.raises(ToolError, match=r"knows nothing at .*\(broken\.py does not parse: line 3"):
        await calls.run(FindReferencesTool(), path="broken.py", line=4, symbol="echo")
    diagnostics.diagnostics = [type_error]  # errors, but it parses: nothing to add
    found = await calls.run(FindDefinitionTool(), path="broken.py", line=4, symbol="echo")
    assert found.content == "No definition of `echo` found (fake-server)."
