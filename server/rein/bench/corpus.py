"""The real projects of the gate benchmark (``rein bench gates --corpus``)
and the errors it seeds in them.

Each project is a pinned source distribution from PyPI (``pip download
--no-deps --no-binary :all:``), unpacked once into the user cache
(``platformdirs.user_cache_dir("rein")/corpus``, or ``$REIN_CORPUS_CACHE``)
and copied per run into a temporary folder that is ``git init``-ed and
committed, as a user's checkout would be. :func:`seed_edit` inserts exactly
one new error of a kind (:data:`KINDS`) between two top-level statements.
"""

from __future__ import annotations

import ast
import itertools
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FULL_CORPUS",
    "KINDS",
    "SMALL_CORPUS",
    "Project",
    "SeededEdit",
    "commit_workspace",
    "corpus_cache",
    "download_sdist",
    "fetch",
    "fresh_workspace",
    "isolated_interpreter",
    "make_workspace",
    "seed_edit",
]

KINDS = ("undefined-name", "argument-type", "missing-import", "syntax-error")


@dataclass(frozen=True, slots=True)
class Project:
    name: str
    version: str
    #: The folder (relative to the distribution's root) whose files get edits.
    package: str
    edits: int


FULL_CORPUS = (
    Project("sympy", "1.13.3", "sympy", 40),
    Project("rich", "13.9.4", "rich", 30),
    Project("httpx", "0.28.1", "httpx", 30),
)
SMALL_CORPUS = (Project("toolz", "1.0.0", "toolz", 10),)


# ------------------------------------------------------------------ the cache


def corpus_cache() -> Path:
    env = os.environ.get("REIN_CORPUS_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rein")) / "corpus"


def fetch(project: Project, cache: Path | None = None) -> Path:
    """The unpacked source distribution, downloaded on first use."""
    cache = cache or corpus_cache()
    target = cache / f"{project.name}-{project.version}"
    if (target / ".rein-corpus-complete").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
        root = download_sdist(project.name, project.version, Path(tmp))
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(root), str(target))
    (target / ".rein-corpus-complete").write_text(f"{project.name}=={project.version}\n")
    return target


def download_sdist(name: str, version: str, into: Path) -> Path:
    """``name==version``'s source distribution downloaded by pip into the
    (existing) folder ``into`` and unpacked there; its top folder."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(into),
            f"{name}=={version}",
        ],
        check=True,
    )
    archives = [p for p in into.iterdir() if p.is_file()]
    if len(archives) != 1:
        raise RuntimeError(f"pip download left {archives} for {name}")
    unpacked = into / "unpacked"
    _unpack(archives[0], unpacked)
    entries = list(unpacked.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else unpacked


def _unpack(archive: Path, into: Path) -> None:
    into.mkdir()
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(into, filter="data")


def make_workspace(source: Path, into: Path) -> Path:
    """A committed git checkout of the unpacked distribution."""
    shutil.copytree(source, into, ignore=shutil.ignore_patterns(".rein-corpus-complete"))
    return commit_workspace(into)


@contextmanager
def fresh_workspace(project: Project, prefix: str) -> Iterator[Path]:
    """A committed checkout of ``project`` (its source fetched on first use)
    in a temporary folder named ``<prefix>-<name>-...``, removed afterwards;
    the checkout's parent is that folder, the caller's for scratch files.
    It has an interpreter of its own (:func:`isolated_interpreter`)."""
    source = fetch(project)
    with tempfile.TemporaryDirectory(prefix=f"{prefix}-{project.name}-") as tmp:
        root = make_workspace(source, Path(tmp) / project.name)
        isolated_interpreter(root)
        yield root


def isolated_interpreter(tree: Path) -> Path:
    """``tree/.venv``, made with the standard library only (``python -m
    venv --without-pip``, no site packages), and kept out of git: the
    interpreter basedpyright (its command line and its server) and Rein's
    pool take for a workspace that names none. Without it they took the
    ``python3`` on PATH, whose site packages can hold another copy of the
    project: this machine's pyenv Python has sympy 1.14, click, flask,
    attrs and requests, Rein's venv click, attrs, rich and httpx, and a
    module a case renamed away resolved to the installed copy. The truth
    of a case then depended on the caller's PATH (issue 32: sympy's
    ``zeta_functions.py`` renamed away, 0 new errors by the command line
    with pyenv's Python first, 41 with Rein's venv first). It has no
    pytest: the benches that use it judge the analyzer gate, with the
    tests gate off."""
    venv = tree / ".venv"
    if not venv.exists():
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)],
            check=True,
            capture_output=True,
        )
    if (tree / ".git").is_dir():
        exclude = tree / ".git" / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        if not exclude.exists() or "/.venv/" not in exclude.read_text(errors="replace"):
            with exclude.open("a", encoding="utf-8") as out:
                out.write("\n/.venv/\n")
    return venv


def commit_workspace(into: Path) -> Path:
    """``into`` made a git checkout with everything in it committed."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "rein bench",
        "GIT_AUTHOR_EMAIL": "bench@rein.invalid",
        "GIT_COMMITTER_NAME": "rein bench",
        "GIT_COMMITTER_EMAIL": "bench@rein.invalid",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "pristine"]):
        subprocess.run(["git", *args], cwd=into, check=True, env=env, capture_output=True)
    return into


# ---------------------------------------------------------------- the edits


@dataclass(frozen=True, slots=True)
class SeededEdit:
    path: str
    kind: str
    category: str
    original: str
    edited: str
    #: 0-based lines [first, last) of the inserted code in ``edited``.
    first: int
    last: int


def _snippet(kind: str, n: int) -> list[str]:
    if kind == "undefined-name":
        return [f"_rein_probe_{n} = rein_undefined_{n}"]
    if kind == "argument-type":
        return [
            f"def _rein_probe_{n}(value: int) -> int:",
            "    return value",
            f'_rein_value_{n} = _rein_probe_{n}("{n}")',
        ]
    if kind == "missing-import":
        return [
            f"def _rein_probe_{n}() -> object:",
            f"    import rein_missing_module_{n}",
            f"    return rein_missing_module_{n}",
        ]
    if kind == "syntax-error":
        return [f"_rein_probe_{n} = 1 +"]
    raise ValueError(kind)


def seed_edit(
    path: str, text: str, kind: str, n: int, rng: random.Random, category: str = ""
) -> SeededEdit | None:
    """``text`` with one new error of ``kind`` between two top-level
    statements (after the first), or None when the file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines(keepends=True)
    starts: list[int] = []
    body = tree.body
    for prev, stmt in itertools.pairwise(body):
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        if prev.end_lineno is not None and prev.end_lineno < first:
            starts.append(first - 1)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    at = rng.choice(starts) if starts else len(lines)
    snippet = [line + "\n" for line in _snippet(kind, n)]
    edited = "".join(lines[:at] + snippet + lines[at:])
    return SeededEdit(path, kind, category, text, edited, at, at + len(snippet))
