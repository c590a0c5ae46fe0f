"""Which of the selected test files' tests a verdict runs: by what each
test ran at an earlier verdict (:mod:`rein.testgate.coverage_index`) when
that decides every change of the run, else by the names the change
reaches (:mod:`rein.testgate.narrow`), else the files whole.

When coverage decides, the tests it never recorded (new ones, those of a
test file no run has collected yet, a changed test file's) are chosen by
the names, so no test goes unjudged. The test files whose import runs the
change through a package's ``__init__`` (:attr:`TestSelection.importing`)
are chosen among as the others; in a choice by names, a selected file none
of whose tests run is still imported (an import the change breaks fails
it). The detail says how many of each
("selected by coverage: N; by imports: M") and why a change was left to
the import graph. An *opaque* test (it started a child process that may
run the workspace's code, :mod:`rein.testgate.children`, or a thread at
a recorded run) runs whenever its test file is selected, by
coverage or by the names ("always: N tests ..."); so does one that read a
file's source text there (``inspect.getsource``, a ``.py`` file opened)
when that text changed.
A run with a test chosen otherwise than by coverage
adds its record (:meth:`Picker.record`) unless every test of its files
already has one still good (no module-level change since), and traces only
the tests that have none (:attr:`Picked.untraced`: the others run
untraced in the same run), collecting whole only the test files no valid
record lists the tests of (:attr:`Picked.whole`); one chosen by
coverage alone does not (the tracer about doubles a run's CPU on Python
3.11). Runs coverage cannot decide record twice, then one in four, until
it decides again; of those, a run of (nearly) the whole suite, its files
whole, records only twice until coverage has decided a choice in the
workspace (:meth:`Picker.records_whole_suite`). A choice for a change that
alters no code (a file restored to its text before the run: the bench's
repairs) is no decision for these counts.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rein.testgate.coverage_index import CoverageChoice, CoverageIndex, read_files, sources_of
from rein.testgate.disk_texts import DiskTexts, utf8_text
from rein.testgate.narrow import Narrowed, Narrower
from rein.testgate.parses import Parses
from rein.testgate.pytest_run import NO_TEST
from rein.testgate.recorder import RawCoverage
from rein.testgate.selection import TestSelection

__all__ = ["Picked", "Picker", "near_whole"]

Texts = Mapping[str, tuple[str | None, str | None]]


@dataclass(frozen=True, slots=True)
class Picked:
    """The run: ``files`` for pytest to collect, of which only the tests
    whose node ids start with one of ``only`` run (None: all of them);
    ``note``: how they were chosen, for the detail."""

    files: tuple[str, ...]
    only: tuple[str, ...] | None
    note: str
    #: Chosen by coverage: the run may be empty (no test ran the change).
    by_coverage: bool = False
    #: The run is worth recording: some of its tests have no record (the
    #: recording's tracer about doubles a run's CPU on Python 3.11).
    record: bool = True
    #: Of a run that records, the tests that have a record still good:
    #: they run untraced (only the others pay the tracer).
    untraced: tuple[str, ...] = ()
    #: Of a run that records, the test files collected whole (every test
    #: made into an item: the new record lists them): those no valid
    #: record lists the tests of, or the run changed (None: all).
    whole: tuple[str, ...] | None = None


class Picker:
    """The gate's per-test choice for one workspace (see the module docstring)."""

    def __init__(self, root: Path, parses: Parses | None = None) -> None:
        self.root = root
        #: Each text parsed once for both readers (``Parses(enabled=False)``:
        #: none kept, the tests compare).
        self.parses = parses or Parses()
        self.narrower = Narrower(root, self.parses)
        self.index = CoverageIndex(parses=self.parses)
        self._disk = DiskTexts(root, utf8_text)
        #: Runs recorded since coverage last decided a choice.
        self._undecided_records = 0
        #: Coverage has decided a choice of this workspace's tests.
        self._decided = False
        #: Runs of (nearly) the whole suite recorded while it had not.
        self._whole_records = 0
        #: Tests whose newest record is stale (:attr:`CoverageChoice.stale`),
        #: to record again off the verdict's path (:mod:`rein.testgate.refresh`).
        self._stale: dict[str, None] = {}
        #: The parse thread finds and records them; the event loop reads them.
        self._stale_lock = threading.Lock()

    def forget(self) -> None:
        """The run is over (the coverage records stay)."""
        self.narrower.forget()

    @staticmethod
    def texts_for(raw: RawCoverage, shadow_root: Path) -> dict[str, str | None]:
        """The texts a run's record needs, read as the run's shadow has them
        (at once: the shadow's next run may change them)."""
        texts: dict[str, str | None] = {}
        for path in sources_of(raw) | read_files(raw):
            try:
                texts[path] = (shadow_root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                texts[path] = None
        return texts

    def record(self, raw: RawCoverage, texts: Mapping[str, str | None]) -> None:
        """Keep a run's record (``texts``: :meth:`texts_for`'s)."""
        self.index.add(raw, texts.get)
        with self._stale_lock:
            for node in raw.tests:
                self._stale.pop(node, None)

    def stale_tests(self, limit: int) -> list[str]:
        """At most ``limit`` of the tests whose newest record was found
        stale at a verdict, the earliest found first."""
        with self._stale_lock:
            return list(self._stale)[:limit]

    def refreshed(self, nodes: Sequence[str]) -> None:
        """A run to record ``nodes`` again ended (a test it did not record,
        gone or never run, is found stale again at a verdict that meets it)."""
        with self._stale_lock:
            for node in nodes:
                self._stale.pop(node, None)

    def disk_text(self, path: str) -> str | None:
        """An unchanged file's text (UTF-8; None when it is not), kept while
        its stamp is the same."""
        return self._disk.get(path)

    def prepare(self, texts: Texts) -> None:
        """Read each changed module of ``texts`` (path -> its text before
        the run, now) as the next verdict will, while the model talks
        (:meth:`TestGate.on_change`): each text's model and units, kept by
        the text (:class:`~rein.testgate.parses.Parses`): a verdict on
        another text makes its own."""
        for path, (before, now) in texts.items():
            for text in (before, now):
                if text is not None:
                    self.index.prepare(text)
                    self.narrower.prepare(path, text, now=text is now)

    def _worth_recording(self) -> bool:
        """Whether an undecided run records: the first two since coverage
        last decided, then every fourth (a project whose changes coverage
        cannot decide, attrs's, would pay the tracer at every verdict)."""
        self._undecided_records += 1
        return self._undecided_records <= 2 or self._undecided_records % 4 == 0

    def records_whole_suite(self) -> bool:
        """Whether a run of (nearly) the whole suite records (counted when
        it does): the first :data:`WHOLE_SUITE_TRIES`, then only once
        coverage has decided a choice here. Records that decided nothing
        bought nothing, and a whole suite's cost the most (attrs: every
        change reaches the class builder all its tests and test modules
        run; each recorded whole-suite run took 2.2-2.4 times the suite),
        while click's first two whole-suite records let coverage decide
        most of its later verdicts."""
        if self._decided:
            return True
        self._whole_records += 1
        return self._whole_records <= WHOLE_SUITE_TRIES

    def pick(self, selection: TestSelection, texts: Texts) -> Picked:
        """The tests of ``selection``'s files to run for the change
        (path -> its text before the run, now)."""
        # A test file whose import runs the change (through a package's
        # ``__init__``) is judged as the others: what the change made at
        # import (a registry filled by a changed function) reaches its
        # tests by names and by coverage alike (review31).
        files = [*selection.files, *selection.importing]
        choice = (
            self.index.choose(texts, files, self.disk_text, selection.doctests)
            if len(self.index)
            else None
        )
        if choice is not None:
            with self._stale_lock:
                self._stale.update(dict.fromkeys(choice.stale))
        if choice is None or choice.undecided:
            why = (
                "no coverage record yet"
                if choice is None
                else "; ".join(choice.undecided[p] for p in sorted(choice.undecided))
            )
            narrowed = self.narrower.narrow(
                files, selection.modules, texts, selection.doctests, selection.others
            )
            # Its tests all have a record still good: recording them again
            # would cost the tracer and tell little more.
            whole = not isinstance(narrowed, Narrowed) and near_whole(selection)
            untraced = tuple(sorted(choice.recorded)) if choice is not None else ()
            collect = _collect_whole(files, choice, texts)
            record = (
                (choice is None or not choice.all_recorded)
                and self._worth_recording()
                and (not whole or self.records_whole_suite())
            )
            if isinstance(narrowed, Narrowed):
                opaque = [
                    n
                    for n in dict.fromkeys(
                        (
                            *self.index.opaque_tests(files),
                            *self.index.reading_tests(files, texts, self.disk_text),
                        )
                    )
                    if not _under(n, narrowed.only)
                ]
                more = {n.split("::")[0] for n in opaque} - set(narrowed.files)
                also = f"; and {len(opaque)} tests {_OPAQUE}" if opaque else ""
                named = {*narrowed.files, *more}
                # Every selected file's import runs the change: one whose
                # tests name none of it is collected, so an import the
                # change breaks (a module-level statement, a function
                # called there) is seen.
                importing = [f for f in files if f not in named]
                collected = ""
                if importing:
                    collected = (
                        f"; {len(importing)} more test file(s) collected, none of their tests "
                        "run: their import runs the change (an import it breaks fails them)"
                    )
                return Picked(
                    (*narrowed.files, *sorted(more), *importing),
                    (*narrowed.only, *opaque, *(f"{f}::{NO_TEST}" for f in importing)),
                    f"per test: {len(narrowed.only)} tests, classes or files of "
                    f"{len(narrowed.files)} test file(s) name what the change reaches "
                    f"({', '.join(narrowed.names[:8])}){also}{collected}; by imports, not by "
                    f"coverage: {why}",
                    record=record,
                    untraced=untraced,
                    whole=collect,
                )
            also = ""
            if selection.importing:
                also = f" and {len(selection.importing)} whose import runs the change"
            return Picked(
                tuple(files),
                None,
                f"whole test files{also}: {narrowed}; not by coverage: {why}",
                record=record,
                untraced=untraced,
            )
        if not all(self.index.same_code(*texts[p]) for p in texts):
            # Decided for a change of code: not a file restored (a repair
            # undoing the run's change), which any stale record decides.
            self._undecided_records = 0
            self._decided = True
        return self._by_coverage(selection, files, texts, choice)

    def _by_coverage(
        self, selection: TestSelection, files: list[str], texts: Texts, choice: CoverageChoice
    ) -> Picked:
        by_coverage = [n for f in files for n in choice.selected.get(f, ())]
        opaque = [o for f in files for o in choice.opaque.get(f, ())]
        rest = [f for f in files if f in choice.unknown or f in choice.unrecorded]
        by_names: list[str] = []
        why = ""
        if rest and all(self.index.same_code(*texts[p]) for p in texts):
            # The run's change alters no code: the tests no record has
            # behave as before the run (those with one, by their record).
            rest, why = [], " (the run's change alters no code: comments or blank lines only)"
        if rest:
            narrowed = self.narrower.narrow(
                rest, selection.modules, texts, selection.doctests, selection.others
            )
            prefixes = narrowed.only if isinstance(narrowed, Narrowed) else tuple(rest)
            if not isinstance(narrowed, Narrowed):
                why = f" (whole: {narrowed})"
            for test_file in rest:
                if test_file in choice.unknown:
                    by_names += [p for p in prefixes if p.split("::")[0] == test_file]
                else:
                    unrecorded = choice.unrecorded[test_file]
                    by_names += [n for n in unrecorded if _under(n, prefixes)]
        only = (*by_coverage, *(n for n, _ in opaque), *by_names)
        used = {n.split("::")[0] for n in only}
        changed = ", ".join(choice.changed[:8]) or "none the tests ran"
        always = ""
        if opaque:
            whys = sorted({w for _, w in opaque})
            always = f"; always: {len(opaque)} tests {_OPAQUE} ({'; '.join(whys[:3])})"
        spared = ""
        if choice.by_line:
            spared = f"; {choice.by_line} more ran it but none of its changed lines (left out)"
        note = (
            f"selected by coverage: {len(by_coverage)} tests ran a changed function ({changed})"
            f"{spared}{always}; "
            f"by imports: {len(by_names)} tests, classes or files no earlier run recorded{why}"
        )
        run = tuple(f for f in files if f in used)
        untraced = tuple(sorted(choice.recorded))
        return Picked(
            run,
            only,
            note,
            by_coverage=True,
            record=bool(by_names),
            untraced=untraced,
            whole=_collect_whole(run, choice, texts),
        )


#: The share of a workspace's test files from which a run of them whole
#: is a run of (nearly) the whole suite.
WHOLE_SUITE_SHARE = 0.9
#: Whole-suite runs that record before coverage has decided a choice.
WHOLE_SUITE_TRIES = 2


def near_whole(selection: TestSelection) -> bool:
    """``selection``'s files are (nearly) every test file of the workspace."""
    total = selection.total_files
    # Those only collected run whole with them when the files run whole.
    run = len(selection.files) + len(selection.importing)
    return total > 0 and run >= WHOLE_SUITE_SHARE * total


def _collect_whole(
    files: Sequence[str], choice: CoverageChoice | None, texts: Texts
) -> tuple[str, ...] | None:
    """The test files of ``files`` a recording run collects whole: those
    no valid record lists the tests of, and those the run changed (None:
    all). more-itertools: collecting ``test_more.py`` whole, traced, made
    a run by coverage that recorded one new test 0.5-0.8 s, against
    0.15-0.2 s for one that did not record."""
    if choice is None:
        return None
    return tuple(f for f in files if f not in choice.listed or f in texts)


#: Why an opaque test runs whatever its record says.
_OPAQUE = "whose record cannot see all they run"


def _under(node: str, prefixes: Sequence[str]) -> bool:
    """``node`` is one of ``prefixes`` or inside one (a file, a class, a
    test with its parameters), as the report plugin matches them."""
    parts = node.split("[")[0].split("::")
    heads = {"::".join(parts[:end]) for end in range(1, len(parts) + 1)}
    return node in prefixes or bool(heads & set(prefixes))
