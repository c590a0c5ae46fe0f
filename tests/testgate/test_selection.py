"""Which tests run: the test files a change reaches through the project's
imports, the whole suite when that cannot be told, and why."""

from __future__ import annotations

from pathlib import Path

from rein.testgate.selection import TestSelection, select_tests
from tests.testgate.projects import project

LIB = {
    "pkg/__init__.py": "from .core import run\nfrom .other import other\n",
    "pkg/util.py": "def helper() -> int:\n    return 1\n",
    "pkg/core.py": "from .util import helper\n\ndef run() -> int:\n    return helper()\n",
    "pkg/other.py": "def other() -> int:\n    return 2\n",
    "pkg/orphan.py": "X = 1\n",
}


def test_a_direct_importer_is_selected_with_its_chain(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_core.py": "from pkg.core import run\n",
            "tests/test_other.py": "from pkg.other import other\n",
        },
    )
    selection = select_tests(root, ["pkg/core.py"])
    assert selection == TestSelection(
        ("tests/test_core.py",),
        False,
        "1 of 2 test files reach the change (1 import a changed file); 1 more import it "
        "through a package's __init__ (collected: an import the change breaks fails them)",
        {
            "tests/test_core.py": ("pkg/core.py", "tests/test_core.py"),
            # Importing pkg.other runs pkg/__init__.py, which imports pkg.core.
            "tests/test_other.py": (
                "pkg/core.py",
                "pkg/__init__.py",
                "pkg/other.py",
                "tests/test_other.py",
            ),
        },
        2,
        importing=("tests/test_other.py",),
        modules=("pkg/__init__.py", "pkg/core.py"),
        # The rest of the project, for the per-test selection's names.
        others=("pkg/orphan.py", "pkg/other.py", "pkg/util.py"),
    )


def test_a_transitive_importer_is_selected_through_relative_imports(tmp_path: Path) -> None:
    # pkg/core.py imports pkg/util.py as ``from .util import helper``.
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_core.py": "from pkg.core import run\n",
            "tests/test_other.py": "from pkg.other import other\n",
        },
    )
    selection = select_tests(root, ["pkg/util.py"])
    assert selection.files == ("tests/test_core.py",)
    assert selection.chains["tests/test_core.py"] == (
        "pkg/util.py",
        "pkg/core.py",
        "tests/test_core.py",
    )
    assert not selection.run_all
    assert "through other modules" in selection.reason


def test_src_layout_modules_are_found_by_their_import_name(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "src/lib/__init__.py": "",
            "src/lib/mod.py": "X = 1\n",
            "tests/test_mod.py": "from lib.mod import X\n",
            "tests/test_none.py": "import os\n",
        },
    )
    assert select_tests(root, ["src/lib/mod.py"]).files == ("tests/test_mod.py",)


def test_a_package_reexport_reaches_only_the_tests_that_take_the_changed_name(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_run.py": "from pkg import run\n",
            "tests/test_other.py": "from pkg import other\n",
            "tests/test_whole.py": "import pkg\n",
        },
    )
    selection = select_tests(root, ["pkg/core.py"])
    assert selection.files == ("tests/test_run.py", "tests/test_whole.py")
    assert selection.chains["tests/test_run.py"] == (
        "pkg/core.py",
        "pkg/__init__.py",
        "tests/test_run.py",
    )


def test_a_changed_package_init_reaches_every_importer_of_the_package(tmp_path: Path) -> None:
    # Importing pkg.other runs pkg/__init__.py first.
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_other.py": "from pkg.other import other\n",
            "tests/test_none.py": "import os\n",
        },
    )
    selection = select_tests(root, ["pkg/__init__.py"])
    assert selection.files == ("tests/test_other.py",)
    assert selection.chains["tests/test_other.py"] == (
        "pkg/__init__.py",
        "pkg/other.py",
        "tests/test_other.py",
    )


def test_a_changed_test_file_is_selected_and_a_deleted_one_is_not(tmp_path: Path) -> None:
    root = project(tmp_path, {**LIB, "tests/test_a.py": "def test() -> None: ...\n"})
    selection = select_tests(root, ["tests/test_a.py", "tests/test_gone.py"])
    assert selection.files == ("tests/test_a.py",)
    assert selection.chains == {"tests/test_a.py": ("tests/test_a.py",)}
    assert selection.reason == "1 of 1 test files reach the change (1 changed)"


def test_a_deleted_module_selects_the_tests_that_still_import_it(tmp_path: Path) -> None:
    root = project(tmp_path, {**LIB, "tests/test_gone.py": "from pkg.gone import x\n"})
    assert select_tests(root, ["pkg/gone.py"]).files == ("tests/test_gone.py",)


