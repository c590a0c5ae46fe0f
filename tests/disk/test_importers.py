"""The import index: which workspace files import a changed module (the
files a large workspace's file-by-file analyzer must also look at)."""

from __future__ import annotations

from rein.disk.importers import ImportIndex
from rein.python_imports import imported_modules, module_name

FILES = {
    "pkg/__init__.py": "from pkg.core import run\n",
    "pkg/core.py": "def run() -> None: ...\n",
    "pkg/util.py": "from .core import run  # relative\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "from .. import core\n",
    "app.py": "import pkg.core as c\n",
    "cli.py": "from pkg import (\n    run,\n)\n",
    "other.py": "import os\nfrom pkg import util\n",
    "src/lib/mod.py": "from lib.base import X\n",
    "src/lib/base.py": "X = 1\n",
}


def index() -> ImportIndex:
    return ImportIndex(FILES, FILES.get)


def test_module_names_follow_paths_packages_and_src() -> None:
    assert module_name("pkg/core.py") == "pkg.core"
    assert module_name("pkg/__init__.py") == "pkg"
    assert module_name("src/lib/mod.py") == "lib.mod"
    assert module_name("README.md") is None
    assert module_name("my-scripts/x.py") is None


def test_relative_and_parenthesised_imports_are_resolved() -> None:
    assert "pkg.core" in imported_modules("pkg/util.py", FILES["pkg/util.py"])
    assert "pkg.core" in imported_modules("pkg/sub/deep.py", FILES["pkg/sub/deep.py"])
    assert {"pkg", "pkg.run"} <= imported_modules("cli.py", FILES["cli.py"])


def test_importers_include_direct_relative_and_re_exported_uses() -> None:
    found = index().importers("pkg/core.py", 10)
    # pkg/__init__ re-exports pkg.core, so importers of pkg count too.
    assert sorted(found) == [
        "app.py",
        "cli.py",
        "other.py",
        "pkg/__init__.py",
        "pkg/sub/deep.py",
        "pkg/util.py",
    ]
    # Same package first, and the limit holds.
    assert index().importers("pkg/core.py", 2) == ["pkg/__init__.py", "pkg/util.py"]
    assert index().importers("src/lib/base.py", 10) == ["src/lib/mod.py"]
    assert index().importers("app.py", 10) == []


def test_an_update_reindexes_the_changed_file() -> None:
    files = dict(FILES)
    idx = ImportIndex(files, files.get)
    assert "app.py" in idx.importers("pkg/core.py", 10)
    files["app.py"] = "import json\n"
    idx.update("app.py")
    assert "app.py" not in idx.importers("pkg/core.py", 10)
    files["new.py"] = "from pkg.core import run\n"
    idx.update("new.py")
    assert "new.py" in idx.importers("pkg/core.py", 10)
