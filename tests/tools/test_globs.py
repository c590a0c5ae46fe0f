"""The glob translator and the .gitignore matcher."""

from __future__ import annotations

import pytest

from rein.tools._globs import glob_regex, match_path, parse_gitignore, path_ignored


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        pytest.param("*.py", "a.py", True, id="star"),
        pytest.param("*.py", "src/a.py", False, id="star-stays-in-dir"),
        pytest.param("**/*.py", "a.py", True, id="globstar-zero-dirs"),
        pytest.param("**/*.py", "src/deep/a.py", True, id="globstar-many-dirs"),
        pytest.param("src/**", "src/a/b.txt", True, id="trailing-globstar"),
        pytest.param("src/**", "src", False, id="trailing-globstar-not-dir-itself"),
        pytest.param("a/**/b.txt", "a/b.txt", True, id="middle-globstar-zero"),
        pytest.param("a/**/b.txt", "a/x/y/b.txt", True, id="middle-globstar-many"),
        pytest.param("?.py", "ab.py", False, id="question-one-char"),
        pytest.param("[ab].py", "b.py", True, id="class"),
        pytest.param("[!ab].py", "c.py", True, id="negated-class"),
        pytest.param("[!ab].py", "a.py", False, id="negated-class-miss"),
        pytest.param("[]x].py", "].py", True, id="bracket-first-in-class"),
        pytest.param("*.{ts,tsx}", "a.tsx", True, id="braces"),
        pytest.param("*.{ts,tsx}", "a.js", False, id="braces-miss"),
        pytest.param("a+b(1).txt", "a+b(1).txt", True, id="regex-chars-literal"),
        pytest.param("\\*.md", "*.md", True, id="escape"),
        pytest.param("*.py", "a.py\n", False, id="no-trailing-newline"),
        pytest.param("*.py", "a\nb.py", True, id="newline-inside-a-name"),
    ],
)
def test_glob_regex(pattern: str, path: str, expected: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is expected


def test_match_path_name_at_any_depth_and_directories_cover_contents() -> None:
    assert match_path(".env*", "config/.env.local")
    assert match_path("*.pem", "certs/server.pem")
    assert match_path(".git/**", ".git/config")
    assert match_path("**/*secret*", "a/my_secrets/notes.txt")
    assert match_path("build", "build/out/app.js")
    assert not match_path("*.key", "keyboard.py")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        pytest.param(".git/**", "vendor/lib/.git/hooks/pre-commit", True, id="nested-repo"),
        pytest.param(".git/**", "sub/.git/config", True, id="one-level-down"),
        pytest.param("config/*.yaml", "app/config/db.yaml", True, id="slash-inside-any-depth"),
        pytest.param("/build/**", "build/a.js", True, id="leading-slash-root"),
        pytest.param("/build/**", "src/build/a.js", False, id="leading-slash-anchors"),
        pytest.param(".git/**", "my.git/config", False, id="whole-component"),
    ],
)
def test_deny_globs_match_at_any_depth_unless_anchored(
    pattern: str, path: str, expected: bool
) -> None:
    assert match_path(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        pytest.param(".env*", ".ENV", id="upper-env"),
        pytest.param("**/*secret*", "config/Secrets.yaml", id="mixed-case-secret"),
        pytest.param("*.key", "keys/deploy.KEY", id="upper-extension"),
        pytest.param(".git/**", ".Git/HOOKS/pre-commit", id="case-insensitive-fs"),
    ],
)
def test_deny_globs_ignore_case(pattern: str, path: str) -> None:
    assert match_path(pattern, path)


def test_the_glob_tool_keeps_case() -> None:
    assert not glob_regex("*.py").match("A.PY")


def _ignored(text: str, path: str, is_dir: bool = False, base: str = "") -> bool:
    return path_ignored(parse_gitignore(text, base), path, is_dir)


def test_gitignore_rules() -> None:
    rules = "# comment\n\n*.log\n!keep.log\nbuild/\n/root_only.txt\ndocs/*.tmp\n"
    assert _ignored(rules, "x.log")
    assert _ignored(rules, "deep/x.log")
    assert not _ignored(rules, "keep.log")
    assert _ignored(rules, "build", is_dir=True)
    assert not _ignored(rules, "build", is_dir=False)  # dir-only pattern
    assert _ignored(rules, "root_only.txt")
    assert not _ignored(rules, "sub/root_only.txt")  # anchored
    assert _ignored(rules, "docs/a.tmp")
    assert not _ignored(rules, "docs/sub/a.tmp")
    assert not _ignored(rules, "# comment")


def test_gitignore_in_subdirectory_applies_below_it_only() -> None:
    rules = parse_gitignore("/gen.py\n*.tmp\n", base="pkg")
    assert path_ignored(rules, "pkg/gen.py", False)
    assert not path_ignored(rules, "pkg/sub/gen.py", False)
    assert path_ignored(rules, "pkg/sub/x.tmp", False)
    assert not path_ignored(rules, "other/x.tmp", False)


def test_gitignore_escapes_and_trailing_spaces() -> None:
    assert _ignored("\\#notes\n", "#notes")
    assert _ignored("\\!important\n", "!important")
    assert _ignored("spaced   \n", "spaced")
