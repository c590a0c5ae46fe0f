"""The folders basedpyright resolves imports from that the import scan does
not model (:mod:`rein.disk.import_roots`), read from the project's settings."""

from __future__ import annotations

from collections.abc import Callable

from rein.disk.import_roots import outside_the_scan, unmodelled_roots


def _reader(files: dict[str, str]) -> Callable[[str], str | None]:
    return files.get


def test_without_settings_the_default_stub_path_is_the_one_root() -> None:
    assert unmodelled_roots(_reader({})) == ("typings",)
    assert unmodelled_roots(_reader({"pyproject.toml": "[project]\nname = 'x'\n"})) == ("typings",)


def test_the_roots_of_pyproject_and_pyrightconfig_are_all_kept() -> None:
    files = {
        "pyproject.toml": (
            '[tool.basedpyright]\nstubPath = "stubs"\nextraPaths = ["./lib", "vendor/"]\n'
            '[tool.pyright]\nextraPaths = ["/abs/elsewhere", "../outside"]\n'
        ),
        "pyrightconfig.json": (
            '{"executionEnvironments": [{"root": "tools", "extraPaths": ["tools/shared"]},'
            ' {"root": "src"}, {"root": "."}]}'
        ),
    }
    # The json file sets no stubPath: its default, typings, is kept too.
    assert unmodelled_roots(_reader(files)) == (
        "lib", "stubs", "tools", "tools/shared", "typings", "vendor",
    )  # fmt: skip


def test_pyrightconfigs_comments_are_dropped() -> None:
    commented = (
        '{\n  // basedpyright allows comments\n  "extraPaths": ["lib", "a//b"], /* and these */\n'
        '  "stubPath": "st/*x*/ubs"\n}\n'
    )
    assert unmodelled_roots(_reader({"pyrightconfig.json": commented})) == (
        "a/b", "lib", "st/*x*/ubs",
    )  # fmt: skip


def test_settings_that_cannot_be_read_make_every_module_unknown() -> None:
    roots = unmodelled_roots(_reader({"pyrightconfig.json": '{"extraPaths": ["lib"],}'}))
    assert roots is None
    assert outside_the_scan("pkg/mod.py", roots)
    assert unmodelled_roots(_reader({"pyproject.toml": "[tool.basedpyright\n"})) is None
    assert unmodelled_roots(_reader({"pyrightconfig.json": "[]"})) is None


def test_a_module_under_a_root_is_outside_the_scan() -> None:
    roots = ("lib", "typings")
    assert outside_the_scan("typings/fastlib.pyi", roots)
    assert outside_the_scan("lib/pkg/mod.py", roots)
    assert not outside_the_scan("library/mod.py", roots)
    assert not outside_the_scan("pkg/typings/mod.py", roots)
    assert outside_the_scan("fastlib-stubs/__init__.pyi", roots)
    assert not outside_the_scan("fastlib-stubs.py", roots)
