"""In a real session the analyzer gate's source is the
:class:`DiagnosticsCoordinator` around the headless pool, not the pool: a
seam the pool offers and the coordinator does not pass on is never used
outside the tests' fakes (as the import closure and open-files mode were)."""

from __future__ import annotations

import inspect
from collections.abc import Collection, Sequence

from typing_extensions import get_protocol_members

from rein.disk.analyzers import AnalyzerPool
from rein.harness import ports
from rein.harness.gating import gate_types
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gate_types import ImporterClosure, OpenFilesOnly
from tests.fakes.diagnostics import FakeDiagnostics


def _seams() -> list[type]:
    """Every runtime-checkable Protocol a gate may test its source for."""
    found = []
    for module in (ports, gate_types):
        for _, value in inspect.getmembers(module, inspect.isclass):
            if getattr(value, "_is_runtime_protocol", False) and value.__module__ == (
                module.__name__
            ):
                found.append(value)
    return found


def _offers(cls: type, seam: type) -> bool:
    return all(callable(getattr(cls, name, None)) for name in get_protocol_members(seam))


def test_the_coordinator_offers_every_seam_the_pool_offers() -> None:
    offered = [seam for seam in _seams() if _offers(AnalyzerPool, seam)]
    assert ImporterClosure in offered and OpenFilesOnly in offered
    missing = [seam.__name__ for seam in offered if not _offers(DiagnosticsCoordinator, seam)]
    assert missing == []


class _Closing(FakeDiagnostics):
    def __init__(self) -> None:
        super().__init__([])
        self.asked: list[list[str]] = []

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        self.asked.append(list(paths))
        return {*paths, "user.py"}

    def analyses_open_files_only(self) -> bool:
        return True


async def test_the_coordinator_passes_on_the_closure_and_open_files_mode() -> None:
    inner = _Closing()
    coordinator = DiagnosticsCoordinator(inner)
    assert await coordinator.importer_closure(["lib.py"]) == {"lib.py", "user.py"}
    assert inner.asked == [["lib.py"]]
    assert coordinator.analyses_open_files_only()
    # A source without them: nothing narrowed, not open-files mode.
    bare = DiagnosticsCoordinator(FakeDiagnostics([]))
    assert await bare.importer_closure(["lib.py"]) is None
    assert not bare.analyses_open_files_only()
