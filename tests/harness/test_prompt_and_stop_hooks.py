"""The Agent's ``on_user_prompt`` and ``on_stop`` hooks: a prompt refused
never reaches the model nor the transcript, added context follows the
prompt in the request, and ``on_stop`` keeps a run going with its text."""

from __future__ import annotations

from rein.harness import Agent
from rein.harness.hooks import Hooks, PromptVerdict, StopInfo
from rein.harness.messages import UserMessage
from rein.harness.ports import ModelRequest
from tests.fakes.models import FunctionModel, assistant


async def test_a_refused_prompt_ends_the_run_before_the_model_and_the_transcript() -> None:
    model = FunctionModel(lambda request: assistant("never"))
    agent = Agent(
        model, hooks=Hooks(on_user_prompt=lambda prompt: PromptVerdict(block=f"no: {prompt}"))
    )
    result = await agent.prompt("deploy now")
    assert (result.status, result.error) == ("failed", "no: deploy now")
    assert model.requests == []
    assert agent.messages == []


async def test_context_follows_the_prompt_and_stop_keeps_the_run_going_once() -> None:
    def reply(request: ModelRequest) -> object:
        return assistant(f"answer {len([m for m in request.messages if m.role == 'user'])}")

    seen: list[StopInfo] = []

    def on_stop(info: StopInfo) -> str | None:
        seen.append(info)
        return "check the tests too" if info.continuations == 0 else None

    model = FunctionModel(reply)  # type: ignore[arg-type]
    agent = Agent(
        model,
        hooks=Hooks(
            on_user_prompt=lambda prompt: PromptVerdict(context="branch: main"),
            on_stop=on_stop,
        ),
    )
    result = await agent.prompt("fix it")
    assert result.status == "completed"
    first, second = model.requests
    assert [(m.content, m.origin) for m in first.messages if isinstance(m, UserMessage)] == [
        ("fix it", "prompt"),
        ("branch: main", "hook"),
    ]
    assert isinstance(second.messages[-1], UserMessage)
    assert (second.messages[-1].content, second.messages[-1].origin) == (
        "check the tests too",
        "hook",
    )
    assert [(s.continuations, s.last_text) for s in seen] == [(0, "answer 2"), (1, "answer 3")]
