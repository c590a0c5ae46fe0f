"""The import index: which workspace files import a changed module (the
files a large workspace's file-by-file analyzer must also look at)."""

from __future__ import annotations

import threading

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


TS_FILES = {
    "tsconfig.json": '{\n  // comment\n  "compilerOptions": {"baseUrl": "src", "paths": {"@app/*": ["app/*"],},},\n}\n',
    "src/lib/util.ts": "export function double(x: number) { return 2 * x; }\n",
    "src/lib/index.ts": 'export * from "./util";\n',
    "src/app/main.ts": 'import { double } from "../lib/util.js";\nconsole.log(double(2));\n',
    "src/app/cli.ts": 'import { double } from "lib";\n',
    "src/app/late.ts": 'const m = await import("@app/main");\nconst u = require("./../lib/util");\n',
    "src/app/other.ts": 'import express from "express";\nimport "./side-effect";\n',
    "src/legacy.js": "const util = require('./lib/util')\n",
    "README.md": 'import "./src/lib/util"\n',
}


def test_typescript_importers_follow_relative_specifiers_base_url_paths_and_index_files() -> None:
    idx = ImportIndex(TS_FILES, TS_FILES.get)
    # cli.ts imports the barrel lib/index.ts, which re-exports util.
    assert idx.importers("src/lib/util.ts", 10) == [
        "src/lib/index.ts",
        "src/app/cli.ts",
        "src/app/late.ts",
        "src/app/main.ts",
        "src/legacy.js",
    ]
    # lib/index.ts is "lib" by baseUrl; main.ts by the paths pattern.
    assert idx.importers("src/lib/index.ts", 10) == ["src/app/cli.ts"]
    assert idx.importers("src/app/main.ts", 10) == ["src/app/late.ts"]
    assert idx.importers("src/app/other.ts", 10) == []
    assert idx.importers("src/lib/util.ts", 2) == ["src/lib/index.ts", "src/app/cli.ts"]


BARREL_FILES = {
    "lib/a.ts": "export function f(x: number) { return x }\n",
    "lib/b.ts": "export const b = 1;\n",
    "lib/index.ts": "export * from './a';\nexport type { B } from './b';\nimport './side';\n",
    "lib/side.ts": "",
    "index.ts": "export { f as g } from './lib';\n",
    "app/use.ts": "import { f } from '../lib';\nf(1);\n",
    "app/top.ts": "import { g } from '..';\n",
    "app/unrelated.ts": "import { x } from './x';\n",
    "packages/core/package.json": '{"name": "@org/core", "types": "src/main.ts"}',
    "packages/core/src/main.ts": "export * from './impl';\n",
    "packages/core/src/impl.ts": "export const impl = 1;\n",
    "packages/core/src/deep/util.ts": "export const u = 1;\n",
    "packages/web/package.json": '{"name": "@org/web"}',
    "packages/web/index.ts": (
        "import { impl } from '@org/core';\nimport { u } from '@org/core/deep/util';\n"
        "import React from 'react';\n"
    ),
}


def test_typescript_barrels_pass_their_importers_on_and_workspace_packages_resolve() -> None:
    files = dict(BARREL_FILES)
    idx = ImportIndex(files, files.get)
    # Through lib/index.ts, and through index.ts re-exporting lib: bounded, transitive.
    assert idx.importers("lib/a.ts", 10) == ["lib/index.ts", "app/top.ts", "app/use.ts", "index.ts"]
    assert idx.importers("lib/b.ts", 10) == ["lib/index.ts", "app/top.ts", "app/use.ts", "index.ts"]
    # A plain import is no re-export: the barrel's importers are not side's.
    assert idx.importers("lib/side.ts", 10) == ["lib/index.ts"]
    # A monorepo's @org/core is met by its package.json's name.
    assert idx.importers("packages/core/src/impl.ts", 10) == [
        "packages/core/src/main.ts",
        "packages/web/index.ts",
    ]
    assert idx.importers("packages/core/src/deep/util.ts", 10) == ["packages/web/index.ts"]
    # A barrel that stops re-exporting stops passing importers on.
    files["lib/index.ts"] = "import './a';\n"
    idx.update("lib/index.ts")
    assert idx.importers("lib/a.ts", 10) == ["lib/index.ts"]


