"""``rein bench gates --corpus`` (``--projects typescript,go,c,shell``): the
analyzer gate on a project per language other than Python (issue 35).

The projects are the end-to-end tests' (:mod:`rein.bench.language_projects`):
the npm package await-semaphore (TypeScript, typescript-language-server),
three of Go's own standard-library-only programs as one module (gopls) and
mmh3's C sources with a ``compile_commands.json`` (clangd) and Go's
``*.bash`` scripts (bash-language-server with shellcheck). Each edit goes
through the same measurement as the Python projects
(:mod:`rein.bench.gates_corpus`): one seeded error
(:mod:`rein.bench.language_seeds`), the verdict, the repair. The truth is
the language's own command-line tool run on a scratch copy of the project
with the edited file (``tsc --noEmit``, ``go build``, ``gcc
-fsyntax-only``, ``shellcheck``): the seeded lines must be among the lines it finds new
errors on (a seed it does not confirm is left out of recall), and a blocker
on any of those lines is right.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from rein.bench import language_projects as projects
from rein.bench.corpus import Project, SeededEdit, commit_workspace
from rein.bench.gates_corpus import SeedPlan, _measure
from rein.bench.language_seeds import LANGUAGE_KINDS, CliError, cli_errors, new_errors, seed_source

__all__ = ["LANGUAGE_CORPUS", "LanguageProject", "pick_languages", "run_languages"]


@dataclass(frozen=True)
class LanguageProject:
    project: Project
    language: str
    make: Callable[[Path], Path]
    #: The preset that analyses it (the only server its session runs).
    preset: str
    #: The files that get edits, and the command-line checker.
    extensions: tuple[str, ...]
    tool: str


LANGUAGE_CORPUS = (
    LanguageProject(
        Project("await-semaphore", "0.1.3", ".", 12),
        "typescript",
        projects.typescript_project,
        "typescript",
        (".ts",),
        "tsc",
    ),
    LanguageProject(
        # The version: the installed Go's (its sources are the project).
        Project("go-std-programs", "", ".", 12),
        "go",
        projects.go_project,
        "gopls",
        (".go",),
        "go",
    ),
    LanguageProject(
        Project("mmh3-c", projects.C_SDIST[1], ".", 12),
        "c",
        projects.c_project,
        "clangd",
        (".c",),
        "gcc",
    ),
    # Go's own *.bash scripts (their version: the installed Go's).
    LanguageProject(
        Project("go-bash-scripts", "", ".", 12),
        "shell",
        projects.shell_project,
        "bash",
        (".bash",),
        "shellcheck",
    ),
)


def pick_languages(spec: str | None) -> tuple[list[LanguageProject], str | None]:
    """The language projects ``--projects`` names (by project or language:
    ``typescript,go``; every one without ``--projects``) and the rest of it
    (the Python projects; None: the default ones, "": none)."""
    if not spec:
        return list(LANGUAGE_CORPUS), None
    chosen: list[LanguageProject] = []
    rest: list[str] = []
    for item in (part.strip() for part in spec.split(",")):
        found = [lp for lp in LANGUAGE_CORPUS if item in (lp.language, lp.project.name)]
        if found:
            chosen += found
        else:
            rest.append(item)
    return chosen, ",".join(rest)


def _config(preset: str) -> Any:
    from rein.config import load_config
    from rein.harness.analyzer_servers import PRESETS

    servers = [{"name": p.name, "enabled": p.name == preset} for p in PRESETS]
    return load_config({"gates": {"analyzer": {"servers": servers}}})


def _files(extensions: tuple[str, ...]) -> Callable[[Path], list[str]]:
    def files(root: Path) -> list[str]:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
        ).stdout.decode()
        return sorted(p for p in out.split("\0") if p.endswith(extensions))

    return files


def _truth(lp: LanguageProject, root: Path, scratch: Path, tool: str) -> SeedPlan:
    """The plan of ``lp``: its truth from ``tool`` run on ``scratch``, a copy
    of ``root`` whose one edited file is put back after each run."""
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns(".git"))
    pristine: dict[str, list[CliError]] = {}

    def truth(edit: SeededEdit) -> set[int]:
        if edit.path not in pristine:
            pristine[edit.path] = cli_errors(lp.language, scratch, edit.path, tool)
        target = scratch / edit.path
        target.write_text(edit.edited, encoding="utf-8")
        try:
            after = cli_errors(lp.language, scratch, edit.path, tool)
        finally:
            target.write_text(edit.original, encoding="utf-8")
        return new_errors(pristine[edit.path], after, edit)

    def seed(path: str, text: str, kind: str, n: int, rng: Any, category: str) -> SeededEdit:
        return seed_source(lp.language, path, text, kind, n, rng, category)

    return SeedPlan(_files(lp.extensions), seed, LANGUAGE_KINDS, _config(lp.preset), truth)


def _missing(lp: LanguageProject) -> str | None:
    """What of the project's server and checker is not found, or None."""
    from rein.disk.analyzer_discovery import locate
    from rein.harness.analyzer_servers import PRESETS

    (preset,) = [p for p in PRESETS if p.name == lp.preset]
    command = (preset.command or [lp.preset])[0]
    if locate(command) is None:
        return (
            f"the {lp.preset} server ({command}) was not found (scripts/install-language-"
            "servers.sh installs it; its npm servers are found with REIN_TOOL_CACHE=.tools)"
        )
    for tool in {lp.tool, "go"}:  # Go's sources make the Go and shell projects
        if locate(tool) is None:
            return f"{tool}, the truth's command, was not found"
    return None


def run_languages(
    chosen: Iterable[LanguageProject] = LANGUAGE_CORPUS,
    *,
    edits: int | None = None,
    seed: int = 14,
    log: Any = None,
    required: bool = True,
) -> list[dict[str, Any]]:
    """Measure every language project; ``edits`` overrides each one's count.
    One whose server or checker is missing stops the run when ``required``
    (it was asked for by name), else it is skipped and said so."""
    from rein.disk.analyzer_discovery import locate

    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    rows: list[dict[str, Any]] = []
    for lp in chosen:
        missing = _missing(lp)
        if missing is not None:
            if required:
                raise SystemExit(f"{lp.project.name}: {missing}")
            say(f"{lp.project.name}: skipped: {missing}")
            continue
        tool = str((locate(lp.tool) or ("",))[0])
        with tempfile.TemporaryDirectory(prefix=f"rein-corpus-{lp.language}-") as tmp:
            root = commit_workspace(lp.make(Path(tmp) / lp.project.name))
            project = lp.project
            if lp.language in ("go", "shell"):
                version = subprocess.run(
                    [str((locate("go") or ("go",))[0]), "env", "GOVERSION"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
                project = replace(project, version=version)
            plan = _truth(lp, root, Path(tmp) / "scratch", tool)
            count = edits if edits is not None else lp.project.edits
            row = anyio.run(_measure, project, root, count, seed, say, plan)
            rows.append({**row, "language": lp.language})
    return rows
