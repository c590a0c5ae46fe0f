"""The prompt contract of every role, over the real wiring of both hosts.

A recording scripted model (it follows its script whatever it is asked)
runs sessions built by ``ReinServer.new_session`` (``rein serve``) and by
``HeadlessSession`` (``rein run``). For each request it recorded, the role
that made it (agent, explainer, planner, executor, summariser, subagent) is
known from the script's order, and the system prompt is checked against the
tools that request offered:

* every offered tool is named (backticked); a request whose tool choice is
  ``none`` (the summariser's) offers nothing it could call;
* no registered tool that is not offered is named (the planner and the
  summariser may name the executor's tools in the section that says they are
  the executor's, and only there);
* no instruction contradicts the tools: where a ``write`` tool is offered,
  nothing forbids changing files, where a ``command`` tool is offered,
  nothing forbids running commands; a role without them is told so;
* the project's instruction files reach every role: AGENTS.md, CLAUDE.md,
  ``.github/copilot-instructions.md``, ``.cursor/rules/*.mdc`` and an
  AGENTS.md in a subfolder, named with the folder it applies to;
* a toolkit's ``<notes_rules>`` section is there exactly when one of its
  tools is offered.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.workspace import Workspace

from rein.config import load_config
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.flows.plan_tools import NON_WORK_TOOLS
from rein.harness.agent import RunResult
from rein.harness.prompts import NO_COMMAND, NO_WRITE
from rein.hosting.headless import HeadlessSession
from rein.lsp import create_server
from rein.providers.replay import RecordedRequest, ReplayModel
from rein.tools import default_tools
from rein.tools.registry import NAVIGATION_READ_TOOLS, navigation_tools
from rein.tools.settings import DEFAULT_TOOL_NAMES
from tests.bring.setup_repo import setup_repo
from tests.mcp.conftest import TOOLBOX
from tests.session.notes_toolkit import NOTES_PATH

AGENTS_MD = "Always run `make lint` before finishing; use tabs, never spaces."
#: The other instruction files of the project, by path (none names a tool).
MORE_INSTRUCTIONS = {
    "CLAUDE.md": "Prefer small functions.",
    ".github/copilot-instructions.md": "Write docstrings in English.",
    ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nKeep lines under 100 characters.",
    "lib/AGENTS.md": "Code under lib is vendored: leave it as it is.",
}
NOTES_TOOLS = ("read_note", "write_note")
MCP_BOX_TOOLS = (
    "crash",
    "echo",
    "fail",
    "garble",
    "grow",
    "hang",
    "hang_started",
    "image",
    "late_tool",
    "pid",
    "wait_cancelled",
)
#: The tool class of every tool a session can offer.
CLASSES: dict[str, str] = {
    **{t.name: t.tool_class for t in default_tools().tools()},
    **{t.name: t.tool_class for t in navigation_tools()},
    "read_note": "read",
    "write_note": "write",
    "task": "other",
    "skill": "read",
    "complete_step": "other",
    "submit_plan": "other",
    # The MCP tools of the tests' toolbox server (tests/mcp_servers/toolbox.py).
    **{f"mcp__box__{n}": "other" for n in MCP_BOX_TOOLS},
    "mcp_search_tools": "other",
}
#: Every registered tool name (the standard tools, task, the toolkit's and
#: plan mode's output tools).
REGISTERED = frozenset(CLASSES)

#: Instructions that forbid changing files / running commands.
FORBID_WRITE = (
    "do not change any file",
    "do not change files",
    "plan only",
    "explain only",
    "read-only",
    "none of your tools changes files",
    "cannot change",
)
FORBID_COMMAND = (
    "do not run commands",
    "none of your tools runs commands",
    "cannot run commands",
)
EXECUTOR_SECTION = "# The executor's tools (not yours)\n"
#: False in review mode (approval.write "review"): edits are applied without
#: asking and the person keeps or undoes them after the run.
FALSE_IN_REVIEW = (
    "ask for approval",
    "asks for approval",
    "approve each edit",
    "needs the person's approval",
    "are not applied",
    "will not be applied",
    "is not applied until",
    "before they are applied",
)


def _config(tmp_path: Path, **tools: Any) -> dict[str, Any]:
    return {
        "storagePath": str(tmp_path / "store"),
        "gates": {"analyzer": {"enabled": False}},
        "tools": {"toolkits": [NOTES_PATH], **tools},
    }


def _named(text: str, name: str) -> bool:
    """Is the tool ``name`` mentioned: backticked, or (a snake_case name)
    as a word of its own. ``task`` as a bare word is ordinary English."""
    if f"`{name}`" in text:
        return True
    return "_" in name and re.search(rf"\b{re.escape(name)}\b", text) is not None


def check_contract(role: str, request: RecordedRequest, executor_tools: Sequence[str]) -> None:
    """The contract above, for one request of ``role``."""
    system = request.system
    # A request whose tool choice is none can call nothing it carries.
    offered = set() if request.tool_choice == "none" else set(request.tools)
    assert AGENTS_MD in system, f"{role}: AGENTS.md does not reach it"
    for path, text in MORE_INSTRUCTIONS.items():
        assert text in system, f"{role}: {path} does not reach it"
    assert '<project_instructions file="lib/AGENTS.md" applies_to="lib/">' in system, role
    named_as_executors: set[str] = set()
    if role in ("planner", "summariser"):
        head, _, overview = system.partition(EXECUTOR_SECTION)
        overview = overview.split("\n\n# ")[0]
        named_as_executors = {n for n in REGISTERED if _named(overview, n)}
        assert named_as_executors == set(executor_tools) - NON_WORK_TOOLS, role
        system = head + system[len(head) + len(EXECUTOR_SECTION) + len(overview) :]
    for name in offered:
        assert f"`{name}`" in system, f"{role}: offered {name} is not named"
    for name in REGISTERED - offered:
        assert not _named(system, name), f"{role}: names {name}, which it is not offered"
    lower = system.lower()
    classes = {CLASSES[n] for n in offered}
    if "write" in classes:
        assert not [p for p in FORBID_WRITE if p in lower], f"{role}: forbids its write tools"
    elif role not in ("planner", "summariser"):
        assert NO_WRITE in system, f"{role}: not told it cannot change files"
    if "command" in classes:
        assert not [p for p in FORBID_COMMAND if p in lower], f"{role}: forbids its commands"
    elif role not in ("planner", "summariser"):
        assert NO_COMMAND in system, f"{role}: not told it cannot run commands"
    has_notes = bool(offered & set(NOTES_TOOLS))
    assert ("<notes_rules>" in system) is has_notes, f"{role}: toolkit rules vs tools"
    if has_notes:
        assert "never store secrets in a note" in system


# ----------------------------------------------------------------- hosts

Host = Callable[[Path, ReplayModel, str, dict[str, Any]], Any]


@dataclass
class Ran:
    result: RunResult
    requests: list[RecordedRequest]
    executor_tools: list[str]


@asynccontextmanager
async def serve_host(
    root: Path, model: ReplayModel, mode: str, config: dict[str, Any]
) -> AsyncIterator[Callable[[str], Any]]:
    """``rein serve``'s assembly: ReinServer.new_session and its run_prompt."""
    server = create_server()
    server.protocol._workspace = Workspace(root.as_uri())
    server.config = load_config(config, "test")
    server.model_factory = lambda _config: model
    session = server.new_session(mode=mode, title="t")

    async def prompt(text: str) -> Ran:
        result = await server.run_prompt(session, text)
        assert session.tools is not None
        return Ran(result, model.requests, session.tools.names())

    try:
        yield prompt
    finally:
        await server.shutdown_sessions()


