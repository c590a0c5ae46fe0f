"""The eval scenarios. Each drives the real harness; see rein.evals."""

from __future__ import annotations

from typing import Any

from rein.config import load_config
from rein.evals import Outcome, Rig, scenario
from rein.harness import Agent, HarnessConfig, ToolResultMessage, UserMessage
from rein.harness.agent import dangling_tool_calls
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.plan_act import PlanActFlow, planner_system_prompt, toolkit_overview
from rein.harness.ports import ModelOptions
from rein.harness.subagents import SubagentSpawner
from rein.harness.tools import ToolEnvironment
from rein.headless.disk_workspace import DiskWorkspace
from rein.providers.replay import ReplayModel
from rein.tools.registry import READ_ONLY_TOOLS, default_tools
from rein.tools.task import TaskTool

APP = 'def greet(name: str) -> str:\n    return f"hello {name}"\n'


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


class Events(list[Any]):
    def __call__(self, event: Any) -> None:
        self.append(event)


def when(agent_: Agent, predicate: Any, action: Any) -> None:
    """Run ``action`` once, synchronously, on the first event matching
    ``predicate`` (no polling, no sleeps)."""
    fired = False

    def listener(event: Any) -> None:
        nonlocal fired
        if not fired and predicate(event):
            fired = True
            action()

    agent_.subscribe(listener)


def workspace(rig: Rig, files: dict[str, str] | None = None) -> ToolEnvironment:
    for rel, text in (files or {"app.py": APP}).items():
        path = rig.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    disk = DiskWorkspace(rig.root)
    return ToolEnvironment(
        workspace=TrackedWorkspace(disk, MutationLog()),
        settings={"approval": {"command": "allow"}},
    )


def agent(
    rig: Rig, turns: list[dict[str, Any]], *, files: dict[str, str] | None = None, **config: Any
) -> tuple[Agent, ReplayModel, Events]:
    env = workspace(rig, files)
    model = ReplayModel(turns)
    tools = default_tools(env.settings)
    a = Agent(model, tools=tools, env=env, config=HarnessConfig(**config))
    events = Events()
    a.subscribe(events)
    return a, model, events


def outcome(result: Any, model: ReplayModel, events: Events, **extra: Any) -> Outcome:
    return Outcome(
        status=result.status, model_calls=len(model.requests), events=list(events), **extra
    )


def last_tool(agent_: Agent) -> ToolResultMessage:
    return [m for m in agent_.messages if isinstance(m, ToolResultMessage)][-1]


# --------------------------------------------------------------- agent mode


@scenario("agent", budget=1)
async def eval_plain_answer(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [{"text": "Paris."}])
    result = await a.prompt("capital of France?")
    return outcome(result, model, events, check=result.text == "Paris.")


@scenario("agent", budget=2)
async def eval_read_then_answer(rig: Rig) -> Outcome:
    a, model, events = agent(
        rig,
        [
            call("read_file", path="app.py"),
            {"expect": {"last_message_contains": "def greet"}, "text": "It greets."},
        ],
    )
    result = await a.prompt("what does app.py do?")
    return outcome(result, model, events)


@scenario("agent", budget=2)
async def eval_parallel_calls(rig: Rig) -> Outcome:
    turns: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "app.py"}},
                {"name": "list_dir", "arguments": {}},
            ]
        },
        {"text": "done"},
    ]
    a, model, events = agent(rig, turns)
    result = await a.prompt("look")
    results = [m for m in a.messages if isinstance(m, ToolResultMessage)]
    return outcome(
        result,
        model,
        events,
        check=len(results) == 2 and not any(r.is_error for r in results),
        why="two results in call order",
    )


@scenario("agent", budget=3)
async def eval_unknown_tool_recovery(rig: Rig) -> Outcome:
    turns = [
        call("read_files", path="app.py"),
        {"expect": {"last_message_contains": "Unknown tool"}, **call("read_file", path="app.py")},
        {"text": "ok"},
    ]
    a, model, events = agent(rig, turns)
    return outcome(await a.prompt("read"), model, events)


