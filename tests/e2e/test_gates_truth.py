"""Issue 14 with the real analyzers (ruff server, basedpyright), headless:
the gates block on what the run broke, never on what it found.

The project is small and real: ``shop.py`` already has errors (a wrong
return type basedpyright sees, an undefined name both analyzers see) when
the run starts, and the run edits that very file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.config import ReinConfig, load_config
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

SHOP = '''"""A small shop module with errors it already had."""


def price(amount: int) -> str:
    return amount * 2


def total(items: list[int]) -> int:
    return sum(items) + shipping_cost


def greet(name: str) -> str:
    return f"hello {name}"
'''


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0.1.0"\n')
    (root / "shop.py").write_text(SHOP)
    return root


def edit(old: str, new: str, path: str = "shop.py") -> dict:
    return {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}
        ]
    }


async def run(
    root: Path, script: list[dict], config: ReinConfig | None = None, prompts: int = 1
) -> tuple[list, ReplayModel, EventLog]:
    model = ReplayModel(script)
    events = EventLog()
    results = []
    async with HeadlessSession(root, model, config or ReinConfig(), watch=False) as session:
        session.agent.subscribe(events)
        for i in range(prompts):
            results.append(await session.prompt(f"task {i + 1}"))
    return results, model, events


async def test_an_undefined_name_is_one_blocker_though_both_analyzers_see_it(shop: Path) -> None:
    script = [
        edit('return f"hello {name}"', 'return f"hello {nmae}"'),
        {"text": "done"},
        {"expect": {"last_message_contains": "nmae"}, **edit("{nmae}", "{name}")},
        {"text": "fixed the typo"},
    ]
    [result], model, events = await run(shop, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    first, second = events.of("gate_result")
    # Exactly the run's error: not the two the file had, and once, naming both analyzers.
    [blocker] = first.blockers
    assert (blocker.path, blocker.line, blocker.code) == ("shop.py", 12, "F821")
    assert blocker.source == "Ruff, basedpyright"
    assert blocker.message == "Undefined name `nmae`"
    assert blocker.also == ['basedpyright reportUndefinedVariable: "nmae" is not defined']
    repair = model.requests[2].messages[-1].content
    assert "shipping_cost" not in repair and "reportReturnType" not in repair
    assert (second.status, second.blockers) == ("passed", [])


async def test_an_edit_that_adds_no_error_passes_in_a_file_with_errors(shop: Path) -> None:
    script = [edit('return f"hello {name}"', 'return f"hello, {name}!"'), {"text": "friendlier"}]
    [result], _, events = await run(shop, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 0
    [gate] = [r for r in events.of("gate_result") if r.gate == "analyzer"]
    assert (gate.status, gate.blockers) == ("passed", [])


async def test_lines_inserted_above_pre_existing_errors_do_not_block(shop: Path) -> None:
    script = [
        edit(
            '"""A small shop module with errors it already had."""\n',
            '"""A small shop module with errors it already had."""\n\n'
            "CURRENCY = 'EUR'\nVAT = 0.2\nFREE_SHIPPING_FROM = 50\n",
        ),
        {"text": "added constants"},
    ]
    [result], _, events = await run(shop, script)
    assert result.status == "completed", result.error
    assert result.repair_attempts == 0
    [gate] = [r for r in events.of("gate_result") if r.gate == "analyzer"]
    assert (gate.status, gate.blockers) == ("passed", [])
    assert "FREE_SHIPPING_FROM = 50\n\n\ndef price" in (shop / "shop.py").read_text()


async def test_the_next_run_without_edits_does_not_complete_over_the_error(shop: Path) -> None:
    script = [
        edit('return f"hello {name}"', 'return f"hello {nmae}"'),
        {"text": "done"},
        {"text": "it is done, nothing to change"},  # run 2 makes no edit
    ]
    config = load_config({"harness": {"maxRepairAttempts": 0}})
    [first, second], _, events = await run(shop, script, config, prompts=2)
    assert first.status == "failed"
    assert second.status == "failed"
    assert [(b.line, b.message) for b in second.blockers] == [(12, "Undefined name `nmae`")]
    [carried] = events.of("carried_changes")
    assert carried.paths == ["shop.py"]


async def test_a_resumed_session_still_validates_what_its_last_run_left(shop: Path) -> None:
    """The validation state is stored with the session: a new process that
    resumes it validates the earlier run's change against that file's own
    baseline (the pre-existing errors still do not block)."""
    storage = shop.parent / "store"
    config = load_config({"harness": {"maxRepairAttempts": 0}})
    first_model = ReplayModel(
        [edit('return f"hello {name}"', 'return f"hello {nmae}"'), {"text": "done"}]
    )
    async with HeadlessSession(shop, first_model, config, watch=False, storage=storage) as session:
        first = await session.prompt("greet")
        session_id = session.session.id
    assert first.status == "failed"
    second_model = ReplayModel([{"text": "it is done"}])
    events = EventLog()
    async with HeadlessSession(
        shop, second_model, config, watch=False, storage=storage, resume=session_id
    ) as session:
        session.agent.subscribe(events)
        second = await session.prompt("is it done?")
    assert second.status == "failed"
    assert [(b.line, b.message) for b in second.blockers] == [(12, "Undefined name `nmae`")]
    assert [e.paths for e in events.of("carried_changes")] == [["shop.py"]]


CHECKOUT = '''"""Uses the shop, and has an error of its own already."""

from shop import greet


def welcome() -> str:
    return greet("visitor") + undefined_banner
'''


async def test_a_large_workspace_is_checked_file_by_file_with_the_changed_files_importers(
    shop: Path,
) -> None:
    """Over gates.analyzer.workspaceMaxFiles, basedpyright checks open files
    only: the changed file's importer is opened with it, before the change.
    The importer's old error does not block; the break the change causes in
    it does."""
    (shop / "checkout.py").write_text(CHECKOUT)
    (shop / "unrelated.py").write_text("value: int = 'not an int'\n")
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2}}})
    script = [
        edit("def greet(name: str) -> str:", "def greet(name: str, loud: bool) -> str:"),
        {"text": "done"},
        edit(
            "def greet(name: str, loud: bool) -> str:",
            "def greet(name: str, loud: bool = False) -> str:",
        ),
        {"text": "made it optional"},
        # A second task breaks the importer again: it was closed when the
        # first change was validated and is opened again with this one.
        edit(
            "def greet(name: str, loud: bool = False) -> str:",
            "def greet(name: str, loud: bool, times: int) -> str:",
        ),
        {"text": "done"},
        edit(
            "def greet(name: str, loud: bool, times: int) -> str:",
            "def greet(name: str, loud: bool = False, times: int = 1) -> str:",
        ),
        {"text": "defaults again"},
    ]
    model = ReplayModel(script)
    events = EventLog()
    async with HeadlessSession(shop, model, config, watch=False) as session:
        session.agent.subscribe(events)
        pool = session.pool
        assert pool.large
        await session.analyzers_started()
        basedpyright = next(a for a in pool.analyzers if a.spec.name == "basedpyright")
        assert basedpyright.file_by_file
        assert basedpyright.settings["basedpyright"]["analysis"]["diagnosticMode"] == (
            "openFilesOnly"
        )
        assert basedpyright.versions == {}  # nothing opened at start
        opened: list[list[str]] = []
        original_open = basedpyright.open

        def recording_open(path: str) -> None:
            opened.append([path])
            original_open(path)

        basedpyright.open = recording_open  # type: ignore[method-assign]
        result = await session.prompt("make greet loud")
        # Validated: what was opened for the change is closed again, so a
        # long session does not make basedpyright re-check every file an
        # earlier change needed.
        assert basedpyright.versions == {}
        assert "checkout.py" not in basedpyright.diagnostics
        assert sorted(p for [p] in opened) == ["checkout.py", "shop.py"]
        again = await session.prompt("make greet repeat")
        assert basedpyright.versions == {}
        assert sorted(p for [p] in opened[2:]) == ["checkout.py", "shop.py"]
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    assert again.status == "completed", again.error
    assert again.repair_attempts == 1
    first, second, third, fourth = [r for r in events.of("gate_result") if r.gate == "analyzer"]
    # The call the change broke, in the importer; not its undefined_banner,
    # not shop.py's old errors, not the unrelated file nobody opened.
    assert [(b.path, b.line, b.code) for b in first.blockers] == [
        ("checkout.py", 6, "reportCallIssue")
    ], first.blockers
    assert "importer" in first.detail
    assert (second.status, second.blockers) == ("passed", [])
    # The importer, opened again, has a baseline from then: its old
    # undefined_banner does not block, the new break does.
    assert [(b.path, b.line, b.code) for b in third.blockers] == [
        ("checkout.py", 6, "reportCallIssue")
    ], third.blockers
    assert (fourth.status, fourth.blockers) == ("passed", [])