@asynccontextmanager
async def run_host(
    root: Path, model: ReplayModel, mode: str, config: dict[str, Any]
) -> AsyncIterator[Callable[[str], Any]]:
    """``rein run``'s assembly: HeadlessSession (no analyzers, no watcher)."""
    async with HeadlessSession(
        root, model, load_config(config, "test"), analyzers=(), mode=mode, watch=False
    ) as host:

        async def prompt(text: str) -> Ran:
            result = await host.prompt(text)
            tools = host.session.tools
            assert tools is not None
            return Ran(result, model.requests, tools.names())

        yield prompt


HOSTS = [pytest.param(serve_host, id="serve"), pytest.param(run_host, id="run")]


@asynccontextmanager
async def navigating_host(
    root: Path, model: ReplayModel, mode: str, config: dict[str, Any]
) -> AsyncIterator[Callable[[str], Any]]:
    """``rein run``'s assembly with basedpyright in its analyzer pool: the
    pool answers the navigation tools, so they are offered."""
    config = {**config, "gates": {"analyzer": {"enabled": True}}}
    basedpyright = next(s for s in DEFAULT_ANALYZERS if s.name == "basedpyright")
    async with HeadlessSession(
        root, model, load_config(config, "test"), analyzers=(basedpyright,), mode=mode, watch=False
    ) as host:

        async def prompt(text: str) -> Ran:
            result = await host.prompt(text)
            tools = host.session.tools
            assert tools is not None
            return Ran(result, model.requests, tools.names())

        yield prompt


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "AGENTS.md").write_text(AGENTS_MD + "\n")
    for path, text in MORE_INSTRUCTIONS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text + "\n")
    (root / "app.py").write_text("x = 1\n")
    return root