@scenario("agent", budget=3)
async def eval_invalid_arguments_repair(rig: Rig) -> Outcome:
    turns = [
        call("read_file", file="app.py"),
        {
            "expect": {"last_message_contains": "path: Field required"},
            **call("read_file", path="app.py"),
        },
        {"text": "ok"},
    ]
    a, model, events = agent(rig, turns)
    return outcome(await a.prompt("read"), model, events)


@scenario("agent", budget=3)
async def eval_edit_not_found_then_reread(rig: Rig) -> Outcome:
    turns = [
        call("edit_file", path="app.py", old_string="hullo", new_string="hi"),
        {
            "expect": {"last_message_contains": "not found"},
            **call("edit_file", path="app.py", old_string="hello", new_string="hi"),
        },
        {"text": "changed"},
    ]
    a, model, events = agent(rig, turns)
    result = await a.prompt("say hi")
    return outcome(
        result,
        model,
        events,
        check="hi {name}" in (rig.root / "app.py").read_text(),
        why="the second edit landed",
    )


@scenario("agent", budget=2)
async def eval_steering_honoured(rig: Rig) -> Outcome:
    first: dict[str, Any] = {"text": "working", **call("read_file", path="app.py")}
    a, model, events = agent(
        rig,
        [
            first,
            {"expect": {"last_message_contains": "use pathlib"}, "text": "switched"},
        ],
    )

    when(a, lambda e: e.type == "turn_start", lambda: a.steer("use pathlib"))
    result = await a.prompt("go")
    honoured = any(e.type == "steering_applied" for e in events) and result.status == "completed"
    return outcome(result, model, events, steering_honoured=honoured)


@scenario("agent", budget=2)
async def eval_follow_up(rig: Rig) -> Outcome:
    a, model, events = agent(
        rig,
        [
            {"text": "one", "delay": 0.05},
            {"expect": {"last_message_contains": "and two"}, "text": "two"},
        ],
    )
    a.follow_up("and two")
    result = await a.prompt("one")
    return outcome(
        result,
        model,
        events,
        check=result.text == "two" and sum(e.type == "run_start" for e in events) == 2,
    )


@scenario("agent", budget=1)
async def eval_abort_mid_tool(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [call("run_command", command="sleep 30")])

    when(a, lambda e: e.type == "tool_call_start", lambda: a.abort("stop"))
    result = await a.prompt("wait")
    return outcome(
        result,
        model,
        events,
        expect_status="aborted",
        check=dangling_tool_calls(a.messages) == [],
        why="every call answered",
    )


@scenario("agent", budget=2)
async def eval_empty_reply_retried(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [{"text": ""}, {"text": "real"}])
    result = await a.prompt("x")
    return outcome(result, model, events, check=result.text == "real")


@scenario("agent", budget=3)
async def eval_turn_limit(rig: Rig) -> Outcome:
    a, model, events = agent(rig, [call("list_dir")] * 5, max_model_turns_per_run=3)
    result = await a.prompt("loop")
    return outcome(
        result, model, events, expect_status="failed", check="3 model turns" in (result.error or "")
    )


@scenario("agent", budget=8)
async def eval_breaker_stops_repeats(rig: Rig) -> Outcome:
    turns = [call("read_file", path="missing.py")] * 7 + [{"text": "giving up"}]
    a, model, events = agent(rig, turns)
    result = await a.prompt("read missing")
    nudges = [m for m in a.messages if isinstance(m, UserMessage) and m.origin == "nudge"]
    refused = "will not be executed again" in last_tool(a).content
    return outcome(
        result, model, events, check=len(nudges) == 1 and refused, why="a note at 3, a refusal at 6"
    )