def test_a_changed_conftest_runs_everything(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/conftest.py": "",
            "tests/unit/conftest.py": "",
            "tests/unit/test_a.py": "",
            "tests/test_b.py": "",
        },
    )
    selection = select_tests(root, ["pkg/core.py", "tests/unit/conftest.py"])
    assert selection.run_all
    assert selection.files == ("tests/test_b.py", "tests/unit/test_a.py")
    assert selection.total_files == 2
    assert "tests/unit/conftest.py" in selection.reason


def test_a_data_or_config_change_runs_everything(tmp_path: Path) -> None:
    root = project(tmp_path, {**LIB, "tests/test_a.py": "", "tests/data/in.json": "{}"})
    for changed in ("tests/data/in.json", "pyproject.toml", "setup.cfg", "pkg/table.csv"):
        selection = select_tests(root, ["pkg/core.py", changed])
        assert selection.run_all, changed
        assert changed in selection.reason


def test_a_tool_cache_change_is_no_input_of_the_tests(tmp_path: Path) -> None:
    # A `run_command` of pytest writes .pytest_cache and pytest-benchmark's
    # .benchmarks: the shadow the tests run in has neither, so neither sends
    # the gate to the whole suite.
    root = project(
        tmp_path, {**LIB, "tests/test_a.py": "", "tests/test_core.py": "import pkg.core\n"}
    )
    caches = [
        ".benchmarks/Linux-CPython-3.11-64bit/0001_run.json",
        ".pytest_cache/v/cache/lastfailed",
    ]
    assert select_tests(root, caches).reason == "no file changed"
    selection = select_tests(root, ["pkg/core.py", *caches])
    assert not selection.run_all
    assert selection.files == ("tests/test_core.py",)


def test_a_docs_change_selects_nothing_rather_than_everything(tmp_path: Path) -> None:
    root = project(tmp_path, {**LIB, "tests/test_a.py": "import pkg\n", "docs/guide.md": "# Hi\n"})
    selection = select_tests(root, ["docs/guide.md"])
    assert (selection.files, selection.run_all) == ((), False)
    assert selection.reason == "only documentation changed (docs/guide.md)"
    # Documentation that pytest collects (a test path) is no longer inert.
    project(root, {"pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests", "docs"]\n'})
    assert select_tests(root, ["docs/guide.md"]).run_all


def test_testpaths_and_python_files_decide_what_a_test_file_is(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "tests/test_core.py": "from pkg.core import run\n",
            "scripts/test_tool.py": "from pkg.core import run\n",
            "tests/check_core.py": "from pkg.core import run\n",
        },
    )
    selection = select_tests(root, ["pkg/core.py"])
    assert (selection.files, selection.total_files) == (("tests/test_core.py",), 1)
    # pytest.ini comes first in pytest's order.
    project(root, {"pytest.ini": "[pytest]\npython_files = check_*.py\n"})
    selection = select_tests(root, ["pkg/core.py"])
    assert (selection.files, selection.total_files) == (("tests/check_core.py",), 1)


def test_folders_pytest_skips_are_not_searched(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_a.py": "",
            ".venv/lib/test_x.py": "",
            "node_modules/m/test_y.py": "",
            "build/lib/test_z.py": "",
            ".hidden/test_w.py": "",
        },
    )
    assert select_tests(root, ["tests/test_a.py"]).total_files == 1


def test_max_tests_keeps_the_nearest_and_says_how_many_were_left_out(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_a.py": "from pkg.util import helper\n",
            "tests/test_b.py": "from pkg.core import run\n",
            "tests/test_c.py": "from pkg.util import helper\n",
        },
    )
    selection = select_tests(root, ["pkg/util.py"], max_tests=2)
    assert selection.files == ("tests/test_a.py", "tests/test_c.py")
    assert set(selection.chains) == {"tests/test_a.py", "tests/test_c.py"}
    assert not selection.run_all
    assert selection.reason.endswith("; 1 left out (at most 2)")
    assert selection.reason.startswith("3 of 3 test files reach the change")


def test_a_module_nothing_imports_selects_nothing_and_says_so(tmp_path: Path) -> None:
    root = project(tmp_path, {**LIB, "tests/test_core.py": "from pkg.core import run\n"})
    selection = select_tests(root, ["pkg/orphan.py"])
    assert (selection.files, selection.run_all, selection.total_files) == ((), False, 1)
    assert (
        selection.reason == "no test file imports pkg/orphan.py, directly or through other modules"
    )


