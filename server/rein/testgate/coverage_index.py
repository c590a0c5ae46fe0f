"""Selection by what each test ran at an earlier verdict (what
pytest-testmon does, our own).

A *snapshot* is one recorded run (:mod:`rein.testgate.recorder`): the
workspace's modules it imported, each as a :class:`FileModel` of its text
then (its content hash; its *functions*: every function and method,
nested ones inside their outer one, decorators left out; its *skeleton*:
everything else, what runs at import: imports, constants, class bodies,
decorators, module-level statements), and for each test the functions it
ran (a code object's first line mapped to the function holding it). The
syntax trees are compared, not the text: a comment or a moved line
changes nothing.

At a verdict, every file of a snapshot is compared with the file as it
was before the run and as it is now. A test is selected when a function
it ran differs in either (the change of the run, or one since the
recording): a test that ran none of them behaves as it did then, before
the run and now. It is *decided by coverage* only when that holds for
every change of the run; a changed file is left to the import-graph
selection (``undecided``, with why) when it is not a Python module, is a
``conftest.py``, was created or deleted (or its earlier text is not
known), is in no snapshot, changed at module level (its skeleton),
changed a function that ran outside the tests (at import, in a fixture of
a wider scope), or one a memoized function may call (by name, in any of
the snapshot's modules: only the test that filled the cache ran it). What a test file's own import ran (its module-level code
at its collection: :mod:`rein.testgate.recorder`'s ``imports``) is its
tests' alone: such a function changed selects that file's tests, unless
another of the run's modules names the test file in its text (it may
import what that import made), when it is shared as any import. A
snapshot with a module-level change elsewhere (made since the recording,
outside the run) is not used. A test that no valid
snapshot recorded (new, never run, or run while its tracer was replaced)
is left to the import-graph selection too (:mod:`rein.testgate.picking`).
An *opaque* test (it started a child process that may run the
workspace's code, :mod:`rein.testgate.children`, or a thread: what it
ran is more than its record shows) is never left out by coverage: it runs
whenever its test file is selected. A test that read a workspace file's
source text (``inspect.getsource``, a ``.py`` file opened: parso's tests
parse its modules and ``.py`` data files) runs too when the text of one
of those files, before the run or now, is not the text it read; by the
names as well (:meth:`CoverageIndex.reading_tests`).
A test file of a snapshot that is gone (before the run and now) takes
only its own tests with it: nothing but pytest imported it.

A snapshot may hold only some of its run's tests (the others ran
untraced, their records still good: :mod:`rein.testgate.recorder`), but
lists every test of its test files: a test's record is the newest
snapshot's that holds it.

The index is the gate's memory: at most :data:`MAX_SNAPSHOTS` snapshots,
a newer one replacing an older one's tests, unless it was recorded with
another skeleton, or another code of a function run outside the tests,
than the older (a seed there, undone since: the older is good again when
the newer is void); past that number, one void before the last verdict's
run goes first, else the one holding the fewest tests of its own, never
the newest (:meth:`CoverageIndex._trim`). A void snapshot leaves a changed file to the import
graph only when no valid one records it, or when a function it saw run
outside its tests differs from a valid one's code that never did. The
file models (:mod:`rein.testgate.file_model`) are kept by content hash
while a snapshot uses them (and the newest 256 others).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rein.testgate.file_model import MODULE, FileModel, digest, memo_reach, model_of, under_memo
from rein.testgate.models import Models
from rein.testgate.parses import Parses
from rein.testgate.recorder import RawCoverage
from rein.testgate.snapshots import (
    Snapshot,
    Spans,
    Unit,
    drop_from,
    hits,
    imported_elsewhere,
    line_paths,
    not_decidable,
    own_entries,
    read_changed,
    recorded_by,
)

__all__ = [
    "CoverageChoice",
    "CoverageIndex",
    "FileModel",
    "model_of",
    "read_files",
    "sources_of",
]

#: Snapshots kept; the oldest goes first.
MAX_SNAPSHOTS = 8
#: Models of texts no snapshot uses (the files' texts at recent verdicts) kept.
MAX_SPARE_MODELS = 256


def sources_of(raw: RawCoverage) -> set[str]:
    """The Python files a record names (their texts make its models)."""
    paths = set(raw.files) | {w[0] for rows in raw.tests.values() if rows for w in rows}
    paths |= {w[0] for w in raw.shared} | set(raw.collected)
    paths |= {w[0] for rows in raw.imports.values() for w in rows}
    return {p for p in paths if p.endswith(".py")}


def read_files(raw: RawCoverage) -> set[str]:
    """The files whose text a record's tests read (their texts then are
    what the tests depend on)."""
    return {p for paths in raw.reads.values() for p in paths}


@dataclass(slots=True)
class CoverageChoice:
    """What the index decides at a verdict."""

    #: Changed file -> why the import-graph selection decides for it.
    undecided: dict[str, str] = field(default_factory=dict)
    #: Test file -> its tests selected by coverage (possibly none).
    selected: dict[str, list[str]] = field(default_factory=dict)
    #: Test file -> its tests no valid snapshot recorded.
    unrecorded: dict[str, list[str]] = field(default_factory=dict)
    #: Test file -> its opaque tests (always run; with why).
    opaque: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: Selected test files no snapshot knows the tests of.
    unknown: list[str] = field(default_factory=list)
    #: Functions that changed (``file:function``), for the detail.
    changed: list[str] = field(default_factory=list)
    #: Tests that ran a changed function but none of its changed
    #: statements (told by line): left out.
    by_line: int = 0
    #: Tests whose newest record was made while a function they ran had
    #: other code than before the run (a change undone since), with no
    #: older record to take instead: they run at every verdict until they
    #: are recorded again (:mod:`rein.testgate.refresh`).
    stale: list[str] = field(default_factory=list)

    #: Every test of the test files has a record that can still be used
    #: (no module-level change since, nothing that ran outside the tests
    #: changed since): a run of them need not record.
    all_recorded: bool = False
    #: The tests of the test files that have such a record: a run that
    #: records runs them untraced (:mod:`rein.testgate.recorder`).
    recorded: frozenset[str] = frozenset()
    #: The test files whose tests a valid snapshot lists: a run that
    #: records need not collect them whole.
    listed: frozenset[str] = frozenset()


class CoverageIndex:
    """The gate's memory of what each test ran (see the module docstring)."""

    def __init__(self, max_snapshots: int = MAX_SNAPSHOTS, parses: Parses | None = None) -> None:
        self.max_snapshots = max_snapshots
        #: The texts' trees and hashes (shared with the narrowing).
        self.parses = parses or Parses()
        self._snapshots: list[Snapshot] = []
        self._order = 0
        self._models = Models(self.parses)

    def __len__(self) -> int:
        return len(self._snapshots)

    def _model(self, text: str) -> FileModel | None:
        return self._models.model(text)

    def prepare(self, text: str) -> None:
        """Make ``text``'s model now (a verdict will ask for it)."""
        self._model(text)

    def same_code(self, before: str | None, now: str | None) -> bool:
        """Both texts parse to the same functions and skeleton (a comment,
        a blank line, a moved line changes nothing)."""
        if before is None or now is None:
            return False
        then, model = self._model(before), self._model(now)
        return (
            then is not None
            and model is not None
            and (then.skeleton, then.functions) == (model.skeleton, model.functions)
        )

    def add(self, raw: RawCoverage, text_of: Callable[[str], str | None]) -> None:
        """Keep a run's record; ``text_of(path)``: the file's text in that
        run (its shadow's), None when unknown (the file is left out, and
        so is every test that ran it)."""
        files: dict[str, FileModel] = {}
        for path in sorted(sources_of(raw)):
            text = text_of(path)
            model = self._model(text) if text is not None else None
            if model is not None:
                files[path] = model

        seen: dict[tuple[str, int], Unit | None] = {}

        def units(rows: Iterable[tuple[str, int]]) -> frozenset[Unit] | None:
            found: set[Unit] = set()
            for row in rows:
                if row not in seen:
                    model = files.get(row[0])
                    if model is None:
                        return None
                    name = model.function_at(row[1])
                    seen[row] = (row[0], name) if name != MODULE else None
                unit = seen[row]
                if unit is not None:
                    found.add(unit)
            return frozenset(found)

        interned: dict[frozenset[int], frozenset[int]] = {}

        def by_unit(lines: Mapping[tuple[str, int], frozenset[int]]) -> dict[Unit, frozenset[int]]:
            """Where -> lines as function -> lines (the lines of a function's
            nested code objects are its own)."""
            out: dict[Unit, frozenset[int]] = {}
            for row, ran in lines.items():
                if row not in seen:
                    model = files.get(row[0])
                    if model is None:
                        continue
                    name = model.function_at(row[1])
                    seen[row] = (row[0], name) if name != MODULE else None
                unit = seen[row]
                if unit is not None:
                    ran = out[unit] | ran if unit in out else ran
                    out[unit] = interned.setdefault(ran, ran)
            return out

        tests: dict[str, frozenset[Unit]] = {}
        for node, rows in raw.tests.items():
            ran = units(rows) if rows is not None else None
            if ran is not None:
                tests[node] = ran
        shared = units(raw.shared)
        if shared is None:
            return  # what ran at import is not known: nothing can be told
        shared_lines = by_unit(raw.shared_lines)
        imports: dict[str, frozenset[Unit]] = {}
        import_lines: dict[str, dict[Unit, frozenset[int]]] = {}
        for test_file, rows in sorted(raw.imports.items()):
            ran = units(rows)
            if ran is None:
                return
            # Only the test file's own functions are its tests' alone: what
            # its import ran in another module may have left state there (a
            # cache, a registry, ids to parametrize by) that every other
            # file's tests read, all of them collected after it (review14a).
            own = frozenset(unit for unit in ran if unit[0] == test_file)
            if own and imported_elsewhere(test_file, files, text_of):
                # Another module may use what its import made: shared.
                own = frozenset()
            imports[test_file] = own
            shared |= ran - own
            lines = by_unit(raw.import_lines.get(test_file, {}))
            import_lines[test_file] = {u: r for u, r in lines.items() if u in own}
            for unit, r in lines.items():
                if unit not in own:
                    shared_lines[unit] = shared_lines[unit] | r if unit in shared_lines else r
        collected = {k: v for k, v in raw.collected.items() if k in files}
        self._order += 1
        opaque = {k: v for k, v in raw.opaque.items() if k in tests}
        reads: dict[str, dict[str, str | None]] = {}
        for node, paths in raw.reads.items():
            if node in tests:
                texts = {path: text_of(path) for path in paths}
                reads[node] = {p: None if t is None else digest(t) for p, t in texts.items()}
        snap = Snapshot(self._order, files, tests, shared, collected, opaque, reads, imports)
        snap.memo_reach = memo_reach(files.values())
        snap.paths = line_paths({n: by_unit(raw.test_lines.get(n, {})) for n in tests})
        snap.shared_lines, snap.import_lines = shared_lines, import_lines
        self._snapshots.append(snap)
        self._trim()

    def _trim(self) -> None:
        """Drop a snapshot whose every test newer ones recorded again on the
        same ground (:func:`same_ground`: one recorded again while a
        module's skeleton, or a function that ran outside the tests, was
        otherwise is kept, for once that seed is undone the newer is void
        and the older good again; click's ``Path.__init__``). Past
        :attr:`max_snapshots`, never the newest: one void before the last
        verdict's run first, else the one with the fewest tests and test
        lists of its own (:func:`own_entries`), so a whole suite's first
        record outlives the small ones made after it (dropping the oldest
        made its tests unrecorded: click 0.37 -> 0.70 of its suite, stop
        62), its records of another path than an older one's dropped there
        too (:func:`drop_from`)."""
        kept: list[Snapshot] = []
        for snap in sorted(self._snapshots, key=lambda s: -s.order):
            if not own_entries(snap, kept):
                continue  # every test of it recorded again since
            kept.append(snap)
        while len(kept) > self.max_snapshots:
            # Never the newest; one void before the last verdict's run first.
            gone = min(
                kept[1:],
                key=lambda s: (not s.void_before, own_entries(s, kept), s.order),
            )
            kept.remove(gone)
            drop_from(gone, kept)
        self._snapshots = sorted(kept, key=lambda s: s.order)
        self._prune(0)

    def _prune(self, spare: int) -> None:
        """Keep the models the snapshots use and the ``spare`` newest others."""
        used = {m.sha for s in self._snapshots for m in s.files.values()}
        others = [k for k in self._models if k not in used][::-1][:spare]
        self._models.keep(used | set(others))

    def choose(
        self,
        changed: Mapping[str, tuple[str | None, str | None]],
        test_files: Sequence[str],
        disk_text: Callable[[str], str | None],
        doctests: Sequence[str] = (),
    ) -> CoverageChoice:
        """The tests of ``test_files`` (the import-graph selection) that
        the change (path -> its text before the run, now) reaches by the
        snapshots; ``disk_text``: an unchanged file's text. Of
        ``test_files``, the ``doctests`` (modules whose doctests pytest
        collects) are modules too: one the run changed is no changed test
        file whose tests are unknown, but runs whole (its own prefix
        selected), or by what its doctests ran when only its comments
        changed."""
        choice = CoverageChoice()
        for path, (before, now) in changed.items():
            why = not_decidable(path, before, now)
            if why is not None:
                choice.undecided[path] = why
        valid: list[tuple[Snapshot, dict[Unit, Spans | None]]] = []
        # Snapshot -> its functions whose code differs before the run.
        stale: dict[int, set[Unit]] = {}
        skipped: list[str] = []
        # Changed file -> why a void snapshot leaves it undecided, and what
        # ran outside that snapshot's tests and changed.
        void: dict[str, tuple[str, set[Unit]]] = {}
        for snap in sorted(self._snapshots, key=lambda s: -s.order):
            differs = self._diff(snap, changed, disk_text, stale.setdefault(snap.order, set()))
            if isinstance(differs, tuple):
                path, why = differs
                if path in changed:
                    void.setdefault(path, (why, set()))
                skipped.append(why)
                continue  # changed since the recording: this snapshot is not used
            # A changed function that ran outside the tests, unless none of
            # its changed statements ran there (told by line).
            outside = {
                unit
                for unit in differs.keys() & snap.shared
                if hits(snap.shared_lines.get(unit), differs[unit])
            }
            for path, name in sorted(outside):
                if path in changed:
                    why = (
                        f"{path}: {name} ran outside the tests (at import, or in a "
                        "fixture of a wider scope)"
                    )
                    void.setdefault(path, (why, set()))[1].update(outside)
            if outside:  # changed since the recording: not used
                skipped.append(f"{sorted(outside)[0][1]} ran outside the tests")
            else:
                valid.append((snap, differs))
        # What a valid snapshot saw run outside its tests unchanged (one that
        # changed there ran none of its changed lines there: told by line).
        shared = {unit for s, d in valid for unit in s.shared if unit not in d}
        changed_units = {unit for _, d in valid for unit in d}
        for path in changed:
            if path in choice.undecided:
                continue
            if not any(path in s.files for s, _ in valid):
                since = f" ({skipped[0]} since the recording)" if skipped else ""
                why = void.get(path, (f"{path}: no valid coverage record of it{since}",))[0]
                choice.undecided[path] = why
            elif path in void and (void[path][1] & changed_units) - shared:
                # What ran outside a void snapshot's tests differs from a
                # valid one's code, which did not see it run outside them.
                choice.undecided[path] = void[path][0]
        choice.changed = sorted({f"{f}:{n}" for _, d in valid for f, n in d if f in changed})
        choice.recorded, choice.all_recorded, choice.listed = recorded_by(
            test_files, [s for s, _ in valid]
        )
        if not choice.undecided:
            by_line: dict[tuple[int, Unit], tuple[frozenset[str], frozenset[str]]] = {}
            for test_file in test_files:
                self._pick(
                    test_file,
                    valid,
                    changed,
                    disk_text,
                    choice,
                    test_file in doctests,
                    by_line,
                    stale,
                )
        self._prune(MAX_SPARE_MODELS)
        return choice

    def _pick(
        self,
        test_file: str,
        valid: Sequence[tuple[Snapshot, dict[Unit, Spans | None]]],
        changed: Mapping[str, tuple[str | None, str | None]],
        disk_text: Callable[[str], str | None],
        choice: CoverageChoice,
        doctest: bool = False,
        by_line: dict[tuple[int, Unit], tuple[frozenset[str], frozenset[str]]] | None = None,
        stale: Mapping[int, set[Unit]] | None = None,
    ) -> None:
        """Sort ``test_file``'s tests into selected and unrecorded."""
        ids = next((s.collected[test_file] for s, _ in valid if test_file in s.collected), None)
        if ids is None or (test_file in changed and not doctest):
            choice.unknown.append(test_file)
            return
        if test_file in changed and not self.same_code(*changed[test_file]):
            # A doctest module the run changed (its docstrings may have):
            # all of its doctests, the new ones too. Its comments only:
            # by what they ran, as any test.
            choice.selected[test_file] = [test_file]
            return
        picked: list[str] = []
        unrecorded: list[str] = []
        for node in ids:
            # Its newest record; or, when that was made while a function it
            # ran was otherwise (a change undone since: it would run again
            # for it), an older one made with those functions as they were
            # before the run that saw it run the same functions (one that
            # saw others says another path, steered by what no snapshot
            # compares: a data file, state, review32).
            holding = [(s, d) for s, d in valid if node in s.tests]
            found = holding[0] if holding else None
            if found is not None and found[0].tests[node] & (stale or {}).get(
                found[0].order, set()
            ):
                ran = found[0].tests[node]
                found = next(
                    (
                        (s, d)
                        for s, d in holding[1:]
                        if s.tests[node] == ran and not ran & (stale or {}).get(s.order, set())
                    ),
                    found,
                )
                if found[0].tests[node] & (stale or {}).get(found[0].order, set()):
                    choice.stale.append(node)
            if found is None:
                unrecorded.append(node)
            elif node in found[0].opaque:
                choice.opaque.setdefault(test_file, []).append((node, found[0].opaque[node]))
            elif read_changed(found[0], node, changed, disk_text, self.parses.digest):
                picked.append(node)
            else:
                snap, differs = found
                ran = snap.tests[node] & differs.keys()
                imported = snap.imports.get(test_file, frozenset()) & differs.keys()
                if _reached(
                    snap, differs, node, ran, by_line if by_line is not None else {}
                ) or any(
                    hits(snap.import_lines.get(test_file, {}).get(u), differs[u]) for u in imported
                ):
                    picked.append(node)
                elif ran or imported:
                    choice.by_line += 1  # it ran a changed function, no changed line
        choice.selected[test_file] = picked
        if unrecorded:
            choice.unrecorded[test_file] = unrecorded

    def _newest(self, test_files: Sequence[str]) -> Iterable[tuple[Snapshot, str]]:
        """Each test of ``test_files`` (as the newest snapshot collecting
        its file lists them) with the newest snapshot recording it: a run
        that recorded only some tests (the others ran untraced) leaves the
        others' records in older snapshots."""
        snapshots = sorted(self._snapshots, key=lambda s: -s.order)
        for test_file in test_files:
            ids = next((s.collected[test_file] for s in snapshots if test_file in s.collected), ())
            for node in ids:
                snap = next((s for s in snapshots if node in s.tests), None)
                if snap is not None:
                    yield snap, node

    def opaque_tests(self, test_files: Sequence[str]) -> list[str]:
        """The tests of ``test_files`` the newest snapshot recording them
        found opaque (for a choice by names: they run whatever names they
        hold)."""
        return [n for snap, n in self._newest(test_files) if n in snap.opaque]

    def reading_tests(
        self,
        test_files: Sequence[str],
        changed: Mapping[str, tuple[str | None, str | None]],
        disk_text: Callable[[str], str | None],
    ) -> list[str]:
        """The tests of ``test_files`` the newest snapshot recording them
        saw read a file whose text is not the one they read (before the
        run or now): for a choice by names, they run whatever names they
        hold."""
        return [
            n
            for snap, n in self._newest(test_files)
            if read_changed(snap, n, changed, disk_text, self.parses.digest)
        ]

    def _diff(
        self,
        snap: Snapshot,
        changed: Mapping[str, tuple[str | None, str | None]],
        disk_text: Callable[[str], str | None],
        stale: set[Unit] | None = None,
    ) -> dict[Unit, Spans | None] | tuple[str, str]:
        """The functions of ``snap``'s files that differ before the run or
        now, each with the lines of its statements that do (in the
        snapshot's text; None: not told, the whole function); or (a file,
        why) when one differs at module level. ``stale`` gets those that
        differ before the run."""
        differs: dict[Unit, Spans | None] = {}
        snap.void_before = False
        for path, then in snap.files.items():
            texts = changed.get(path)
            if texts is None:
                text = disk_text(path)
                texts = (text, text)
            if texts == (None, None) and path in snap.collected:
                continue  # a test file gone: only pytest imported it, its tests go with it
            for at, text in enumerate(texts):
                snap.void_before = at == 0
                if text is None:
                    return path, f"{path} is gone, or its earlier text is not known"
                model = self._model(text)
                if model is None:
                    return path, f"{path} does not parse"
                if model.sha == then.sha:
                    continue
                if model.skeleton != then.skeleton:
                    return path, (
                        f"{path} changed at module level (imports, class bodies, decorators, "
                        "constants)"
                    )
                for name in set(model.functions) | set(then.functions):
                    if model.functions.get(name) != then.functions.get(name):
                        if under_memo(name, snap.memo_reach):
                            return path, (
                                f"{path}: {name} may run under a memoized function "
                                "(its cache serves tests whose records never show it)"
                            )
                        if at == 0 and stale is not None:
                            stale.add((path, name))
                        spans = self._models.spans(then, model, name)
                        if (path, name) in differs:
                            was = differs[(path, name)]
                            spans = None if was is None or spans is None else was + spans
                        differs[(path, name)] = spans
        snap.void_before = False
        return differs


def _reached(
    snap: Snapshot,
    differs: Mapping[Unit, Spans | None],
    node: str,
    ran: Iterable[Unit],
    by_line: dict[tuple[int, Unit], tuple[frozenset[str], frozenset[str]]],
) -> bool:
    """Test ``node`` ran one of the changed functions ``ran``, and a
    changed statement of it (or its lines there are not known, or the
    change is not told by line); ``by_line``: what each function's lines
    told, kept for the verdict's other tests."""
    for unit in ran:
        spans = differs[unit]
        if spans is None:
            return True
        key = (snap.order, unit)
        if key not in by_line:
            by_line[key] = snap.by_line(unit, spans)
        known, hit = by_line[key]
        if node not in known or node in hit:
            return True
    return False