@scenario("agent", budget=13)
async def eval_context_compaction(rig: Rig) -> Outcome:
    body = "\n".join(f"line {j} " + "x" * 50 for j in range(100))
    big = {f"f{i}.txt": f"file {i}\n{body}\n" for i in range(10)}
    turns = [call("read_file", path=f"f{i}.txt") for i in range(10)] + [{"text": "read them all"}]
    a, model, events = agent(rig, turns, files=big, max_context_tokens=12000)
    result = await a.prompt("read all")
    compactions = [e for e in events if e.type == "compaction"]
    return outcome(
        result,
        model,
        events,
        check=bool(compactions) and dangling_tool_calls(a.messages) == [],
        why="elided and paired",
    )


@scenario("agent", budget=2)
async def eval_ask_user_waiting(rig: Rig) -> Outcome:
    class Silent:
        async def ask(self, question: str) -> str | None:
            return None

    a, model, events = agent(
        rig,
        [
            call("ask_user", question="Which?"),
            {"expect": {"last_message_contains": "answered: this one"}, "text": "ok"},
        ],
    )
    a.env.user = Silent()
    waiting = await a.prompt("choose")
    result = await a.prompt("this one")
    return outcome(result, model, events, check=waiting.status == "waiting")


# -------------------------------------------------------------------- gates


def headless(rig: Rig, turns: list[dict[str, Any]], config: dict[str, Any] | None = None) -> Any:
    from rein.headless.host import HeadlessSession

    (rig.root / "app.py").write_text(APP)
    return HeadlessSession(rig.root, ReplayModel(turns), load_config(config or {}), watch=False)


@scenario("gates", budget=4)
async def eval_gate_real_analyzer_repair(rig: Rig) -> Outcome:
    turns = [
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
        {"text": "done"},
        {
            "expect": {"last_message_contains": "nmae"},
            **call("edit_file", path="app.py", old_string="{nmae}", new_string="{name}"),
        },
        {"text": "fixed"},
    ]
    events = Events()
    async with headless(rig, turns) as session:
        session.agent.subscribe(events)
        result = await session.prompt("edit")
        calls = len(session.agent.model.requests)
    return Outcome(result.status, calls, list(events), check=result.repair_attempts == 1)


@scenario("gates", budget=3)
async def eval_gate_budget_exhausted(rig: Rig) -> Outcome:
    turns = [
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
        {"text": "done"},
        {"text": "still done"},
    ]
    events = Events()
    async with headless(rig, turns, {"harness": {"maxRepairAttempts": 1}}) as session:
        session.agent.subscribe(events)
        result = await session.prompt("edit")
        calls = len(session.agent.model.requests)
    return Outcome(
        result.status, calls, list(events), expect_status="failed", check=bool(result.blockers)
    )


@scenario("gates", budget=2)
async def eval_dependency_install_once(rig: Rig) -> Outcome:
    (rig.root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    turns = [
        call(
            "edit_file",
            path="pyproject.toml",
            old_string='version = "1"',
            new_string='version = "2"',
        ),
        {"text": "bumped"},
    ]
    events = Events()
    config = {
        "gates": {"dependencies": {"commands": {"pyproject.toml": "echo ran >> installs.log"}}}
    }
    async with headless(rig, turns, config) as session:
        session.agent.subscribe(events)
        result = await session.prompt("bump")
        calls = len(session.agent.model.requests)
    runs = (rig.root / "installs.log").read_text().splitlines()
    return Outcome(
        result.status, calls, list(events), check=runs == ["ran"], why=f"installs: {runs}"
    )


# ----------------------------------------------------------------- plan-act


def plan(*steps: tuple[str, str]) -> dict[str, Any]:
    return call("submit_plan", steps=[{"id": i, "description": d} for i, d in steps])


def complete(step: str, success: bool = True, summary: str = "done") -> dict[str, Any]:
    return call("complete_step", step_id=step, success=success, summary=summary)


def flow(
    rig: Rig, planner_turns: list[dict[str, Any]], executor_turns: list[dict[str, Any]]
) -> tuple[PlanActFlow, ReplayModel, ReplayModel, Events]:
    env = workspace(rig)
    tools = default_tools(env.settings)
    pm, em = ReplayModel(planner_turns), ReplayModel(executor_turns)
    planner = Agent(
        pm,
        system_prompt=planner_system_prompt(toolkit_overview(tools)),
        options=ModelOptions(tool_choice="required"),
    )
    executor = Agent(em, tools=tools, env=env)
    events = Events()
    planner.subscribe(events)
    executor.subscribe(events)
    return PlanActFlow(planner, executor, events), pm, em, events


def flow_outcome(
    result: Any, pm: ReplayModel, em: ReplayModel, events: Events, **extra: Any
) -> Outcome:
    return Outcome(result.status, len(pm.requests) + len(em.requests), list(events), **extra)


@scenario("plan-act", budget=6)
async def eval_plan_two_steps(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "read"), ("s2", "list")), {"text": "summary"}],
        [call("read_file", path="app.py"), complete("s1"), call("list_dir"), complete("s2")],
    )
    result = await f.run("look around")
    states = [e.state for e in events if e.type == "plan_state"]
    return flow_outcome(
        result,
        pm,
        em,
        events,
        check=states == ["planning", "executing", "summarizing", "completed"],
        why=str(states),
    )