async def run_script(
    host: Any, root: Path, mode: str, turns: list[dict[str, Any]], config: dict[str, Any]
) -> Ran:
    model = ReplayModel(turns)
    async with host(root, model, mode, config) as prompt:
        ran: Ran = await prompt("Look at app.py")
    assert ran.result.status == "completed", ran.result.error
    assert model.remaining == 0
    return ran


def read(path: str = "app.py") -> dict[str, Any]:
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}


def task(tools: Sequence[str] | None) -> dict[str, Any]:
    args: dict[str, Any] = {"description": "look around", "prompt": "Report what app.py holds."}
    if tools is not None:
        args["tools"] = list(tools)
    return {"tool_calls": [{"name": "task", "arguments": args}]}


def complete(step: str) -> dict[str, Any]:
    args = {"step_id": step, "success": True, "summary": "read it"}
    return {"tool_calls": [{"name": "complete_step", "arguments": args}]}


# ----------------------------------------------------------------- roles


@pytest.mark.parametrize("host", HOSTS)
async def test_agent_and_explainer(host: Any, project: Path, tmp_path: Path) -> None:
    config = _config(tmp_path)
    agent = await run_script(host, project, "agent", [read(), {"text": "x is 1."}], config)
    check_contract("agent", agent.requests[0], agent.executor_tools)
    assert {"edit_file", "run_command", "task", "write_note"} <= set(agent.requests[0].tools)
    explainer = await run_script(host, project, "explain", [{"text": "x is 1."}], config)
    check_contract("explainer", explainer.requests[0], explainer.executor_tools)
    assert "read_note" in explainer.requests[0].tools
    assert "write_note" not in explainer.requests[0].tools


@pytest.mark.parametrize("host", HOSTS)
async def test_planner_executor_and_summariser(host: Any, project: Path, tmp_path: Path) -> None:
    steps = [{"id": "s1", "description": "read app.py"}, {"id": "s2", "description": "again"}]
    turns = [
        {"tool_calls": [{"name": "submit_plan", "arguments": {"steps": steps}}]},
        read(),
        complete("s1"),
        read(),
        complete("s2"),
        {"expect": {"tool_choice": "none"}, "text": "Read app.py twice."},
    ]
    ran = await run_script(host, project, "plan", turns, _config(tmp_path))
    roles = ["planner", "executor", "executor", "executor", "executor", "summariser"]
    assert len(ran.requests) == len(roles)
    for role, request in zip(roles, ran.requests, strict=True):
        check_contract(role, request, ran.executor_tools)
    assert ran.requests[0].tools == ["submit_plan"]
    assert "complete_step" in ran.requests[1].tools and "edit_file" in ran.requests[1].tools


