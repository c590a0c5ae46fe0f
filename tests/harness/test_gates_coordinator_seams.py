"""In a real session the analyzer gate's source is the
:class:`DiagnosticsCoordinator` around the headless pool, not the pool: a
seam the pool offers and the coordinator does not pass on is never used
outside the tests' fakes (as the import closure and open-files mode were)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Collection, Sequence
from pathlib import Path
from types import ModuleType

from typing_extensions import get_protocol_members

import rein.harness
from rein.analysis.run_texts import settings_changed
from rein.disk.analyzers import AnalyzerPool
from rein.harness.gating import gate_types
from rein.harness.gating.coordinators import DiagnosticsCoordinator
from rein.harness.gating.gate_types import ImporterClosure, OpenFilesOnly
from tests.fakes.diagnostics import FakeDiagnostics


def _ports_modules() -> list[ModuleType]:
    """The core's ports modules, found by listing harness/ (``ports.py`` and
    every ``*_ports.py``, wherever they sit), and the gates' own types."""
    core = Path(rein.harness.__file__).parent
    names = sorted(
        ".".join(("rein.harness", *path.relative_to(core).with_suffix("").parts))
        for path in core.rglob("*.py")
        if path.stem == "ports" or path.stem.endswith("_ports")
    )
    return [*map(importlib.import_module, names), gate_types]


def _seams() -> list[type]:
    """Every runtime-checkable Protocol a gate may test its source for,
    declared in any of the ports modules (each once, where it is declared:
    ``ports`` re-exports ``diagnostics_ports``')."""
    modules = _ports_modules()
    declared_in = {module.__name__ for module in modules}
    found: dict[str, type] = {}
    for module in modules:
        for _, value in inspect.getmembers(module, inspect.isclass):
            if getattr(value, "_is_runtime_protocol", False) and value.__module__ in declared_in:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def test_the_seams_include_every_ports_modules_protocols() -> None:
    """The listing finds the ports modules, diagnostics_ports' seams among
    them (review20a F: they were left out, being re-exported by ports)."""
    names = {module.__name__ for module in _ports_modules()}
    assert {"rein.harness.ports", "rein.harness.diagnostics_ports"} <= names
    seams = {seam.__name__ for seam in _seams()}
    assert {"CounterfactualDiagnostics", "SettlingDiagnostics", "ReleasingDiagnostics"} <= seams


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


def test_an_editors_settings_are_told_from_its_modules() -> None:
    """The editor's diagnostics do not say what they cover. Taken to cover
    every file, a changed pyproject.toml was no setting there, and a module
    edited after it passed: its own baseline, taken then, held the new
    rules' findings (review68). A .gitignore, a licence, a lockfile or a
    data file is no setting (review68b: each made every later verdict of
    the session unverified)."""
    editor = DiagnosticsCoordinator(FakeDiagnostics())
    paths = ("pkg/m.py", "web/app.ts", "nb.ipynb", "notes.md", ".gitignore", "LICENSE")
    paths += ("package-lock.json", "data/rows.json", "pyproject.toml", "tsconfig.json")
    assert [p for p in (*paths, "go.mod") if not editor.covers(p)] == [
        "pyproject.toml",
        "tsconfig.json",
        "go.mod",
    ]
    assert settings_changed(editor, {"pkg/m.py", "notes.md", "pyproject.toml"}) == [
        "pyproject.toml"
    ]
    # What its diagnostics hold is what its servers checked (the open files,
    # often): no file is judged against them as before a setting changed.
    assert not editor.in_whole_snapshot("pkg/m.py")
