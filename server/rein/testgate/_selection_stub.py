"""A stand-in for :mod:`rein.testgate.selection` until it lands (written
apart): the same interface, selecting the changed test files when only test
files changed, else the whole suite."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rein.testgate.detect import find_test_files, is_test_file

__all__ = ["TestSelection", "select_tests"]


@dataclass(frozen=True, slots=True)
class TestSelection:
    __test__ = False  # not a pytest test class

    files: tuple[str, ...]
    run_all: bool
    reason: str
    chains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    total_files: int = 0


def select_tests(
    root: Path, changed: Iterable[str], *, max_tests: int | None = None
) -> TestSelection:
    changed = sorted(changed)
    total = len(find_test_files(root))
    if changed and all(is_test_file(path) for path in changed):
        files = tuple(p for p in changed if (root / p).is_file())
        return TestSelection(
            files=files,
            run_all=False,
            reason="only test files changed",
            chains={p: (p,) for p in files},
            total_files=total,
        )
    return TestSelection(files=(), run_all=True, reason="the whole suite", total_files=total)
