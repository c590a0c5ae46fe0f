"""The Approver and UserChannel ports: scripted answers to the person's dialogs."""

from __future__ import annotations

from collections.abc import Sequence

from rein.harness.ports import (
    ApprovalAnswer,
    ApprovalRequest,
)


class FakeApprover:
    """Answers every request with ``answer`` (an ApprovalAnswer says to
    remember the offered rules)."""

    def __init__(self, answer: bool | ApprovalAnswer = True) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        self.requests.append(request)
        return self.answer


class FailingApprover:
    """An Approver whose client is gone: ``confirm`` raises."""

    def __init__(self, message: str = "the client went away") -> None:
        self.message = message
        self.requests: list[ApprovalRequest] = []

    async def confirm(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        raise ConnectionError(self.message)


class FakeUserChannel:
    def __init__(self, answers: Sequence[str | None] = ()) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None
