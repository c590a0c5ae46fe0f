"""The core's side of sessions: persistence hooks, ask-user waiting, and the
rollback of a transcript a crash left behind."""

from __future__ import annotations

from rein.harness import Agent, AssistantMessage, ToolResultMessage, UserMessage
from rein.harness.agent import INTERRUPTED, dangling_tool_calls, repair_transcript
from rein.harness.messages import TextPart, ToolCall
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.ask_user import AskUserTool
from tests.fakes.approvals import FakeUserChannel
from tests.fakes.persistence import MemoryPersistence
from tests.fakes.tools import EchoTool


async def test_every_message_is_committed_before_the_next_model_call() -> None:
    persistence = MemoryPersistence()
    seen_committed: list[int] = []
    model = ReplayModel(
        [{"tool_calls": [{"name": "echo", "arguments": {"text": "a"}}]}, {"text": "done"}]
    )
    original = model.stream

    def stream(request):
        seen_committed.append(len(persistence.committed))
        assert persistence.queued == [], "a message was not committed before the model call"
        return original(request)

    model.stream = stream  # type: ignore[method-assign]
    agent = Agent(model, tools=[EchoTool()], persistence=persistence)
    await agent.prompt("go")
    assert seen_committed == [1, 3]  # prompt; prompt + assistant + tool result
    assert persistence.committed == list(agent.messages)


async def test_an_unanswered_question_ends_the_run_waiting_and_the_next_prompt_answers_it() -> None:
    persistence = MemoryPersistence()
    model = ReplayModel(
        [
            {
                "tool_calls": [
                    {"name": "ask_user", "arguments": {"question": "SQLite or Postgres?"}}
                ]
            },
            {
                "expect": {
                    "last_role": "tool",
                    "last_message_contains": "The person answered: SQLite",
                },
                "text": "Using SQLite.",
            },
        ]
    )
    agent = Agent(
        model,
        tools=[AskUserTool()],
        env=ToolEnvironment(user=FakeUserChannel([None])),
        persistence=persistence,
    )
    first = await agent.prompt("set up storage")
    assert first.status == "waiting"
    assert "SQLite or Postgres?" in (first.error or "")
    assert agent.waiting_for == first.waiting_for is not None
    assert dangling_tool_calls(agent.messages) == []  # a placeholder result keeps pairing
    second = await agent.prompt("SQLite")
    assert second.status == "completed", second.error
    assert second.text == "Using SQLite."
    # The answer replaced the placeholder; no extra user message was added.
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "assistant"]
    assert (
        persistence.replaced and persistence.replaced[0][1].content == "The person answered: SQLite"
    )
    assert persistence.committed == list(agent.messages)


def test_repair_transcript_answers_dangling_calls_in_place() -> None:
    calls = (ToolCall(id="a", name="read_file"), ToolCall(id="b", name="run_command"))
    messages = [
        UserMessage(content="go"),
        AssistantMessage(content=(TextPart(text="two calls"), *calls)),
        ToolResultMessage(tool_call_id="a", tool_name="read_file", content="ok"),
    ]
    repaired, added = repair_transcript(messages)
    assert added == 1
    assert dangling_tool_calls(repaired) == []
    assert repaired[-1] == ToolResultMessage(
        tool_call_id="b", tool_name="run_command", content=INTERRUPTED, is_error=True
    )
    again, added_again = repair_transcript(repaired)
    assert again == repaired and added_again == 0


async def test_a_repaired_transcript_can_be_continued() -> None:
    messages = [
        UserMessage(content="go"),
        AssistantMessage(content=(ToolCall(id="x", name="echo", arguments={"text": "hi"}),)),
    ]
    repaired, _ = repair_transcript(messages)
    model = ReplayModel(
        [{"expect": {"messages_contain": ["Interrupted: the session stopped"]}, "text": "resumed"}]
    )
    agent = Agent(model, tools=[EchoTool()], messages=repaired)
    result = await agent.prompt("please continue")
    assert result.status == "completed" and result.text == "resumed"