@pytest.mark.parametrize("host", HOSTS)
async def test_review_mode_prompts_say_nothing_false_about_edits(
    host: Any, project: Path, tmp_path: Path
) -> None:
    """In review mode the edits are applied as usual (and reviewed after the
    run): the roles are offered the same tools, keep the contract, and
    nothing says edits wait for an approval."""
    review = {**_config(tmp_path), "approval": {"write": "review"}}
    ran = await run_script(host, project, "agent", [read(), {"text": "x is 1."}], review)
    allowed = await run_script(
        host, project, "agent", [read(), {"text": "x is 1."}], _config(tmp_path)
    )
    request = ran.requests[0]
    check_contract("agent", request, ran.executor_tools)
    assert {"edit_file", "write_file"} <= set(request.tools)
    assert request.tools == allowed.requests[0].tools
    lower = request.system.lower()
    assert not [p for p in FALSE_IN_REVIEW if p in lower]


#: Tool subsets a subagent is given (None: the default, the read-only tools).
SUBSETS: list[tuple[str, ...] | None] = [
    None,
    tuple(DEFAULT_TOOL_NAMES),
    ("read_file", "edit_file"),
    ("read_file", "run_command"),
    ("grep", "write_note"),
    ("read_note",),
    *((name,) for name in DEFAULT_TOOL_NAMES),
]


@pytest.mark.parametrize("host", HOSTS)
async def test_subagents_with_every_kind_of_tool_subset(
    host: Any, project: Path, tmp_path: Path
) -> None:
    # One parent turn per child, then the child's answer, then the parent's.
    turns: list[dict[str, Any]] = []
    for subset in SUBSETS:
        turns += [task(subset), {"text": "app.py sets x."}]
    turns.append({"text": "Done."})
    ran = await run_script(host, project, "agent", turns, _config(tmp_path))
    children = ran.requests[1:-1:2]
    assert len(children) == len(SUBSETS)
    for subset, request in zip(SUBSETS, children, strict=True):
        # At the default depth (2) a child may start children of its own:
        # it keeps `task` when asked for it, and gets it by default.
        expected = (
            set(subset)
            if subset is not None
            else {"read_file", "list_dir", "glob", "grep", "get_diagnostics", "ask_user", "task"}
        )
        assert set(request.tools) == expected
        assert request.system.startswith("You are a subagent of Rein")
        check_contract("subagent", request, ran.executor_tools)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    subset=st.lists(
        st.sampled_from([*DEFAULT_TOOL_NAMES, *NOTES_TOOLS]), min_size=1, max_size=11, unique=True
    )
)
async def test_a_subagent_given_any_tool_subset_keeps_the_contract(
    project: Path, tmp_path: Path, subset: list[str]
) -> None:
    turns = [task(subset), {"text": "app.py sets x."}, {"text": "Done."}]
    ran = await run_script(run_host, project, "agent", turns, _config(tmp_path))
    child = ran.requests[1]
    assert set(child.tools) == set(subset)
    check_contract("subagent", child, ran.executor_tools)


@pytest.mark.parametrize("host", HOSTS)
async def test_disabled_tools_leave_every_role_prompt(
    host: Any, project: Path, tmp_path: Path
) -> None:
    config = _config(tmp_path, disabled=["run_command", "edit_file", "write_file"])
    ran = await run_script(host, project, "agent", [read(), {"text": "x is 1."}], config)
    check_contract("agent", ran.requests[0], ran.executor_tools)
    assert "run_command" not in ran.requests[0].tools


