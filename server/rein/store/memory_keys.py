"""The memories a session's transcripts are stored under: the agent's (plan
mode: the executor's) and the planner's. ``rein undo`` notes a restore in
them without assembling a session."""

from __future__ import annotations

__all__ = ["EXECUTOR_MEMORY", "MAIN_MEMORY", "PLANNER_MEMORY", "memory_key"]

MAIN_MEMORY = "main:messages"
EXECUTOR_MEMORY = "executor:memory"
PLANNER_MEMORY = "planner:memory"


def memory_key(mode: str) -> str:
    """The memory that holds the agent's transcript (plan mode: the executor's)."""
    return EXECUTOR_MEMORY if mode == "plan" else MAIN_MEMORY
