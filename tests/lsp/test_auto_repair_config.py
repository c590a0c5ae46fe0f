"""An auto-repair run's harness settings are the person's, with the budget
capped: nothing else they configured is dropped."""

from __future__ import annotations

from rein.config import load_config
from rein.harness import HarnessConfig
from rein.lsp.auto_repair import (
    REPAIR_MAX_MODEL_TURNS,
    REPAIR_MAX_REPAIR_ATTEMPTS,
    repair_config,
)


def test_the_persons_other_harness_settings_survive() -> None:
    user = load_config(
        {
            "harness": {
                "maxToolResultChars": 4_321,
                "toolExecution": "sequential",
                "maxContextTokens": 50_000,
                "toolTimeoutMs": 1_234,
                "maxModelTurnsPerRun": 80,
                "maxRepairAttempts": 5,
            }
        }
    ).harness
    repair = repair_config(user)
    assert repair.max_model_turns_per_run == REPAIR_MAX_MODEL_TURNS
    assert repair.max_repair_attempts == REPAIR_MAX_REPAIR_ATTEMPTS
    assert repair.max_tool_result_chars == 4_321
    assert repair.tool_execution == "sequential"
    assert repair.max_context_tokens == 50_000
    assert repair.tool_timeout_ms == 1_234
    # Every other field is the person's, whatever fields HarnessConfig grows.
    budget = {"max_model_turns_per_run", "max_repair_attempts"}
    assert repair.model_dump(exclude=budget) == user.model_dump(exclude=budget)
    assert user.max_model_turns_per_run == 80, "the person's config is not changed"


def test_a_smaller_budget_of_the_person_is_kept() -> None:
    user = HarnessConfig(max_model_turns_per_run=4, max_repair_attempts=0)
    repair = repair_config(user)
    assert repair.max_model_turns_per_run == 4
    assert repair.max_repair_attempts == 0
