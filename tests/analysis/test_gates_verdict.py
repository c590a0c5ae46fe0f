"""Issue 32, the core: the verdict names the cause first and says how many
problems it left out (item 4), says it is partial past maxImporters (item
5), calls changes nobody analysed unverified (item 6), and a module the run
deleted breaks its importers whatever the counterfactual says (item 1)."""

from __future__ import annotations

from rein.analysis.gate import AnalyzerGate
from rein.analysis.reach import not_analysed, public_names_changed
from rein.harness.events import Blocker
from rein.harness.gating.gates import GateContext, build_repair_prompt
from rein.harness.generations import MutationLog, TrackedWorkspace
from tests.fakes.diagnostics import FakeDiagnostics, SettlingFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import World, command, diag, write

# ---------------------------------------------------------- the cause first


async def test_a_syntax_error_in_the_changed_file_comes_first_and_the_rest_are_counted() -> None:
    """Old: blockers were sorted by path and cut to 20 before the prompt was
    built, so 39 blockers showed 20 "unknown import symbol" errors in other
    files, never the unclosed parenthesis in utils.py, and no "… more"."""
    found = [
        diag(f"a{i:02}.py", 0, f'"name{i}" is unknown import symbol', code="reportAttr")
        for i in range(38)
    ]
    found.append(diag("utils.py", 40, '"(" was not closed', code="invalid-syntax", source="Ruff"))
    gate = AnalyzerGate(FakeDiagnostics(found))
    outcome = await gate.check(GateContext(1, frozenset({"utils.py"})))
    assert len(outcome.blockers) == 39
    assert (outcome.blockers[0].path, outcome.blockers[0].line) == ("utils.py", 40)
    prompt = build_repair_prompt(outcome.blockers, 1, 3)
    lines = prompt.splitlines()
    assert lines[2].startswith("- [analyzer] utils.py:41:1 error invalid-syntax")
    assert "- ... and 19 more problem(s) not shown here (39 in all" in prompt


async def test_errors_in_the_changed_files_come_before_errors_elsewhere() -> None:
    found = [
        diag("a.py", 1, "elsewhere", code="X"),
        diag("z.py", 5, "in the changed file", code="Y"),
        diag("z.py", 2, "a syntax error", code="invalid-syntax"),
    ]
    gate = AnalyzerGate(FakeDiagnostics(found))
    outcome = await gate.check(GateContext(1, frozenset({"z.py"})))
    assert [(b.path, b.line) for b in outcome.blockers] == [("z.py", 2), ("z.py", 5), ("a.py", 1)]


def test_one_error_at_many_places_is_one_entry_naming_the_places() -> None:
    same = [
        Blocker(gate="analyzer", path=f"m{i}.py", line=2, code="R", message='"f" is unknown')
        for i in range(14)
    ]
    other = Blocker(gate="analyzer", path="lib.py", line=0, code="S", message="broken")
    prompt = build_repair_prompt([other, *same], 1, 3)
    assert prompt.count('"f" is unknown') == 1
    assert "the same error at 13 more place(s): m1.py:3, m2.py:3" in prompt
    assert "m10.py:3 and 3 more" in prompt
    assert "not shown here" not in prompt  # every blocker is named or counted


def test_one_error_twice_on_a_line_names_both_columns() -> None:
    # Found by use (explore14): two of one TypeScript error on a line were
    # listed as the same place twice, with no column.
    twice = [
        Blocker(gate="analyzer", path="a.ts", line=2, character=c, code="2345", message="bad")
        for c in (4, 17)
    ]
    prompt = build_repair_prompt(twice, 1, 3)
    assert "a.ts:3:5 error 2345: bad" in prompt
    assert "the same error at 1 more place(s): a.ts:3:18" in prompt


def test_more_distinct_blockers_than_the_prompt_shows_are_counted() -> None:
    many = [Blocker(gate="tests", message=f"failure {i}") for i in range(23)]
    prompt = build_repair_prompt(many, 1, 3)
    assert "failure 19" in prompt and "failure 20" not in prompt
    assert "- ... and 3 more problem(s) not shown here (23 in all" in prompt


# ------------------------------------------------------ nobody analysed it