def test_a_build_on_another_thread_is_the_one_build_and_updates_wait_for_the_next_question() -> (
    None
):
    files = dict(FILES)
    reads: list[str] = []

    def read(path: str) -> str | None:
        reads.append(path)
        return files.get(path)

    idx = ImportIndex(files, read)
    assert not idx.built
    worker = threading.Thread(target=idx.build)
    worker.start()
    worker.join()
    assert idx.built
    count = len(reads)
    files["app.py"] = "import json\n"
    idx.update("app.py")
    assert len(reads) == count  # not read until asked
    assert "app.py" not in idx.importers("pkg/core.py", 10)
    assert len(reads) == count + 1


GO_FILES = {
    "go.mod": "module example.com/shop\n\ngo 1.19\n",
    "price/price.go": "package price\n\nfunc Of(n int) int { return n }\n",
    "price/tax.go": "package price\n\nfunc Tax(n int) int { return Of(n) / 5 }\n",
    "cmd/shop/main.go": (
        'package main\n\nimport (\n\t"fmt"\n\tp "example.com/shop/price"\n)\n\n'
        'func main() { fmt.Println(p.Of(1)) }\n\nvar s = "import \\"example.com/shop/other\\""\n'
    ),
    "report/report.go": 'package report\n\nimport "example.com/shop/price"\n\nvar X = price.Of(2)\n',
    "other/other.go": "package other\n",
}


def test_go_importers_follow_the_nearest_go_mod_and_a_folder_without_one() -> None:
    files = {
        "go.mod": "module example.com/root\n",
        "svc/go.mod": "module example.com/svc\n",
        "svc/util/u.go": "package util\nfunc U() {}\n",
        "svc/main.go": 'package main\nimport "example.com/svc/util"\nfunc main() { util.U() }\n',
        "web/w.go": 'package web\nimport "example.com/svc/util"\n',
    }
    idx = ImportIndex([p for p in files if p.endswith(".go")], files.get)
    # svc/ is its own module (a go.work's, say); web/ imports it by its path.
    assert idx.importers("svc/util/u.go", 10) == ["svc/main.go", "web/w.go"]
    rootless = {"tools/a.go": "package tools\n", "tools/b.go": "package tools\n", "c.go": ""}
    idx = ImportIndex(rootless, rootless.get)
    assert idx.importers("tools/a.go", 10) == ["tools/b.go"]
    assert idx.importers("c.go", 10) == []


def test_go_importers_are_the_packages_importing_the_folder_and_the_folders_other_files() -> None:
    idx = ImportIndex(GO_FILES, GO_FILES.get)
    assert idx.importers("price/price.go", 10) == [
        "price/tax.go",
        "cmd/shop/main.go",
        "report/report.go",
    ]
    assert idx.importers("cmd/shop/main.go", 10) == []
    # A string after the imports is no import.
    assert idx.importers("other/other.go", 10) == []
    files = dict(GO_FILES)
    idx = ImportIndex(files, files.get)
    assert idx.importers("report/report.go", 10) == []
    files["other/other.go"] = 'package other\n\nimport "example.com/shop/report"\n'
    idx.update("other/other.go")
    assert idx.importers("report/report.go", 10) == ["other/other.go"]


def test_a_python_file_with_no_module_name_is_still_an_importer() -> None:
    # Defect: django's migrations (``0001_initial.py``: not an importable
    # name) were not indexed, so renaming a function only they import
    # (``sites/models.py:_simple_domain_name_validator``) opened none of
    # them in open-files mode and nothing was found broken.
    files = {
        "site/models.py": "def check(value): ...\n",
        "site/migrations/__init__.py": "",
        "site/migrations/0001_initial.py": "from site.models import check\n",
        "my-script.py": "import site.models\n",
    }
    idx = ImportIndex(files, files.get)
    assert idx.importers("site/models.py", 10) == [
        "my-script.py",
        "site/migrations/0001_initial.py",
    ]
    assert idx.importers("site/migrations/0001_initial.py", 10) == []
    idx.update("site/migrations/0002_more.py")
    files["site/migrations/0002_more.py"] = "import site.models\n"
    assert "site/migrations/0002_more.py" in idx.importers("site/models.py", 10)


