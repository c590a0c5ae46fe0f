"""``rein/confirm`` as the editor approver sends and reads it: the offered
rules go out as ``rule`` and ``rules``, the wider choice as ``prefixRules``;
``remember`` (and ``prefix``) comes back as an
ApprovalAnswer, a value it cannot use is the plain approval."""

from __future__ import annotations

from typing import Any

import pytest

from rein.harness.ports import ApprovalAnswer, ApprovalRequest, ApprovalRule
from rein.lsp.editor_dialogs import EditorApprover
from tests.fakes.channel import FakeClientChannel

REQUEST = ApprovalRequest(
    tool="run_command",
    approval_class="command",
    title="Run: npm test && git status",
    detail="$ npm test && git status",
    rules=(ApprovalRule("command", "npm test"), ApprovalRule("command", "git status")),
    prefix_rules=(ApprovalRule("command", "npm test *"), ApprovalRule("command", "git status *")),
)


async def confirm(answer: Any, request: ApprovalRequest = REQUEST) -> tuple[Any, Any]:
    client = FakeClientChannel({"rein/confirm": [answer]})
    result = await EditorApprover(client, "ses_1").confirm(request)  # type: ignore[arg-type]
    return result, client.requests[0][1]


async def test_the_offered_rules_go_out_as_rule_and_rules() -> None:
    _, params = await confirm({"approved": True})
    assert params["rule"] == {"kind": "command", "pattern": "npm test"}
    assert params["rules"] == [
        {"kind": "command", "pattern": "npm test"},
        {"kind": "command", "pattern": "git status"},
    ]
    assert params["prefixRules"] == [
        {"kind": "command", "pattern": "npm test *"},
        {"kind": "command", "pattern": "git status *"},
    ]


async def test_a_request_without_rules_offers_none() -> None:
    plain = ApprovalRequest(tool="read_file", approval_class="read", title="Read .env", detail="")
    _, params = await confirm({"approved": True}, plain)
    assert "rule" not in params and "rules" not in params and "prefixRules" not in params


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            {"approved": True, "remember": "session"},
            ApprovalAnswer(approved=True, remember="session"),
            id="session",
        ),
        pytest.param(
            {"approved": True, "remember": "workspace"},
            ApprovalAnswer(approved=True, remember="workspace"),
            id="workspace",
        ),
        pytest.param(
            {"approved": True, "remember": "session", "prefix": True},
            ApprovalAnswer(approved=True, remember="session", prefix=True),
            id="prefix",
        ),
        pytest.param(
            {"approved": True, "remember": "session", "prefix": "yes"},
            ApprovalAnswer(approved=True, remember="session"),
            id="prefix-not-true",
        ),
        pytest.param({"approved": True, "remember": "forever"}, True, id="unknown-scope"),
        pytest.param({"approved": False, "remember": "workspace"}, False, id="declined"),
        pytest.param({"approved": True}, True, id="plain"),
    ],
)
async def test_remember_comes_back_as_an_approval_answer(answer: Any, expected: Any) -> None:
    result, _ = await confirm(answer)
    assert result == expected