async def test_a_change_no_analyzer_covers_is_unverified_and_named() -> None:
    """Old: a run that changed only .ts files ended "passed" (0 diagnostics
    from ruff, basedpyright) with nothing unverified."""
    world = World({"web/app.ts": "let a = 1;\n", "README.md": "hi\n"})
    world.source.uncovered = {".ts", ".md"}
    agent, _, events = world.agent(
        [write("web/app.ts", "let a = 2;\n"), write("README.md", "hello\n"), {"text": "done"}]
    )
    result = await agent.prompt("change a")
    [gate] = events.of("gate_result")
    assert gate.status == "unverified"
    assert "not analysed: web/app.ts" in gate.detail
    assert "README.md" not in gate.detail  # not source code: nobody's to analyse
    [unverified] = result.unverified
    assert "web/app.ts" in unverified.reason


async def test_a_change_nobody_analyses_names_the_server_that_was_not_found() -> None:
    """gopls not on PATH: the verdict said 'not analysed: geom/geom.go' and
    nothing of why (the analyzers line, said once at the start, did)."""
    world = World({"geom/geom.go": "package geom\n", "a.go": "package a\n", "b.rs": "\n"})
    world.source.uncovered = {".go", ".rs"}
    world.source.why_uncovered = {".go": "gopls was not found"}
    writes = [write(p, "\n\n") for p in ("geom/geom.go", "a.go", "b.rs")]
    agent, _, events = world.agent([*writes, {"text": "done"}])
    result = await agent.prompt("change them")
    [gate] = events.of("gate_result")
    assert gate.status == "unverified"
    said = "not analysed: a.go, geom/geom.go (gopls was not found); b.rs"
    assert said in gate.detail
    [unverified] = result.unverified
    assert said in unverified.reason


async def test_a_source_that_does_not_say_what_it_covers_covers_everything() -> None:
    """The editor's diagnostics cover whatever the editor analyses."""
    assert not_analysed(FakeDiagnostics(), ["web/app.ts", "main.go"]) == []
    source = SettlingFakeDiagnostics()
    source.uncovered = {".ts"}
    assert not_analysed(source, ["web/app.ts", "a.py", "notes.txt"]) == ["web/app.ts"]


# ------------------------------------------------------- partial verdicts


def importer_world() -> World:
    files = {"lib.py": "def f(): ...\n"}
    files |= {f"user{i}.py": "import lib\n" for i in range(5)}
    world = World(files)
    world.source.file_by_file = True
    world.source.max_importers = 2
    world.source.importers = {"lib.py": [f"user{i}.py" for i in range(5)]}
    world.source.counterfactual = []
    return world


async def test_a_verdict_past_max_importers_is_partial_and_never_passed() -> None:
    """Old: past maxImporters the gate checked the first importers and
    reported as if complete; a renamed function's other importers were
    never looked at, and the verdict could pass."""
    world = importer_world()
    agent, _, events = world.agent(
        [write("lib.py", "def g(): ...\n"), {"text": "renamed f"}], max_repair_attempts=0
    )
    result = await agent.prompt("rename f")
    [gate] = events.of("gate_result")
    assert gate.status == "unverified"
    assert "partial: 1 importer(s) of the changed files not checked" in gate.detail
    assert "user4.py" in gate.detail
    [unverified] = result.unverified
    assert "importer(s) of changed public names not checked: user4.py" in unverified.reason
    # The verdict opened the next batch (user2, user3) with a baseline of their own.
    assert "open_more_importers user2.py user3.py" in world.source.log
    assert "snapshot_with lib.py -> user2.py user3.py" in world.source.log


async def test_the_rest_of_the_importers_are_checked_in_later_verdicts() -> None:
    world = importer_world()
    agent, _, events = world.agent(
        [
            write("lib.py", "def g(): ...\n"),
            {"text": "renamed f"},
            {"text": "still renamed"},
        ],
        max_repair_attempts=0,
    )
    await agent.prompt("rename f")
    second = await agent.prompt("check again")
    first, later = events.of("gate_result")
    assert first.status == "unverified"
    assert "open_more_importers user4.py" in world.source.log
    assert (later.status, later.blockers) == ("passed", [])
    assert second.status == "completed", second.error
    assert second.unverified == []


async def test_a_new_error_in_a_later_importer_blocks() -> None:
    world = importer_world()
    world.workspace.files["user3.py"] = "import lib\nlib.f()\n"

    def user3_breaks(mutation: object) -> None:
        if "ERROR" not in world.workspace.files["user3.py"]:
            world.workspace.files["user3.py"] += "ERROR f is gone\n"
            world.analyzer.analyze()

    world.log.subscribe(user3_breaks)
    agent, _, events = world.agent(
        [write("lib.py", "def g(): ...\n"), {"text": "renamed f"}], max_repair_attempts=0
    )
    result = await agent.prompt("rename f")
    [gate] = events.of("gate_result")
    assert result.status == "failed"
    assert [(b.path, b.line) for b in gate.blockers] == [("user3.py", 2)]
    assert "partial: 1 importer(s)" in gate.detail