C_FILES = {
    "include/util.h": "int util_sum(int a, int b);\n",
    "include/api.h": '#include "util.h"\n#define API 1\n',
    "include/deep/x.h": "#include <api.h>\n",
    "src/util.c": '#include "util.h"\nint util_sum(int a, int b) { return a + b; }\n',
    "src/main.c": '#include <stdio.h>\n# include "../include/api.h"\nint main(void) { return 0; }\n',
    "src/use.cpp": '#include "deep/x.h"\n',
    "src/other.c": '#include "other.h"\n// #include "util.h" in a comment is no include\n',
    "tools/util.h": "int tool(void);\n",
}


def test_c_importers_follow_includes_by_their_tails_and_through_headers() -> None:
    # clangd without its background index knows only its open files: a
    # header's changed prototype broke the callers, none open, and the
    # analyzer gate passed.
    idx = ImportIndex(C_FILES, C_FILES.get)
    # "util.h" meets both util.h (include paths are not read): one more
    # file opened, never one less. api.h passes its importers on, and
    # deep/x.h (including api.h by <api.h>) its own.
    assert idx.importers("include/util.h", 10) == [
        "include/api.h",
        "include/deep/x.h",
        "src/main.c",
        "src/use.cpp",
        "src/util.c",
    ]
    assert idx.importers("tools/util.h", 10) == [
        "include/api.h",
        "include/deep/x.h",
        "src/main.c",
        "src/use.cpp",
        "src/util.c",
    ]
    assert idx.importers("include/deep/x.h", 10) == ["src/use.cpp"]
    assert idx.importers("src/main.c", 10) == []
    # A header created after the build is met by the files including it.
    files = dict(C_FILES)
    idx = ImportIndex(files, files.get)
    assert idx.importers("src/other.c", 10) == []
    files["include/other.h"] = "int other(void);\n"
    assert idx.importers("include/other.h", 10) == ["src/other.c"]


def test_the_closure_is_every_transitive_importer_through_packages_and_star_imports() -> None:
    """What a change to ``pkg/a.py`` can reach (the cold gate narrows its
    question about the workspace before the run to it): b imports a, c uses
    b's result (two imports away), d star-imports c through a relative
    import, e imports a module of the package whose ``__init__`` re-exports
    a, f imports a submodule of ``pkg`` (which loads ``pkg/__init__.py``),
    scripts/run.py imports scripts/lib.py from its own folder (``import
    lib``); g imports nothing of them and is out of reach."""
    files = {
        "pkg/__init__.py": "from pkg.a import f\n",
        "pkg/a.py": "def f() -> int:\n    return 1\n",
        "pkg/b.py": "from pkg.a import f\n\ndef g():\n    return f()\n",
        "pkg/c.py": "from pkg import b\nx = b.g() + 1\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/d.py": "from ..c import *\n",
        "app/e.py": "from pkg import f\n",
        "app/f.py": "import pkg.sub.d\n",
        "app/g.py": "import os\n",
        "tools/h.py": "from app.e import f\n",
        "scripts/lib.py": "from pkg.a import f\n",
        "scripts/run.py": "import lib\n",
    }
    idx = ImportIndex(files, files.get)
    assert idx.closure(["pkg/a.py"]) == set(files) - {"pkg/sub/__init__.py", "app/g.py"}
    assert idx.closure(["pkg/sub/__init__.py"]) == {"pkg/sub/__init__.py", "app/f.py"}
    assert idx.closure(["app/g.py"]) == {"app/g.py"}


