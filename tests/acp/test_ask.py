"""``ask_user`` over ACP (``rein.acp.ask``): the question is said as an agent
message and the run ends waiting; the next prompt is the answer. A real
Agent with a scripted model shows the waiting state."""

from __future__ import annotations

import anyio
import pytest

from rein.acp.ask import ClientUserChannel, question_message
from rein.harness import Agent
from rein.harness.tools import ToolEnvironment
from rein.providers.replay import ReplayModel
from rein.tools.ask_user import AskUserTool
from tests.fakes.acp_client import FakeAcpClient, FakeClientLink
from tests.fakes.clock import run_in_virtual_time


class Told:
    def __init__(self) -> None:
        self.messages: list[str] = []

    async def __call__(self, text: str) -> None:
        self.messages.append(text)


def channel(client: FakeAcpClient, tell: Told, **link: object) -> ClientUserChannel:
    return ClientUserChannel(FakeClientLink(client, **link), "sess-1", tell)  # type: ignore[arg-type]


@pytest.mark.parametrize("elicitation", [False, True], ids=["plain", "advertises-elicitation"])
async def test_the_question_is_said_and_there_is_no_answer_now(elicitation: bool) -> None:
    client = FakeAcpClient()
    told = Told()
    answer = await channel(client, told, elicitation=elicitation).ask("  Which port?  ")
    assert answer is None
    assert told.messages == [question_message("Which port?")]
    assert "**Question:** Which port?" in told.messages[0]
    # Elicitation is an unstable draft of the protocol: never used.
    assert client.calls == []


async def test_the_run_waits_and_the_next_prompt_answers() -> None:
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
                    "last_message_contains": "The person answered: Postgres",
                },
                "text": "Using Postgres.",
            },
        ]
    )
    told = Told()
    agent = Agent(
        model,
        tools=[AskUserTool()],
        env=ToolEnvironment(user=channel(FakeAcpClient(), told)),
    )
    first = await agent.prompt("set up storage")
    assert first.status == "waiting"
    assert agent.state.status == "waiting"
    assert told.messages == [question_message("SQLite or Postgres?")]
    second = await agent.prompt("Postgres")
    assert second.status == "completed", second.error
    assert second.text == "Using Postgres."
    assert told.messages == [question_message("SQLite or Postgres?")]  # asked once


def test_a_message_that_cannot_be_sent_still_ends_waiting() -> None:
    async def hangs(text: str) -> None:
        await anyio.sleep_forever()

    async def fails(text: str) -> None:
        raise ConnectionError("Connection closed")

    async def main() -> None:
        for tell in (hangs, fails):
            user = ClientUserChannel(FakeClientLink(FakeAcpClient()), "sess-1", tell)  # type: ignore[arg-type]
            assert await user.ask("Which port?") is None
        assert anyio.current_time() == pytest.approx(30)  # the hung one: its bound

    run_in_virtual_time(main)