async def test_importers_left_unchecked_do_not_stop_a_pass_when_no_public_name_changed() -> None:
    world = importer_world()
    agent, _, events = world.agent(
        [write("lib.py", "def f(): ...\n# a comment\n"), {"text": "commented"}]
    )
    result = await agent.prompt("comment")
    [gate] = events.of("gate_result")
    assert (gate.status, result.status) == ("passed", "completed")
    assert "(no public name changed)" in gate.detail


async def test_importers_past_max_importers_are_not_baselined_while_a_deleted_file_is_gone() -> (
    None
):
    """Old: the later batches of a deleted module's importers were opened
    and baselined with it still gone: their baseline held the deletion's
    own errors, so they never blocked, and the verdicts stopped saying
    they were not checked."""
    files = {"lib.py": "def f(): ...\n"} | {f"user{i}.py": "import lib\n" for i in range(5)}
    workspace = TrackedWorkspace(FakeWorkspace(files), MutationLog())
    source = SettlingFakeDiagnostics()
    source.file_by_file = True
    source.max_importers = 2
    source.importers = {"lib.py": [f"user{i}.py" for i in range(5)]}
    gate = AnalyzerGate(source)

    async def before_change(paths: tuple[str, ...]) -> None:
        await gate.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    await workspace.delete("lib.py")
    broken = [
        diag(f"user{i}.py", 0, 'Import "lib" could not be resolved', code="I") for i in range(5)
    ]
    # With lib.py gone the analyzers cannot be shown it: they see the damage.
    source.diagnostics, source.counterfactual = broken, broken
    ctx = GateContext(1, frozenset({"lib.py"}), workspace)
    for _ in range(2):
        outcome = await gate.check(ctx)
        assert [(b.path, b.line) for b in outcome.blockers] == [("user0.py", 0), ("user1.py", 0)]
        assert outcome.unverified is not None
        assert "3 importer(s) of changed public names not checked" in outcome.unverified
    assert not any(line.startswith("open_more_importers") for line in source.log)


def test_public_names_changed() -> None:
    before = "import os\n\ndef f(a: int) -> int:\n    return a\n\nX = 1\n_y = 2\n"
    assert not public_names_changed(before, before + "# note\n", "m.py")
    assert not public_names_changed(before, before.replace("_y = 2", "_y = 3"), "m.py")
    assert not public_names_changed(before, before.replace("return a", "return a + 1"), "m.py")
    assert public_names_changed(before, before.replace("def f(a: int)", "def f(b: int)"), "m.py")
    assert public_names_changed(before, before.replace("X = 1", "Z = 1"), "m.py")
    assert public_names_changed(before, "", "m.py")
    assert public_names_changed(None, before, "m.py")
    assert public_names_changed("a", "a", "m.ts")


# ------------------------------------------------ a deleted module's importers


async def test_an_importers_error_naming_a_deleted_module_is_the_runs() -> None:
    """Old: the counterfactual showed the analyzers the deleted file's old
    text in memory, while they resolved imports from the disk: the
    importer's broken import was there "without the run" too and passed."""
    workspace = FakeWorkspace({"pkg/util.py": "def double(x): ...\n", "pkg/app.py": "x = 1\n"})
    source = SettlingFakeDiagnostics()
    gate = AnalyzerGate(source)
    await gate.on_run_start(0)
    await gate.before_change(["pkg/util.py"], workspace)
    await workspace.delete("pkg/util.py")
    broken = diag("pkg/app.py", 2, 'Import "pkg.util" could not be resolved', code="I")
    other = diag("pkg/app.py", 5, "something unrelated", code="U")
    source.diagnostics = [broken, other]
    source.counterfactual = [broken, other]  # what showing the old text in memory answers
    outcome = await gate.check(GateContext(1, frozenset({"pkg/util.py"}), workspace))
    # Nothing can be shown in memory for a deleted file: no question is
    # asked, and what it may have caused blocks.
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/app.py", 2), ("pkg/app.py", 5)]
    assert not any(entry.startswith("snapshot_with") for entry in source.log)