@pytest.mark.parametrize("host", HOSTS)
async def test_skills_and_custom_agents_are_named_where_offered(
    host: Any, project: Path, tmp_path: Path
) -> None:
    """A workspace with a skill and a read-only custom agent: the agent's
    prompt names `skill` with the skills, and `task` with the agents; the
    custom agent's child is offered its tools only and keeps the contract;
    the explainer (no `task`) lists no agent."""
    setup_repo(project)
    config = {**_config(tmp_path), "setup": {"userFolders": False}}
    start = {"description": "read", "prompt": "Report on app.py.", "agent": "reader"}
    turns = [
        {"tool_calls": [{"name": "task", "arguments": start}]},
        {"text": "app.py greets."},
        {"text": "Done."},
    ]
    ran = await run_script(host, project, "agent", turns, config)
    parent, child = ran.requests[0], ran.requests[1]
    check_contract("agent", parent, ran.executor_tools)
    assert {"skill", "task"} <= set(parent.tools)
    assert "  - greeting: Greets people the house way." in parent.system
    assert "  - reader: Reads code and reports" in parent.system
    assert set(child.tools) == {"read_file", "grep", "glob"}
    check_contract("subagent", child, ran.executor_tools)
    assert child.system.endswith(
        "# Agent: reader\nYou are a careful reader. Report what you find, with file names."
    )
    explainer = await run_script(host, project, "explain", [{"text": "x is 1."}], config)
    check_contract("explainer", explainer.requests[0], explainer.executor_tools)
    assert "skill" in explainer.requests[0].tools
    assert "reader" not in explainer.requests[0].system


async def test_the_navigation_tools_are_named_in_every_role_that_is_offered_them(
    project: Path, tmp_path: Path
) -> None:
    """With a language server to ask, the agent, its default subagent and
    the explainer are offered the navigation tools (rename only where files
    may change), and their prompts name exactly what they are offered."""
    config = _config(tmp_path)
    turns = [task(None), {"text": "app.py sets x."}, {"text": "x is 1."}]
    ran = await run_script(navigating_host, project, "agent", turns, config)
    agent, child = ran.requests[0], ran.requests[1]
    assert {*NAVIGATION_READ_TOOLS, "rename_symbol"} <= set(agent.tools)
    assert set(NAVIGATION_READ_TOOLS) <= set(child.tools)
    assert "rename_symbol" not in child.tools
    check_contract("agent", agent, ran.executor_tools)
    check_contract("subagent", child, ran.executor_tools)
    explainer = await run_script(navigating_host, project, "explain", [{"text": "x"}], config)
    request = explainer.requests[0]
    assert set(NAVIGATION_READ_TOOLS) <= set(request.tools)
    assert "rename_symbol" not in request.tools
    check_contract("explainer", request, explainer.executor_tools)
    # Without one (no analyzer that navigates) none of them is offered or named.
    plain = await run_script(run_host, project, "agent", [{"text": "x"}], config)
    assert not set(plain.requests[0].tools) & {*NAVIGATION_READ_TOOLS, "rename_symbol"}
    check_contract("agent", plain.requests[0], plain.executor_tools)


# ------------------------------------------------- the contract can fail


@pytest.mark.parametrize("host", HOSTS)
async def test_mcp_tools_are_named_when_offered_and_only_then(
    host: Any, project: Path, tmp_path: Path
) -> None:
    """A server's tools are offered and named, its excluded ones are not,
    and a tool added by notifications/tools/list_changed is named from the
    turn it is offered on."""
    box = {
        "command": sys.executable,
        "args": [str(TOOLBOX)],
        "includeTools": ["echo", "grow", "late_tool"],
    }
    config = {**_config(tmp_path), "mcp": {"servers": {"box": box}}, "approval": {"mcp": "allow"}}
    turns = [
        {"tool_calls": [{"name": "mcp__box__grow", "arguments": {}}]},
        {"tool_calls": [{"name": "mcp__box__late_tool", "arguments": {}}]},
        {"text": "done"},
    ]
    ran = await run_script(host, project, "agent", turns, config)
    first, second = ran.requests[0], ran.requests[1]
    assert {"mcp__box__echo", "mcp__box__grow"} <= set(first.tools)
    assert "mcp__box__late_tool" not in first.tools
    assert "mcp__box__late_tool" in second.tools
    assert "mcp__box__hang" not in second.tools
    for request in ran.requests:
        check_contract("agent", request, ran.executor_tools)
    # Explain mode is read-only: no MCP tool is offered (or named).
    explainer = await run_script(host, project, "explain", [{"text": "x is 1."}], config)
    assert not [t for t in explainer.requests[0].tools if t.startswith("mcp")]
    check_contract("explainer", explainer.requests[0], explainer.executor_tools)


