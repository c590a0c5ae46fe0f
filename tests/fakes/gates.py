"""Gates that raise or take their time."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel


class RaisingGate:
    """A gate whose check raises (a bug in a gate)."""

    name = "broken"

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: Any) -> Any:
        raise RuntimeError("the gate's analyzer connection broke")


class SlowGate:
    """A gate that works for ``seconds`` (on the virtual clock) and passes."""

    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def on_run_start(self, generation: int) -> None:
        return None

    async def check(self, ctx: Any) -> Any:
        from rein.harness.gating.gates import GateOutcome

        await anyio.sleep(self.seconds)
        return GateOutcome(detail=f"worked {self.seconds:g} s")
