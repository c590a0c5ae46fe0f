"""A plugin module no file imports, loaded by name (an entry point, a
dotted string), is reached by the tests that name it (Python-Markdown's
extensions: the corpus bench's seeds in them went unselected)."""

from __future__ import annotations

from pathlib import Path

from rein.testgate.by_name import entry_points
from rein.testgate.selection import select_tests
from tests.testgate.projects import GOOD, project, verdict_on

LOADER = (
    "import importlib\n\n\n"
    "def load(name):\n"
    "    return importlib.import_module(NAMES.get(name, name)).first_n\n\n\n"
    "NAMES = {}\n"
)
PLUGIN_BAD = "def first_n(xs, n):\n    return xs[: n + 1]\n"


def test_a_plugin_named_by_entry_point_or_dotted_string_selects_its_tests(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path,
        {
            "pyproject.toml": (
                "[project]\nname = 'pkg'\n\n"
                "[project.entry-points.'pkg.plugins']\n"
                "short = 'pkg.plugins.short:first_n'\n"
            ),
            "setup.cfg": "[options.entry_points]\npkg.plugins =\n    cfg = pkg.plugins.cfg\n",
            "pkg.egg-info/entry_points.txt": "[pkg.plugins]\negg = pkg.plugins.egg:first_n\n",
            "pkg/__init__.py": LOADER,
            "pkg/plugins/__init__.py": "",
            "pkg/plugins/short.py": GOOD,
            "pkg/plugins/cfg.py": GOOD,
            "pkg/plugins/egg.py": GOOD,
            "pkg/plugins/dotted.py": GOOD,
            "pkg/plugins/unnamed.py": GOOD,
            "tests/test_short.py": "from pkg import load\n\ndef test_it():\n    load('short')\n",
            "tests/test_cfg.py": "from pkg import load\n\ndef test_it():\n    load('cfg')\n",
            "tests/test_egg.py": 'from pkg import load\n\ndef test_it():\n    load("egg")\n',
            "tests/test_dotted.py": (
                "from pkg import load\n\ndef test_it():\n    load('pkg.plugins.dotted')\n"
            ),
            "tests/test_other.py": "from pkg import load\n\ndef test_it():\n    'pkg.plugins'\n",
        },
    )
    assert entry_points(root) == {
        "short": frozenset({"pkg.plugins.short"}),
        "cfg": frozenset({"pkg.plugins.cfg"}),
        "egg": frozenset({"pkg.plugins.egg"}),
    }
    for name in ("short", "cfg", "egg", "dotted"):
        selection = select_tests(root, [f"pkg/plugins/{name}.py"])
        assert selection.files == (f"tests/test_{name}.py",), name
        assert selection.chains[f"tests/test_{name}.py"] == (
            f"pkg/plugins/{name}.py",
            f"tests/test_{name}.py",
        )
    assert select_tests(root, ["pkg/plugins/unnamed.py"]).files == ()


async def test_a_bug_in_a_plugin_loaded_by_name_blocks(tmp_path: Path) -> None:
    # Real pytest: the test loads the plugin by its dotted name only.
    root = project(
        tmp_path / "proj",
        {
            "pkg/__init__.py": LOADER,
            "pkg/plugins/__init__.py": "",
            "pkg/plugins/dotted.py": GOOD,
            "tests/test_dotted.py": (
                "from pkg import load\n\n\n"
                "def test_first_two():\n"
                "    assert load('pkg.plugins.dotted')([1, 2, 3], 2) == [1, 2]\n"
            ),
        },
    )
    outcome = await verdict_on(root, "pkg/plugins/dotted.py", PLUGIN_BAD)
    assert [b.message.partition(" failed")[0] for b in outcome.blockers] == [
        "tests/test_dotted.py::test_first_two"
    ]