@scenario("plan-act", budget=1)
async def eval_plan_empty(rig: Rig) -> Outcome:
    f, pm, em, events = flow(rig, [plan()], [])
    result = await f.run("nothing")
    return flow_outcome(result, pm, em, events, check=em.requests == [])


@scenario("plan-act", budget=3)
async def eval_plan_single_step_no_summary(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "read"))],
        [call("read_file", path="app.py"), complete("s1", summary="read")],
    )
    result = await f.run("read")
    return flow_outcome(
        result,
        pm,
        em,
        events,
        check=not any(e.type == "plan_state" and e.state == "summarizing" for e in events),
    )


@scenario("plan-act", budget=4)
async def eval_plan_premature_complete_rejected(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "check"))],
        [complete("s1"), call("read_file", path="app.py"), complete("s1")],
    )
    result = await f.run("check")
    rejected = sum(
        1 for e in events if e.type == "tool_call_end" and e.name == "complete_step" and e.is_error
    )
    return flow_outcome(result, pm, em, events, check=rejected == 1)


@scenario("plan-act", budget=6)
async def eval_plan_replan_after_failure(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "old way")), plan(("s2", "new way"))],
        [
            call("list_dir"),
            complete("s1", success=False, summary="old way gone"),
            call("read_file", path="app.py"),
            complete("s2"),
        ],
    )
    result = await f.run("do it")
    return flow_outcome(result, pm, em, events, check=f.plan.replans == 1)


@scenario("plan-act", budget=4)
async def eval_plan_output_nudge(rig: Rig) -> Outcome:
    f, pm, em, events = flow(
        rig,
        [plan(("s1", "read"))],
        [call("read_file", path="app.py"), {"text": "done"}, complete("s1")],
    )
    result = await f.run("read")
    nudged = any(isinstance(m, UserMessage) and m.origin == "nudge" for m in f.executor.messages)
    return flow_outcome(result, pm, em, events, check=nudged)


# ---------------------------------------------------------------- subagents


@scenario("subagent", budget=4)
async def eval_subagent_answer(rig: Rig) -> Outcome:
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel([call("grep", pattern="greet"), {"text": "greet is in app.py"}])
    env.subagents = SubagentSpawner(child_model, tools, env, default_tools=READ_ONLY_TOOLS)
    tools.register(TaskTool())
    model = ReplayModel(
        [
            call("task", description="find greet", prompt="where is greet?"),
            {"expect": {"last_message_contains": "greet is in app.py"}, "text": "in app.py"},
        ]
    )
    a = Agent(model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)
    result = await a.prompt("where?")
    forwarded = [e for e in events if e.type == "subagent_activity"]
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        check=bool(forwarded),
    )


