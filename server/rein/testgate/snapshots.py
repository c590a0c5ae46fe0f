"""A snapshot of the coverage index (:mod:`rein.testgate.coverage_index`):
one recorded run, its files' models and what each test ran, and what is
told of snapshots alone: whether a newer one stands on the same ground as
an older, whether a file a test read has another text now, which tests
the snapshots record."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rein.testgate.file_model import FileModel, digest
from rein.testgate.recorder import PARTIAL

__all__ = [
    "Snapshot",
    "Spans",
    "Unit",
    "drop_from",
    "hits",
    "imported_elsewhere",
    "line_paths",
    "not_decidable",
    "own_entries",
    "read_changed",
    "recorded_by",
    "same_ground",
]

Unit = tuple[str, str]  # (file, function's qualified name)


@dataclass(slots=True)
class Snapshot:
    """One recorded run (see :mod:`rein.testgate.coverage_index`)."""

    order: int
    files: dict[str, FileModel]
    tests: dict[str, frozenset[Unit]]
    shared: frozenset[Unit]
    collected: dict[str, tuple[str, ...]]
    #: Tests whose record cannot be trusted -> why.
    opaque: dict[str, str] = field(default_factory=dict)
    #: Test -> each file whose text it read -> that text's hash (None:
    #: not known).
    reads: dict[str, dict[str, str | None]] = field(default_factory=dict)
    #: Test file -> what its import at the collection ran (all its tests
    #: depend on it).
    imports: dict[str, frozenset[Unit]] = field(default_factory=dict)
    #: The names of what a memoized function of its files may call
    #: (:func:`~rein.testgate.file_model.memo_reach`): a change of one is
    #: no function's alone.
    memo_reach: frozenset[str] = frozenset()
    #: Function -> the lines its tests ran of it, each set with the tests
    #: that ran those (a test that ran it with no lines known is in none).
    paths: dict[Unit, tuple[tuple[frozenset[int], frozenset[str]], ...]] = field(
        default_factory=dict
    )
    #: Function -> the lines it ran outside the tests.
    shared_lines: dict[Unit, frozenset[int]] = field(default_factory=dict)
    #: Test file -> function -> the lines its import ran of it.
    import_lines: dict[str, dict[Unit, frozenset[int]]] = field(default_factory=dict)
    #: At the last verdict, a file of it differed at module level (or was
    #: gone) before the run: void until that file is as it was (the first
    #: to go past the bound).
    void_before: bool = False

    def by_line(self, unit: Unit, spans: Spans) -> tuple[frozenset[str], frozenset[str]]:
        """The tests whose lines of ``unit`` are known, and of those the
        ones that ran a line in ``spans`` (a changed statement's)."""
        known: set[str] = set()
        hit: set[str] = set()
        for lines, nodes in self.paths.get(unit, ()):
            known |= nodes
            if hits(lines, spans):
                hit |= nodes
        return frozenset(known), frozenset(hit)


Spans = tuple[tuple[int, int], ...]


def hits(lines: frozenset[int] | None, spans: Spans | None) -> bool:
    """``lines`` (None, or holding :data:`~rein.testgate.recorder.PARTIAL`:
    not all known) reach one of ``spans`` (None: all)."""
    if lines is None or spans is None or PARTIAL in lines:
        return True
    return any(start <= line <= end for line in lines for start, end in spans)


def line_paths(
    lines: Mapping[str, Mapping[Unit, frozenset[int]]],
) -> dict[Unit, tuple[tuple[frozenset[int], frozenset[str]], ...]]:
    """Node id -> function -> its lines, as function -> each set of lines
    with the tests that ran exactly those."""
    grouped: dict[Unit, dict[frozenset[int], set[str]]] = {}
    for node, units in lines.items():
        for unit, ran in units.items():
            if PARTIAL not in ran:  # not all known: the test is in none
                grouped.setdefault(unit, {}).setdefault(ran, set()).add(node)
    return {
        unit: tuple((ran, frozenset(nodes)) for ran, nodes in paths.items())
        for unit, paths in grouped.items()
    }


def same_ground(newer: Snapshot, older: Snapshot) -> bool:
    """The files both recorded have the same skeletons in both, and the
    same code for each function that ran outside either's tests: no
    change undone makes ``older`` good again while ``newer`` is void for
    it (a file only ``newer`` has may void it alone: ``older`` goes all
    the same, as it always did)."""
    for path, model in newer.files.items():
        then = older.files.get(path)
        if then is not None and then.skeleton != model.skeleton:
            return False
    for path, name in newer.shared | older.shared:
        if path in newer.files and path in older.files:
            if newer.files[path].functions.get(name) != older.files[path].functions.get(name):
                return False
    return True


def own_entries(snap: Snapshot, snapshots: Sequence[Snapshot]) -> int:
    """How many tests and test files' lists ``snap`` holds that no newer
    snapshot of ``snapshots`` recorded or listed again on the same ground
    (:func:`same_ground`)."""
    again = [n for n in snapshots if n.order > snap.order and same_ground(n, snap)]
    tests = {t for n in again for t in n.tests}
    files = {f for n in again for f in n.collected}
    return len(set(snap.tests) - tests) + len(set(snap.collected) - files)


def drop_from(snap: Snapshot, older: Sequence[Snapshot]) -> None:
    """``snap`` goes while older snapshots stay: a test whose newest record
    it held and that an older one on the same ground saw run other
    functions is left unrecorded there, not judged by the older path
    (review32: what steered it elsewhere may be nothing a snapshot
    compares, a data file)."""
    if snap.void_before:
        return  # its record is of a module no longer there: it says nothing now
    for other in older:
        if other.order < snap.order and same_ground(snap, other):
            for node, ran in snap.tests.items():
                if node in other.tests and other.tests[node] != ran:
                    del other.tests[node]


def read_changed(
    snap: Snapshot,
    node: str,
    changed: Mapping[str, tuple[str | None, str | None]],
    disk_text: Callable[[str], str | None],
    sha_of: Callable[[str], str] = digest,
) -> bool:
    """A file ``node`` read at ``snap``'s run has another text now or
    before the run (or one not known)."""
    for path, sha in snap.reads.get(node, {}).items():
        texts = changed.get(path)
        if texts is None:
            text = disk_text(path)
            texts = (text, text)
        if sha is None or any(t is None or sha_of(t) != sha for t in texts):
            return True
    return False


def recorded_by(
    test_files: Sequence[str], snapshots: Sequence[Snapshot]
) -> tuple[frozenset[str], bool, frozenset[str]]:
    """The tests of ``test_files`` recorded in one of ``snapshots``,
    whether that is every test of them (each file's tests known), and the
    files whose tests one of them lists."""
    recorded: set[str] = set()
    listed: set[str] = set()
    every = True
    for test_file in test_files:
        ids = next((s.collected[test_file] for s in snapshots if test_file in s.collected), None)
        if ids is None:
            every = False
            continue
        listed.add(test_file)
        for node in ids:
            if any(node in s.tests for s in snapshots):
                recorded.add(node)
            else:
                every = False
    return frozenset(recorded), every, frozenset(listed)


def imported_elsewhere(
    test_file: str, files: Mapping[str, FileModel], text_of: Callable[[str], str | None]
) -> bool:
    """Another of the run's modules may import ``test_file`` (its module's
    name is in that module's text): what ``test_file``'s import made may
    serve that module too, so its import is not its tests' alone."""
    name = test_file.rpartition("/")[2].removesuffix(".py")
    for path in files:
        if path != test_file:
            text = text_of(path)
            if text is None or name in text:
                return True
    return False


def not_decidable(path: str, before: str | None, now: str | None) -> str | None:
    if not path.endswith(".py"):
        return f"{path} is not a Python module"
    if path.rpartition("/")[2] == "conftest.py":
        return f"{path} is a conftest.py"
    if before is None or now is None:
        return f"{path} was created or deleted, or its earlier text is not known"
    return None