@pytest.mark.parametrize("host", HOSTS)
async def test_the_planner_plans_with_the_executors_mcp_tools(
    host: Any, project: Path, tmp_path: Path
) -> None:
    box = {"command": sys.executable, "args": [str(TOOLBOX)], "includeTools": ["echo"]}
    config = {**_config(tmp_path), "mcp": {"servers": {"box": box}}, "approval": {"mcp": "allow"}}
    steps = [{"id": "s1", "description": "echo hi"}]
    turns = [
        {"tool_calls": [{"name": "submit_plan", "arguments": {"steps": steps}}]},
        {"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "hi"}}]},
        complete("s1"),
    ]
    ran = await run_script(host, project, "plan", turns, config)
    planner = ran.requests[0]
    assert "- `mcp__box__echo`: " in planner.system
    assert "mcp__box__echo" in ran.requests[1].tools
    roles = ["planner", "executor", "executor"]
    for role, request in zip(roles, ran.requests, strict=True):
        check_contract(role, request, ran.executor_tools)


def test_the_contract_catches_each_kind_of_breach() -> None:
    good = RecordedRequest(
        system=f"Use `read_file`. None of your tools changes files: {NO_WRITE} {NO_COMMAND}\n"
        + AGENTS_MD
        + "\n".join(MORE_INSTRUCTIONS.values())
        + '\n<project_instructions file="lib/AGENTS.md" applies_to="lib/">',
        messages=[],
        tools=["read_file"],
        tool_choice=None,
    )
    check_contract("subagent", good, [])
    breaches = {
        "not offered": good.system + " Then call edit_file.",
        "AGENTS.md": good.system.replace(AGENTS_MD, ""),
        "CLAUDE.md": good.system.replace(MORE_INSTRUCTIONS["CLAUDE.md"], ""),
        "nested scope": good.system.replace(' applies_to="lib/"', ""),
        "rules": good.system + "\n<notes_rules>\nx\n</notes_rules>",
    }
    for what, system in breaches.items():
        with pytest.raises(AssertionError):
            check_contract("subagent", _with(good, system=system), [])
            pytest.fail(f"the {what} breach passed")
    writer = _with(good, tools=["read_file", "edit_file"], system=good.system + " `edit_file`")
    with pytest.raises(AssertionError, match="forbids its write tools"):
        check_contract("subagent", writer, [])
    # A tool a request carries but cannot call (tool choice none) is not offered.
    uncallable = _with(good, tool_choice="none")
    with pytest.raises(AssertionError, match="names read_file, which it is not offered"):
        check_contract("subagent", uncallable, [])
    unnamed = _with(good, tools=["read_file", "grep"])
    with pytest.raises(AssertionError, match="grep is not named"):
        check_contract("subagent", unnamed, [])


def _with(request: RecordedRequest, **change: Any) -> RecordedRequest:
    return dataclasses.replace(request, **change)


@pytest.mark.parametrize("host", HOSTS)
async def test_the_instruction_files_setting_decides_what_reaches_the_prompt(
    host: Any, project: Path, tmp_path: Path
) -> None:
    config = {**_config(tmp_path), "instructions": {"files": ["CLAUDE.md"]}}
    ran = await run_script(host, project, "agent", [{"text": "x is 1."}], config)
    system = ran.requests[0].system
    assert MORE_INSTRUCTIONS["CLAUDE.md"] in system
    assert AGENTS_MD not in system and MORE_INSTRUCTIONS["lib/AGENTS.md"] not in system