@scenario("subagent", budget=3)
async def eval_subagent_budget(rig: Rig) -> Outcome:
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel([call("list_dir")] * 3)
    env.subagents = SubagentSpawner(child_model, tools, env)
    tools.register(TaskTool())
    model = ReplayModel(
        [
            call("task", description="loop", prompt="loop", max_turns=1),
            {"expect": {"last_message_contains": "did not finish"}, "text": "ok"},
        ]
    )
    a = Agent(model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)
    result = await a.prompt("go")
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        check=last_tool(a).is_error,
    )


# --------------------------------------------------------------- providers


async def _over_http(turns: list[dict[str, Any]], prompt: str = "hi") -> tuple[Any, Any, Events]:
    from rein.providers._http import RetryPolicy
    from rein.providers.config import ModelConfig
    from rein.providers.mock_server import MockServer
    from rein.providers.openai import OpenAIModel

    events = Events()
    async with MockServer(turns) as server:
        config = ModelConfig(
            provider="openai", model="mock", base_url=server.url + "/v1", api_key_env=""
        )
        model = OpenAIModel(
            config, retry=RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.005)
        )
        a = Agent(model)
        a.subscribe(events)
        result = await a.prompt(prompt)
        return result, server, events


@scenario("provider", budget=2)
async def eval_provider_retry_then_success(rig: Rig) -> Outcome:
    result, server, events = await _over_http(
        [{"fault": {"kind": "status", "status": 429, "body": "slow down"}}, {"text": "hello"}]
    )
    return Outcome(result.status, len(server.requests), list(events), check=result.text == "hello")


@scenario("provider", budget=1)
async def eval_provider_cut_after_content(rig: Rig) -> Outcome:
    result, server, events = await _over_http(
        [
            {
                "text": "partial answer here",
                "chunk_size": 4,
                "fault": {"kind": "cut", "after_chunks": 2},
            }
        ]
    )
    return Outcome(
        result.status,
        len(server.requests),
        list(events),
        expect_status="failed",
        check="model error" in (result.error or ""),
    )


# ------------------------------------------------------------------ preview

_PREVIEW_APP = """import importlib, signal, sys, time, traceback
import settings

def load():
    importlib.reload(settings)
    if settings.THRESHOLD < 0:
        raise ValueError(f"threshold must not be negative, got {settings.THRESHOLD}")
    print(f"threshold is {settings.THRESHOLD}")
    print("ready", flush=True)

def on_hangup(signum, frame):
    try:
        load()
    except Exception:
        traceback.print_exc()

load()
signal.signal(signal.SIGHUP, on_hangup)
while True:
    time.sleep(3600)
"""


@scenario("preview", budget=4)
async def eval_preview_runtime_error_repaired(rig: Rig) -> Outcome:
    """Analyzer-clean code that crashes at run time: the preview's traceback
    reaches the model, the fix is loaded and observed clean."""
    import sys

    from rein.headless.host import HeadlessSession

    (rig.root / "app.py").write_text(_PREVIEW_APP)
    (rig.root / "settings.py").write_text("THRESHOLD = 3\n")
    config = load_config(
        {
            "gates": {
                "analyzer": {"enabled": False},
                "preview": {
                    "command": f"{sys.executable} app.py",
                    "reload": "signal",
                    "readiness": {"line": "^ready$"},
                    "observationWindowMs": 300,
                },
            }
        }
    )
    turns = [
        call(
            "edit_file", path="settings.py", old_string="THRESHOLD = 3", new_string="THRESHOLD = -1"
        ),
        {"text": "done"},
        {
            "expect": {"last_message_contains": "threshold must not be negative"},
            **call(
                "edit_file",
                path="settings.py",
                old_string="THRESHOLD = -1",
                new_string="THRESHOLD = 5",
            ),
        },
        {"text": "fixed"},
    ]
    model = ReplayModel(turns)
    events = Events()
    async with HeadlessSession(rig.root, model, config, watch=False) as session:
        session.subscribe(events)
        result = await session.prompt("make the threshold negative")
        running = session.preview.pid is not None
    return Outcome(
        result.status,
        len(model.requests),
        list(events),
        check=result.repair_attempts == 1 and running,
        why="one runtime repair, preview still running",
    )


