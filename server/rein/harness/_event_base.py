"""The base of every event model: frozen, no extra fields, built on first use."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["EVENT_CONFIG", "_Event"]


#: The configuration of every event model and of the models an event holds
#: (a blocker, a plan step, the context's share): frozen, no extra fields,
#: built on first use.
EVENT_CONFIG = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class _Event(BaseModel):
    model_config = EVENT_CONFIG