async def test_with_a_module_renamed_away_its_consequences_elsewhere_block() -> None:
    """toolz's ``itertoolz.py`` renamed (issue 32): ``toolz/__init__.py``'s
    star import of it broke, and every name it brought became "not a known
    attribute" in ``toolz/curried``, errors that do not name the module. Old:
    they were asked about with the renamed file's new path shown empty and
    its old path still gone from the disk the analyzers read, were there
    then too, and were dropped (7 of the 46 new error lines blocked). With
    a file gone nothing is asked: what is new since the run started blocks,
    though another changed file could have been shown."""
    workspace = FakeWorkspace(
        {"pkg/util.py": "def double(x): ...\n", "pkg/core.py": "A = 1\n", "pkg/app.py": "x\n"}
    )
    source = SettlingFakeDiagnostics()
    gate = AnalyzerGate(source)
    await gate.on_run_start(0)
    await gate.before_change(["pkg/util.py", "pkg/helpers.py"], workspace)
    await workspace.rename("pkg/util.py", "pkg/helpers.py")
    await gate.before_change(["pkg/core.py"], workspace)
    await workspace.write_text("pkg/core.py", "A = 2\n")
    broken = diag("pkg/__init__.py", 0, 'Import ".util" could not be resolved', code="I")
    star = diag("pkg/app.py", 5, '"double" is not a known attribute of module "pkg"', code="A")
    source.diagnostics = [broken, star]
    source.counterfactual = [broken, star]  # what the analyzers say with util.py still gone
    touched = frozenset({"pkg/util.py", "pkg/helpers.py", "pkg/core.py"})
    outcome = await gate.check(GateContext(1, touched, workspace))
    assert [(b.path, b.line) for b in outcome.blockers] == [
        ("pkg/__init__.py", 0),
        ("pkg/app.py", 5),
    ]
    assert "without the run's changes" not in outcome.detail
    assert not any(entry.startswith("snapshot_with") for entry in source.log)


async def test_an_error_in_a_file_importing_a_created_modules_name_is_the_runs() -> None:
    """Old: a created ``pkg/json.py`` (shadowing the standard library's json
    in app.py) was shown empty for the question, while the analyzers
    resolved app.py's import to it on the disk: app.py's new error was
    there "without the run" too and passed. Files that do not import its
    name are still asked about."""
    workspace = FakeWorkspace(
        {"pkg/app.py": "import json\n\njson.loads('1')\n", "pkg/other.py": "x = 1\n"}
    )
    source = SettlingFakeDiagnostics()
    gate = AnalyzerGate(source)
    await gate.on_run_start(0)
    await gate.before_change(["pkg/json.py"], workspace)
    await workspace.write_text("pkg/json.py", "")
    shadowed = diag("pkg/app.py", 2, '"loads" is not a known attribute of module', code="A")
    order = diag("pkg/other.py", 0, "inferred from the check order", code="O")
    source.diagnostics = [shadowed, order]
    source.counterfactual = [shadowed, order]  # the disk's json.py, whatever is shown
    outcome = await gate.check(GateContext(1, frozenset({"pkg/json.py"}), workspace))
    assert [(b.path, b.line) for b in outcome.blockers] == [("pkg/app.py", 2)]
    assert "snapshot_with pkg/json.py -> pkg/other.py" in source.log


# ------------------------------------------- a command's unknown importers


async def test_importers_of_a_commands_change_without_a_baseline_are_not_checked() -> None:
    """A command's change in a workspace analysed file by file, whose state
    before the run the analyzers could not show (their counterfactual did
    not settle: django's basedpyright that never published again). Old:
    the importers opened for it had no baseline, and every old error in
    them blocked as the run's (431 blockers, precision 0.002, the run
    failed after its repairs). Now they are named not checked."""
    world = World({"lib.py": "def f(): ...\n", "user0.py": "import lib\nERROR old\n"})
    world.source.file_by_file = True
    world.source.importers = {"lib.py": ["user0.py"]}
    world.source.counterfactual = None  # the analyzers cannot tell

    def before_change(path: str) -> str | None:
        return {"lib.py": "def f(): ...\n"}.get(path)

    world.source.text_before_change = before_change  # type: ignore[attr-defined]
    agent, _, events = world.agent(
        [command("lib.py", "def g(): ...\n"), {"text": "renamed f"}], max_repair_attempts=0
    )
    result = await agent.prompt("rename f with sed")
    [gate] = events.of("gate_result")
    assert result.blockers == []
    assert gate.status == "unverified"
    assert "user0.py" in gate.detail
    [unverified] = result.unverified
    assert "user0.py" in unverified.reason