def test_the_closure_follows_what_a_line_scan_could_miss() -> None:
    """The cold gate passes a change on its closure alone (issue 32 item 7):
    imports on one line with a compound statement or after a semicolon, a
    stub, a module created where a name was met before, a deleted module's
    importers, and a module met by its name from the importer's own folder
    all reach their importers."""
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f() -> int:\n    return 1\n",
        "pkg/a.pyi": "def f() -> int: ...\n",
        "pkg/try_.py": "try: from pkg.a import f\nexcept ImportError: f = None\n",
        "pkg/typed.py": "if TYPE_CHECKING: import pkg.a\n",
        "pkg/semi.py": "x = 1; from pkg import a\n",
        "pkg/uses_json.py": "import json\n",
        "pkg/gone_user.py": "from pkg.gone import g\n",
        "pkg/none.py": "s = 'key: imported later'\n",
    }
    idx = ImportIndex(files, files.get)
    users = {"pkg/try_.py", "pkg/typed.py", "pkg/semi.py"}
    assert idx.closure(["pkg/a.py"]) == {"pkg/a.py", *users}
    assert idx.closure(["pkg/a.pyi"]) == {"pkg/a.pyi", *users}
    # Created by the run: pkg/json.py is what pkg/uses_json.py's import meets now.
    assert idx.closure(["pkg/json.py"]) == {"pkg/json.py", "pkg/uses_json.py"}
    # Deleted by the run (no longer a file): its importers' imports break.
    assert idx.closure(["pkg/gone.py"]) == {"pkg/gone.py", "pkg/gone_user.py"}
    assert imported_modules("pkg/semi.py", files["pkg/semi.py"]) == {"pkg", "pkg.a"}


#: A package whose ``__init__`` re-exports ``a``'s ``f`` (so a change to
#: ``a`` reaches it), binding the names of its module ``other`` and of that
#: module's ``g`` to it too, and files importing other modules of it in
#: each form.
INIT_FILES = {
    "pkg/__init__.py": "from pkg.a import f as f, f as g, f as other\n",
    "pkg/a.py": "def f() -> int:\n    return 1\n",
    "pkg/other.py": "def g() -> int:\n    return 1\n",
    "pkg/sub/__init__.py": "from pkg.a import f as f\n",
    "pkg/sub/m.py": "def h() -> int:\n    return 1\n",
    "pkg/rel.py": "from . import other\n",
    "app/from_module.py": "from pkg.other import g\nx: int = g()\n",
    "app/module_as.py": "import pkg.other as o\nx: int = o.g()\n",
    "app/from_deep.py": "from pkg.sub.m import h\nx: int = h()\n",
    "app/binds.py": "import pkg.other\nx: int = pkg.f()\n",
    "app/binds_deep.py": "import pkg.sub.m\nx: int = pkg.sub.f()\n",
    "app/from_package.py": "from pkg import f\nx: int = f()\n",
}


def test_an_init_reached_counts_only_for_files_importing_it_or_binding_its_name() -> None:
    """sympy's closures were 1,418 of 1,562 files: ``sympy/__init__.py``
    is reached from nearly any module, and it counted for every file
    importing any ``sympy.`` module. basedpyright resolves ``from pkg.mod
    import x`` and ``import pkg.mod as m`` to the module alone
    (``tests/analysis/test_gate_closure.py`` checks it on a real run):
    those files are out of reach now; ``import pkg.sub.m`` (binds ``pkg``,
    reaches ``pkg.sub`` through it), ``from pkg import f`` and ``from .
    import other`` stay in. A changed ``__init__`` itself (created or
    deleted, perhaps) still counts for every file importing the package's
    modules."""
    idx = ImportIndex(INIT_FILES, INIT_FILES.get)
    out = {"pkg/other.py", "pkg/sub/m.py", "app/from_module.py", "app/module_as.py"}
    assert idx.closure(["pkg/a.py"]) == set(INIT_FILES) - out - {"app/from_deep.py"}
    assert idx.closure(["pkg/__init__.py"]) >= {"app/from_module.py", "app/module_as.py"}
    assert "app/from_deep.py" in idx.closure(["pkg/sub/__init__.py"])
    # An edit that drops the binding import is applied at the next question.
    files = dict(INIT_FILES)
    idx = ImportIndex(files, files.get)
    assert "app/binds.py" in idx.closure(["pkg/a.py"])
    files["app/binds.py"] = "import pkg.other as o\n"
    idx.update("app/binds.py")
    assert "app/binds.py" not in idx.closure(["pkg/a.py"])