def test_a_test_helper_selects_its_importers_or_everything_when_none(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/helpers.py": "X = 1\n",
            "tests/loose.py": "Y = 1\n",
            "tests/test_a.py": "from tests.helpers import X\n",
            "tests/test_b.py": "",
        },
    )
    assert select_tests(root, ["tests/helpers.py"]).files == ("tests/test_a.py",)
    selection = select_tests(root, ["tests/loose.py"])
    assert selection.run_all
    assert "tests/loose.py" in selection.reason


def test_a_conftest_reached_through_imports_selects_the_tests_below_it(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/unit/conftest.py": "from pkg.other import other\n",
            "tests/unit/test_a.py": "",
            "tests/test_b.py": "",
        },
    )
    selection = select_tests(root, ["pkg/other.py"])
    assert selection.files == ("tests/unit/test_a.py",)
    assert selection.chains["tests/unit/test_a.py"] == (
        "pkg/other.py",
        "tests/unit/conftest.py",
        "tests/unit/test_a.py",
    )


def test_an_absolute_path_inside_the_root_counts_and_nothing_changed_says_so(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {**LIB, "tests/test_core.py": "from pkg.core import run\n"})
    assert select_tests(root, [str(root / "pkg" / "core.py")]).files == ("tests/test_core.py",)
    assert select_tests(root, []).reason == "no file changed"


def test_an_edit_after_the_first_selection_is_seen(tmp_path: Path) -> None:
    root = project(tmp_path, {**LIB, "tests/test_x.py": "import os\n"})
    assert select_tests(root, ["pkg/orphan.py"]).files == ()
    project(root, {"tests/test_x.py": "from pkg.orphan import X\n"})
    assert select_tests(root, ["pkg/orphan.py"]).files == ("tests/test_x.py",)


def test_setup_cfg_and_tox_ini_are_read_and_a_dot_test_path_is_the_root(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "a/test_a.py": "",
            "b/test_b.py": "",
            "setup.cfg": "[tool:pytest]\ntestpaths = a\n",
        },
    )
    assert select_tests(root, []).total_files == 1
    project(root, {"tox.ini": "[pytest]\ntestpaths = b\n"})  # before setup.cfg
    assert select_tests(root, ["b/test_b.py"]).files == ("b/test_b.py",)
    project(root, {"tox.ini": "[pytest]\ntestpaths = .\n"})
    assert select_tests(root, []).total_files == 2


def test_a_text_file_pytest_collects_as_a_doctest_is_no_inert_documentation(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, {**LIB, "tests/test_a.py": "", "docs/test_usage.txt": ">>> 1\n1\n"})
    assert select_tests(root, ["docs/test_usage.txt"]).run_all


def test_a_whole_package_import_counts_only_the_names_the_file_uses(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "tests/test_run.py": "import pkg as p\n\ndef test() -> None:\n    assert p.run() == 1\n",
            "tests/test_other.py": "import pkg\n\ndef test() -> None:\n    assert pkg.other() == 2\n",
            "tests/test_bare.py": "import pkg\n\ndef test() -> None:\n    assert getattr(pkg, 'x')\n",
        },
    )
    selection = select_tests(root, ["pkg/core.py"])
    assert selection.files == ("tests/test_bare.py", "tests/test_run.py")


def test_a_star_reexport_follows_the_modules_all(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "star/__init__.py": "from .a import *\nfrom .b import *\n",
            "star/a.py": "__all__ = ['fa']\n\ndef fa() -> int:\n    return 1\n",
            "star/b.py": "def fb() -> int:\n    return 2\n",  # no __all__: all of it
            "tests/test_fa.py": "from star import fa\n",
            "tests/test_fb.py": "from star import fb\n",
        },
    )
    assert select_tests(root, ["star/a.py"]).files == ("tests/test_fa.py",)
    assert select_tests(root, ["star/b.py"]).files == ("tests/test_fa.py", "tests/test_fb.py")


def test_a_name_an_init_defines_itself_may_use_what_it_imports(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            **LIB,
            "pkg/__init__.py": LIB["pkg/__init__.py"]
            + "\ndef twice() -> int:\n    return 2 * run()\n",
            "lazy/__init__.py": "from .core import run\n\ndef __getattr__(name: str) -> object: ...\n",
            "lazy/core.py": "def run() -> None: ...\n",
            "tests/test_twice.py": "from pkg import twice\n",
            "tests/test_other.py": "from pkg import other\n",
            "tests/test_lazy.py": "from lazy import anything\n",
        },
    )
    assert select_tests(root, ["pkg/core.py"]).files == ("tests/test_twice.py",)
    # A module __getattr__ may hand out anything: all of the package.
    assert select_tests(root, ["lazy/core.py"]).files == ("tests/test_lazy.py",)
