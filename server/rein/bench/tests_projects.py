"""The projects of ``rein bench tests --corpus``: pinned releases from PyPI
that ship their test suites, the ones measured by default and the slow
ones ``--projects`` may name, and the choice ``--projects`` and
``--edits`` make (:mod:`rein.bench.tests_corpus` measures them)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["SLOW_CORPUS", "TESTS_CORPUS", "TestProject", "choose_projects"]


@dataclass(frozen=True, slots=True)
class TestProject:
    """A project of the corpus: its seeded modules are the ``.py`` files
    under ``package`` (tests left out); the extra tests go in ``tests``."""

    __test__ = False  # not a pytest test class

    name: str
    version: str
    package: str
    tests: str
    edits: int = 30
    #: At most this many seeds are tried for ``edits`` counted ones.
    tries: int = 90
    #: pytest options the bench adds for this project (``PYTEST_ADDOPTS``
    #: of every run, the gate's included), never the gate itself.
    addopts: str = ""


TESTS_CORPUS = (
    TestProject("toolz", "1.0.0", "toolz", "toolz/tests"),
    TestProject("more-itertools", "10.5.0", "more_itertools", "tests"),
    TestProject("cachetools", "5.5.0", "src/cachetools", "tests"),
    # click 8.1.7's setup.cfg turns warnings into errors, and pytest 9
    # warns of its parametrize over an iterator (removed in pytest 10);
    # pytest-asyncio 1.x (Rein's venv runs the bench's suites) warns at
    # start-up that ``asyncio_default_fixture_loop_scope`` is unset, which
    # stopped every run of click's suite ("pytest exited with 3"): click has
    # no asyncio test, so the plugin is left out.
    TestProject(
        "click",
        "8.1.7",
        "src/click",
        "tests",
        addopts="-W ignore::pytest.PytestRemovedIn10Warning -p no:asyncio",
    ),
    # Markdown's tests are unittest cases (it runs them with unittest);
    # test_legacy.py turns every warning into an error at import, so
    # pytest's warning that it cannot collect the plain ``TestSuite``
    # another module imports stops the collection: plain classes are not
    # collected (unittest cases are, whatever their name).
    TestProject("Markdown", "3.7", "markdown", "tests", addopts="-o python_classes=TestCase"),
    # Its pytest.ini adds --doctest-modules: three doctests of its modules
    # are tests too.
    TestProject("parso", "0.8.4", "parso", "test"),
)
#: Known to ``--projects`` but not run by default: attrs's suite (with
#: hypothesis) takes 10-30 s, so its truth runs take most of an hour.
SLOW_CORPUS = (TestProject("attrs", "24.2.0", "src/attr", "tests"),)


def choose_projects(spec: str | None, edits: str | None) -> list[TestProject]:
    """The projects ``--projects`` names (``NAME[==VERSION],...``; the
    default corpus without it), each with ``--edits`` seeds when given."""
    known = {p.name: p for p in (*TESTS_CORPUS, *SLOW_CORPUS)}
    chosen = list(TESTS_CORPUS)
    if spec:
        chosen = []
        for item in spec.split(","):
            name, _, version = item.strip().partition("==")
            base = known.get(name)
            if base is None:
                raise SystemExit(f"unknown tests corpus project {name!r}: one of {sorted(known)}")
            chosen.append(dataclasses.replace(base, version=version or base.version))
    if edits:
        chosen = [dataclasses.replace(p, edits=int(edits), tries=3 * int(edits)) for p in chosen]
    return chosen
