"""Named subagent types: what a ``task(agent=...)`` child is.

A kind (a person's custom agent, :mod:`rein.bring.agents`, assembled by
the session) gives the child its tools (None: every tool the parent's
spawner offers), its own instructions after the subagent prompt, and a
model of its own; ``note`` is said in the ``task`` result (a model that
could not be mapped, tools the session does not offer). The parent's
gates, record, approvals and hooks are the child's as for any subagent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rein.harness.ports import Model

__all__ = ["SubagentKind", "kind_prompt", "kind_tools"]


@dataclass(frozen=True)
class SubagentKind:
    name: str
    description: str
    #: Tool names it may use, ``prefix*`` for every name that starts with
    #: the prefix (None: every tool offered to subagents).
    tools: tuple[str, ...] | None
    #: Its instructions: the last section of the child's system prompt.
    instructions: str
    #: Its model (None: the parent's).
    model: Model | None = None
    #: What the ``task`` result says about it (empty: nothing).
    note: str = ""
    #: Tools it never gets, even when ``tools`` is None: names, and
    #: ``prefix*`` for every name that starts with the prefix.
    disallowed: tuple[str, ...] = ()


def _denied(name: str, disallowed: Sequence[str]) -> bool:
    return any(
        name == rule or (rule.endswith("*") and name.startswith(rule[:-1])) for rule in disallowed
    )


def kind_tools(kind: SubagentKind, offered: Sequence[str]) -> list[str]:
    """The kind's tools among ``offered`` (all of them when it names none),
    less those it disallows."""
    if kind.tools is None:
        listed = list(offered)
    else:
        listed = [n for n in kind.tools if n in offered]
        listed += [n for n in offered if n not in listed and _denied(n, kind.tools)]
    return [name for name in listed if not _denied(name, kind.disallowed)]


def kind_prompt(base: str, kind: SubagentKind) -> str:
    """The child's system prompt: the subagent prompt for its tools, then
    the kind's instructions."""
    if not kind.instructions.strip():
        return base
    return f"{base}\n\n# Agent: {kind.name}\n{kind.instructions.strip()}"