# ------------------------------------------------- more plan-act, subagents


@scenario("plan-act", budget=8)
async def eval_plan_gates_after_last_step(rig: Rig) -> Outcome:
    """The plan's first step breaks the code; the gates (real analyzers) run
    only after the last step and the executor repairs it."""
    from rein.headless.host import HeadlessSession

    (rig.root / "app.py").write_text(APP)
    turns = [
        plan(("s1", "rename the variable"), ("s2", "check the file")),
        call("edit_file", path="app.py", old_string="{name}", new_string="{nmae}"),
        complete("s1"),
        call("read_file", path="app.py"),
        complete("s2"),
    ]
    turns.append(
        {
            "expect": {"last_message_contains": "nmae"},
            **call("edit_file", path="app.py", old_string="{nmae}", new_string="{name}"),
        }
    )
    turns.append(complete("s2", summary="fixed the typo the gate found"))
    turns.append({"text": "Renamed and checked."})
    model = ReplayModel(turns)
    events = Events()
    async with HeadlessSession(
        rig.root, model, load_config({}), mode="plan", watch=False
    ) as session:
        session.subscribe(events)
        result = await session.prompt("rename")
    gates_before_last = [
        e
        for e in events[
            : [
                i
                for i, e in enumerate(events)
                if e.type == "plan_updated" and e.reason == "step_started"
            ][-1]
        ]
        if e.type == "gate_start"
    ]
    return Outcome(
        result.status,
        len(model.requests),
        list(events),
        check=result.repair_attempts == 1 and not gates_before_last,
        why="gates only after the last step, one repair",
    )


@scenario("plan-act", budget=4)
async def eval_plan_waiting_resume(rig: Rig) -> Outcome:
    class Silent:
        async def ask(self, question: str) -> str | None:
            return None

    f, pm, em, events = flow(
        rig,
        [plan(("s1", "ask which file"))],
        [
            call("ask_user", question="Which file?"),
            {
                "expect": {"last_message_contains": "answered: app.py"},
                **call("read_file", path="app.py"),
            },
            complete("s1", summary="read app.py"),
        ],
    )
    f.executor.env.user = Silent()
    waiting = await f.run("read the file the person wants")
    result = await f.run("app.py")
    return flow_outcome(
        result, pm, em, events, check=waiting.status == "waiting" and result.text == "read app.py"
    )


@scenario("subagent", budget=2)
async def eval_subagent_abort(rig: Rig) -> Outcome:
    env = workspace(rig)
    tools = default_tools(env.settings)
    child_model = ReplayModel([call("run_command", command="sleep 30")])
    env.subagents = SubagentSpawner(child_model, tools, env, default_tools=["run_command"])
    tools.register(TaskTool())
    model = ReplayModel([call("task", description="slow", prompt="wait", tools=["run_command"])])
    a = Agent(model, tools=tools, env=env)
    events = Events()
    a.subscribe(events)

    when(
        a,
        lambda e: e.type == "subagent_activity" and e.event.get("type") == "tool_call_start",
        lambda: a.abort("stop"),
    )
    result = await a.prompt("go")
    child_end = [
        e.event
        for e in events
        if e.type == "subagent_activity" and e.event.get("type") == "run_end"
    ]
    ok = (
        bool(child_end)
        and child_end[0]["status"] == "aborted"
        and dangling_tool_calls(a.messages) == []
    )
    return Outcome(
        result.status,
        len(model.requests) + len(child_model.requests),
        list(events),
        expect_status="aborted",
        check=ok,
        why="the child was aborted with the parent",
    )
