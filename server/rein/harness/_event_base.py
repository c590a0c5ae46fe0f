"""The base of every event model: frozen, no extra fields, built on first use."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["_Event"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
