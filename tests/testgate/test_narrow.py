"""Per-test selection: the tests naming what a change reaches, else why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.testgate.narrow import Narrowed, Narrower
from rein.testgate.narrow_units import changed_lines
from tests.testgate.projects import counted_parses, project, verdict_on

LIB = (
    '"""The library."""\n\nimport os\n\n\n'
    "def low(x):\n    return x + 1\n\n\n"
    "def high(x):\n    return low(x) * 2\n\n\n"
    "def other(x):\n    return x\n\n\n"
    "def spare():\n    # nothing\n    return 0\n\n\n"
    "class Box:\n    def __init__(self, x):\n        self.x = x\n\n"
    "    def size(self):\n        return self.x\n\n"
    "    def name(self):\n        return 'box'\n\n\n"
    "ALIAS = high\n"
    "globals().update({k: v for k, v in {'one': 1}.items()})\n"
)
TESTS = (
    "import unittest\n\nimport pytest\n\nfrom lib import ALIAS, Box, high, other\n\n\n"
    "def helper():\n    return ALIAS(1)\n\n\n"
    "def test_high():\n    assert helper() == 4\n\n\n"
    "def test_other():\n    assert other(1) == 1\n\n\n"
    "@pytest.fixture\ndef box():\n    return Box(1)\n\n\n"
    "def test_box_fixture(box):\n    assert box\n\n\n"
    "class TestBox:\n    def test_size(self):\n        assert Box(2).size() == 2\n\n"
    "    def test_name(self):\n        assert Box(2).name() == 'box'\n\n\n"
    "class Mixed(unittest.TestCase, object):\n"
    "    def test_other(self):\n        assert other(2) == 2\n"
)
MIXIN = "from tests.helpers import Shared\n\n\nclass TestShared(Shared):\n    pass\n"


def _narrow(root: Path, before: str, now: str, files=("tests/test_lib.py",)) -> Narrowed | str:
    return Narrower(root).narrow(files, ("lib.py",), {"lib.py": (before, now)})


def test_a_changed_function_keeps_the_tests_naming_it_or_what_calls_it(tmp_path: Path) -> None:
    root = project(tmp_path, {"lib.py": LIB, "tests/test_lib.py": TESTS})
    # low -> high -> ALIAS -> helper -> test_high; nothing else names them.
    narrowed = _narrow(root, LIB, LIB.replace("x + 1", "x + 2"))

    assert narrowed == Narrowed(("tests/test_lib.py",), ("tests/test_lib.py::test_high",), ("low",))


def test_a_method_keeps_its_tests_and_a_dunder_keeps_every_user_of_the_class(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {"lib.py": LIB, "tests/test_lib.py": TESTS})
    size = _narrow(root, LIB, LIB.replace("return self.x", "return -self.x"))
    init = _narrow(root, LIB, LIB.replace("self.x = x", "self.x = -x"))

    assert isinstance(size, Narrowed) and isinstance(init, Narrowed)
    assert size.only == ("tests/test_lib.py::TestBox::test_size",)
    # __init__ stands for Box: the fixture naming it, and both methods.
    assert init.only == (
        "tests/test_lib.py::test_box_fixture",
        "tests/test_lib.py::TestBox::test_size",
        "tests/test_lib.py::TestBox::test_name",
    )


def test_a_class_with_a_foreign_base_is_kept_whole_and_imports_are_collected(
    tmp_path: Path,
) -> None:
    tests = TESTS.replace("(unittest.TestCase, object)", "(unittest.TestCase, Base)")
    tests = tests.replace("import unittest\n", "import unittest\n\nfrom base import Base\n")
    root = project(
        tmp_path,
        {
            "lib.py": LIB,
            "tests/test_lib.py": tests,
            "tests/test_imports.py": "from lib import low\n",
        },
    )
    narrowed = _narrow(
        root, LIB, LIB.replace("x + 1", "x + 2"), ("tests/test_imports.py", "tests/test_lib.py")
    )

    assert isinstance(narrowed, Narrowed)
    assert narrowed.only == ("tests/test_lib.py::test_high", "tests/test_lib.py::Mixed")
    # test_imports.py runs nothing but is collected: an import the change
    # broke would show.
    assert narrowed.files == ("tests/test_imports.py", "tests/test_lib.py")


def test_an_autouse_fixture_or_a_changed_test_file_keeps_the_whole_file(tmp_path: Path) -> None:
    autouse = (
        "import pytest\n\nfrom lib import low\n\n\n"
        "@pytest.fixture(autouse=True)\ndef ready():\n    low(1)\n\n\n"
        "def test_plain():\n    assert True\n"
    )
    root = project(tmp_path, {"lib.py": LIB, "tests/test_lib.py": autouse})
    narrowed = _narrow(root, LIB, LIB.replace("x + 1", "x + 2"))
    changed = Narrower(root).narrow(
        ("tests/test_lib.py",), ("lib.py",), {"tests/test_lib.py": (autouse, autouse + "\n")}
    )

    assert isinstance(narrowed, Narrowed) and narrowed.only == ("tests/test_lib.py",)
    assert isinstance(changed, Narrowed) and changed.only == ("tests/test_lib.py",)


def test_what_cannot_be_told_runs_the_whole_files_and_says_why(tmp_path: Path) -> None:
    root = project(tmp_path, {"lib.py": LIB, "tests/test_lib.py": TESTS})
    cases = {
        "module docstring": (LIB, LIB.replace("The library", "A library")),
        "module-level call": (LIB, LIB.replace("'one': 1", "'one': 2")),
        "comment": (LIB, LIB.replace("# nothing", "# nothing at all")),
        "unknown": (None, LIB),
        "no parse": (LIB, LIB + "def (\n"),
        "no test": (LIB, LIB.replace("return 0", "return 1")),
    }
    reasons = {k: _narrow(root, before, now) for k, (before, now) in cases.items()}  # type: ignore[arg-type]

    assert reasons == {
        "module docstring": "lib.py:1 changed outside any definition",
        "module-level call": "lib.py:35 changed outside any definition",
        "comment": "the change touches no definition (comments or blank lines only)",
        "unknown": "lib.py was created or deleted, or its text before the run is not known",
        "no parse": "lib.py does not parse",
        "no test": "no test names spare or what reaches it",
    }


def test_a_conftest_naming_the_change_or_renamed_test_functions_run_whole_files(
    tmp_path: Path,
) -> None:
    conftest = "import pytest\n\nfrom lib import low\n\n\n@pytest.fixture\ndef value():\n    return low(1)\n"
    root = project(
        tmp_path / "a", {"lib.py": LIB, "tests/test_lib.py": TESTS, "tests/conftest.py": conftest}
    )
    hooked = Narrower(root).narrow(
        ("tests/test_lib.py",),
        ("lib.py", "tests/conftest.py"),
        {"lib.py": (LIB, LIB.replace("x + 1", "x + 2"))},
    )
    renamed = project(
        tmp_path / "b",
        {
            "lib.py": LIB,
            "tests/test_lib.py": TESTS,
            "pytest.ini": "[pytest]\npython_functions = check_*\n",
        },
    )

    assert hooked == "tests/conftest.py names low (a conftest.py hook or fixture)"
    assert _narrow(renamed, LIB, LIB.replace("x + 1", "x + 2")) == (
        "the project renames pytest's test functions or classes"
    )


def test_changed_lines_are_code_lines_of_each_side() -> None:
    before = "a = 1\n# note\nb = 2\nc = 3\n"
    now = "a = 1\n# a note\nb = 20\nc = 3\nd = 4\n"

    assert changed_lines(before, now) == ({3}, {3, 5})


def test_a_restored_file_has_the_names_of_its_earlier_change_in_the_run(tmp_path: Path) -> None:
    root = project(tmp_path, {"lib.py": LIB, "tests/test_lib.py": TESTS})
    narrower = Narrower(root)
    files, modules = ("tests/test_lib.py",), ("lib.py",)
    broken = narrower.narrow(files, modules, {"lib.py": (LIB, LIB.replace("x + 1", "x + 2"))})
    repaired = narrower.narrow(files, modules, {"lib.py": (LIB, LIB)})
    narrower.forget()  # the run is over

    assert isinstance(broken, Narrowed) and repaired == broken
    assert narrower.narrow(files, modules, {"lib.py": (LIB, LIB)}) == (
        "the change touches no definition (comments or blank lines only)"
    )


def test_a_module_level_call_naming_a_reached_name_runs_whole_files(tmp_path: Path) -> None:
    registry = LIB + "REGISTRY = {}\nREGISTRY.update(one=spare())\n"
    root = project(tmp_path, {"lib.py": registry, "tests/test_lib.py": TESTS})

    assert _narrow(root, registry, registry.replace("return 0", "return 1")) == (
        "lib.py:37 runs spare at import (a module-level statement)"
    )


def test_a_module_level_store_into_an_object_naming_a_reached_name_runs_whole_files(
    tmp_path: Path,
) -> None:
    """Old (review31): ``REGISTRY['one'] = spare()`` was a plain assignment
    that bound nothing, so what it filled reached no test."""
    for store in ("REGISTRY['one'] = spare()", "Box.default = spare()"):
        registry = LIB + f"REGISTRY = {{}}\n{store}\n"
        root = project(tmp_path / str(len(store)), {"lib.py": registry, "tests/test_lib.py": TESTS})

        assert _narrow(root, registry, registry.replace("return 0", "return 1")) == (
            "lib.py:37 runs spare at import (a module-level statement)"
        ), store
    # Names (a tuple of them too) are bound as before.
    plain = LIB + "ONE, (TWO, *REST) = spare(), (1, 2)\n"
    root = project(tmp_path / "plain", {"lib.py": plain, "tests/test_lib.py": TESTS})
    assert _narrow(root, plain, plain.replace("return 0", "return 1")) == (
        "no test names spare or what reaches it"
    )


CORE = "def compute(x):\n    return x + 2\n\n\ndef other():\n    return 0\n"
VIS = (
    "class V:\n    def visit(self, kind):\n        return getattr(self, 'visit_' + kind)()\n\n"
    "    def visit_name(self):\n        return 1\n\n"
    "    def visit_call(self):\n        return 2\n"
)


def _narrow_core(tmp_path: Path, tests: str) -> Narrowed | str:
    root = project(tmp_path, {"core.py": CORE, "tests/test_core.py": tests})
    return Narrower(root).narrow(
        ("tests/test_core.py",), ("core.py",), {"core.py": (CORE, CORE.replace("x + 2", "x + 3"))}
    )


def test_what_pytest_finds_by_other_names_or_makes_is_followed(tmp_path: Path) -> None:
    """A fixture's ``name=``, a test made by a call and
    ``pytest_generate_tests`` are followed; a computed ``getattr`` (or a
    ``__getattr__``) in a reached module runs the files whole."""
    head = "import pytest\n\nfrom core import compute, other\n\n\n"
    plain = "def test_other():\n    assert other() == 0\n"
    named = _narrow_core(
        tmp_path / "named",
        head + "@pytest.fixture(name='value')\ndef _value_fixture():\n    return compute(1)\n\n\n"
        "def test_value(value):\n    assert value == 3\n\n\n" + plain,
    )
    made = _narrow_core(
        tmp_path / "made",
        head + "def _make(n):\n    def t():\n        assert compute(n) == n + 2\n    return t\n\n\n"
        "test_made = _make(3)\n\n\n" + plain,
    )
    generated = _narrow_core(
        tmp_path / "generated",
        head + "def pytest_generate_tests(metafunc):\n"
        "    if 'n' in metafunc.fixturenames:\n"
        "        metafunc.parametrize('n', [compute(0)])\n\n\n"
        "def test_n(n):\n    assert n\n\n\n" + plain,
    )
    root = project(
        tmp_path / "vis",
        {
            "vis.py": VIS,
            "tests/test_vis.py": (
                "from vis import V\n\n\ndef test_direct():\n    assert V().visit_call() == 2\n\n\n"
                "def test_dispatch():\n    assert V().visit('name') == 1\n"
            ),
        },
    )
    dispatched = Narrower(root).narrow(
        ("tests/test_vis.py",), ("vis.py",), {"vis.py": (VIS, VIS.replace("return 1", "return 3"))}
    )

    assert isinstance(named, Narrowed) and named.only == ("tests/test_core.py::test_value",)
    assert isinstance(made, Narrowed) and made.only == ("tests/test_core.py",)
    assert isinstance(generated, Narrowed) and generated.only == ("tests/test_core.py",)
    assert dispatched == (
        "vis.py looks names up by a computed getattr (or defines __getattr__): "
        "what a change of it reaches cannot be told"
    )


def test_a_module_too_deep_for_the_parser_runs_the_files_whole(tmp_path: Path) -> None:
    deep = CORE + "\nDEEP = 1" + "+1" * 10_000 + "\n"
    root = project(
        tmp_path, {"core.py": CORE, "deep.py": deep, "tests/test_core.py": "import core\n"}
    )
    narrowed = Narrower(root).narrow(
        ("tests/test_core.py",),
        ("core.py", "deep.py"),
        {"core.py": (CORE, CORE.replace("x + 2", "x + 3"))},
    )

    assert isinstance(narrowed, str)
    assert narrowed.startswith("deep.py could not be parsed here (RecursionError: ")


def test_the_text_before_the_run_is_parsed_once_for_the_runs_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, {"lib.py": LIB, "tests/test_lib.py": TESTS})
    parsed = counted_parses(monkeypatch)
    narrower = Narrower(root)
    for now in (LIB.replace("x + 1", "x + 2"), LIB.replace("x + 1", "x + 3")):
        narrowed = narrower.narrow(("tests/test_lib.py",), ("lib.py",), {"lib.py": (LIB, now)})
        assert isinstance(narrowed, Narrowed) and narrowed.names == ("low",)
    assert parsed.count(LIB) == 1


async def test_a_method_a_base_class_elsewhere_calls_by_name_keeps_its_callers_tests(
    tmp_path: Path,
) -> None:
    # parso's miss: Normalizer.visit (normalizer.py) calls self.visit_node,
    # which PEP8Normalizer (pep8.py, which imports normalizer.py, not the
    # other way round) overrides; the test names neither pep8 nor visit_node.
    # Neither a module-level statement of a module importing nothing the
    # change reaches (cli.py) nor a script's main() guard (parso's
    # fuzz_diff_parser.py) runs what the change reaches at import.
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Base:\n    def run(self):\n        return self.step()\n",
        "pkg/cli.py": (
            "from pkg.base import Base\n\n\ndef main():\n    return Base().run()\n\n\n"
            "HANDLERS = []\nHANDLERS.append(main)\n"
        ),
        "tests/script.py": (
            "from pkg.impl import Impl\n\n\ndef main():\n    return Impl().run()\n\n\n"
            "if __name__ == '__main__':\n    main()\n"
        ),
        "pkg/impl.py": (
            "from pkg.base import Base\n\n\nclass Impl(Base):\n"
            "    def step(self):\n        return 1\n"
        ),
        "tests/test_impl.py": (
            "from pkg.impl import Impl\n\n\n"
            "def test_step():\n    assert Impl().step() == 1\n\n\n"
            "def test_run():\n    assert Impl().run() == 1\n"
        ),
    }
    root = project(tmp_path / "proj", files)
    broken = files["pkg/impl.py"].replace("return 1", "return 2")
    outcome = await verdict_on(root, "pkg/impl.py", broken)

    assert [b.message.split(" failed")[0] for b in outcome.blockers] == [
        "tests/test_impl.py::test_step",
        "tests/test_impl.py::test_run",
    ]
    assert "per test: 2 tests" in outcome.detail, outcome.detail
