"""``rein bench gates --probes``: the gate on the five projects of issue 32
(click, flask, attrs, requests, django), as a new user meets them.

Each project is fetched and committed as for ``--corpus``
(:mod:`rein.bench.corpus`); one session with the real analyzers stays open
across its cases (:func:`rein.bench.gates_structural.run_cases`'s warm
path), and every case's truth is the command line's (basedpyright and ruff
on the changed files and their importers, before and after the change:
:func:`rein.bench.gates_structural.truth`). The kinds:

- ``one-file``: a seeded error inside one package file (an undefined name, a
  wrong argument type, an unresolvable import, a syntax error);
- ``cross-file``: ``write_file`` renames a top-level function that other
  package modules import by name;
- ``tests-break``: the same, for a function that ``tests/`` imports by name
  (the src-layout projects: ``tests/`` must resolve the package from
  ``src/``);
- ``delete-module``, ``rename-module``: a module other files import is
  deleted or renamed (:mod:`rein.bench.corpus_cases`);
- ``command-edit``: ``run_command`` renames a function with ``sed`` (click
  and flask: small workspaces; django: open-files mode, over 1,000 files);
- ``syntax-cascade``: an unclosed parenthesis in requests' ``utils.py`` (many
  errors in other files): its file must be the first blocker, and the repair
  prompt must say how many problems it left out;
- ``partial``: django's ``cached_property`` renamed (past
  ``gates.analyzer.maxImporters``): the verdict must say it is partial.

A case that adds no error by the command line (attrs' ``tests-break``: its
``.pyi`` stubs hide the rename from every importer) is run and counts: it is
judged exactly when every verdict passes it (nothing blocked, nothing
unverified).
"""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

from rein.bench.corpus import KINDS, Project
from rein.bench.corpus_cases import (
    Case,
    command_edit_case,
    delete_case,
    direct_importers,
    modules_with_importers,
    renamable_functions,
    rename_case,
)
from rein.bench.gates_corpus import _python_files
from rein.bench.gates_structural import _seeded_case, _texts
from rein.disk.importers import ImportIndex

__all__ = [
    "PROBE_KINDS",
    "PROBE_PROJECTS",
    "ProbeProject",
    "choose_probes",
    "plan_probes",
    "rename_name_case",
    "unclosed_paren_case",
]

PROBE_KINDS = (
    "one-file",
    "cross-file",
    "tests-break",
    "delete-module",
    "rename-module",
    "command-edit",
    "syntax-cascade",
    "partial",
)


@dataclasses.dataclass(frozen=True, slots=True)
class ProbeProject:
    project: Project
    #: Cases per kind (kinds left out: none).
    counts: dict[str, int]
    #: (module path, name) renamed for the ``partial`` case.
    partial: tuple[str, str] | None = None
    #: The module given an unclosed parenthesis for ``syntax-cascade``.
    cascade: str | None = None
    #: Top folders removed (and the removal committed) before the cases
    #: (django's docs and scripts: nothing the cases are about).
    drop: tuple[str, ...] = ()
    #: (kind, module, function): ``cross-file`` and ``command-edit`` cases
    #: chosen by name, before the ones found (django's first found break
    #: nothing by the command line: their importers only re-export them).
    named: tuple[tuple[str, str, str], ...] = ()


_SRC = {"one-file": 5, "cross-file": 2, "tests-break": 2, "delete-module": 1, "rename-module": 1}

PROBE_PROJECTS = (
    # A command's edit in a small workspace (issue 32: judged exactly there).
    ProbeProject(Project("click", "8.1.7", "src/click", 0), {**_SRC, "command-edit": 1}),
    ProbeProject(Project("flask", "3.0.3", "src/flask", 0), {**_SRC, "command-edit": 1}),
    ProbeProject(Project("attrs", "24.2.0", "src/attr", 0), dict(_SRC)),
    ProbeProject(
        Project("requests", "2.32.3", "src/requests", 0),
        {**_SRC, "syntax-cascade": 1},
        cascade="src/requests/utils.py",
    ),
    ProbeProject(
        Project("django", "5.1.4", "django", 0),
        {
            "one-file": 5,
            "cross-file": 2,
            "delete-module": 1,
            "rename-module": 1,
            "command-edit": 2,
            "partial": 1,
        },
        partial=("django/utils/functional.py", "cached_property"),
        # Its own test suite stays: with it the workspace is over
        # gates.analyzer.workspaceMaxFiles (open-files mode), as the issue's.
        drop=("docs", "js_tests", "extras", "scripts"),
        named=(
            ("command-edit", "django/utils/hashable.py", "make_hashable"),
            ("cross-file", "django/utils/text.py", "capfirst"),
        ),
    ),
)

_SUFFIX = "_rein_renamed"

#: Modules and functions are chosen among those with at most this many
#: importers (``gates.analyzer.maxImporters``' default), so that a verdict
#: can be complete; the ``partial`` kind is the one past it.
MAX_IMPORTERS = 30


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _edit_case(
    kind: str, target: str, path: str, text: str, edited: str, paths: tuple[str, ...]
) -> Case:
    def apply(root: Path) -> None:
        (root / path).write_text(edited, encoding="utf-8")

    def undo(root: Path) -> None:
        (root / path).write_text(text, encoding="utf-8")

    return Case(kind, target, _write(path, edited), _write(path, text), paths, paths, apply, undo)


def rename_name_case(kind: str, path: str, text: str, name: str, importers: list[str]) -> Case:
    """``write_file`` renames the top-level ``name`` (every whole word) in
    ``path``; the repair writes the original back."""
    edited = re.sub(rf"\b{re.escape(name)}\b", f"{name}{_SUFFIX}", text)
    return _edit_case(kind, f"{path}:{name}", path, text, edited, (path, *importers))


def unclosed_paren_case(path: str, text: str, importers: list[str]) -> Case | None:
    """``path`` with the closing parenthesis of its first one-line top-level
    ``def`` removed (``def f(a, b):`` → ``def f(a, b:``), or None."""
    match = re.search(r"^(def \w+\([^()\n]*)\)(:[ \t]*)$", text, re.MULTILINE)
    if match is None:
        return None
    edited = text[: match.start()] + match.group(1) + match.group(2) + text[match.end() :]
    return _edit_case(
        "syntax-cascade", f"{path} (unclosed parenthesis)", path, text, edited, (path, *importers)
    )


def _is_test(path: str) -> bool:
    return path.startswith("tests/") or "/tests/" in path


def plan_probes(root: Path, probe: ProbeProject, seed: int = 32) -> list[Case]:
    """The cases of ``probe`` in the tree at ``root``, as many of each kind
    as :attr:`ProbeProject.counts` asks for (fewer when the project has not
    enough candidates)."""
    rng = random.Random(seed)
    counts = probe.counts
    files = _python_files(root, ".")
    texts = _texts(root, files)
    package = [f for f in files if f.startswith(f"{probe.project.package}/")]
    cases: list[Case] = []
    clean = [f for f in package if not _is_test(f)]
    picked = rng.sample(clean, min(len(clean), 4 * counts.get("one-file", 0)))
    for i, path in enumerate(picked):
        if sum(c.kind == "one-file" for c in cases) >= counts.get("one-file", 0):
            break
        case = _seeded_case(path, texts[path], KINDS[i % len(KINDS)], i, rng)
        if case is not None:
            cases.append(dataclasses.replace(case, kind="one-file"))
    index = ImportIndex(files, texts.get)

    def importers(path: str) -> list[str]:
        return index.importers(path, 10_000)

    direct = direct_importers(files, texts)

    def functions(path: str) -> list[tuple[str, list[str]]]:
        # renamable_functions' answer, from the one index (django: 2,800 files).
        return renamable_functions(path, texts[path], [], {}, direct)

    chosen = [
        item
        for item in modules_with_importers(clean, files, texts)
        if len(importers(item[0])) <= MAX_IMPORTERS
    ]
    want = {"cross-file": counts.get("cross-file", 0), "tests-break": counts.get("tests-break", 0)}
    edits = counts.get("command-edit", 0)
    for kind, path, name in probe.named:
        if path not in texts:
            continue
        if kind == "command-edit" and edits > 0:
            cases.append(command_edit_case(path, texts[path], name, importers(path)))
            edits -= 1
        elif kind in want and want[kind] > 0:
            cases.append(rename_name_case(kind, path, texts[path], name, importers(path)))
            want[kind] -= 1
    for path, _direct in chosen:
        # At most one function of each kind per module, so the cases spread.
        for name, users in functions(path):
            kind = "tests-break" if any(_is_test(u) for u in users) else "cross-file"
            if want[kind] <= 0 or any(
                c.kind == kind and c.target.startswith(f"{path}:") for c in cases
            ):
                continue
            want[kind] -= 1
            cases.append(rename_name_case(kind, path, texts[path], name, importers(path)))
    n = counts.get("delete-module", 0)
    for path, _direct in chosen[:n]:
        cases.append(delete_case(path, texts[path], importers(path)))
    m = counts.get("rename-module", 0)
    for path, _direct in chosen[n : n + m]:
        cases.append(rename_case(path, importers(path)))
    # The most imported function of the most imported module with one: it
    # may be a cross-file case's too (the same rename, by a command). django's
    # is contrib/sites/models.py's, right after that module's rename-module
    # case: basedpyright never published it again (disk/silent_files.py).
    for path, _direct in chosen:
        if edits <= 0:
            break
        found = functions(path)
        if found:
            cases.append(command_edit_case(path, texts[path], found[0][0], importers(path)))
            edits -= 1
    if counts.get("syntax-cascade") and probe.cascade in texts:
        path = probe.cascade
        case = unclosed_paren_case(path, texts[path], importers(path))
        if case is not None:
            cases.append(case)
    if counts.get("partial") and probe.partial and probe.partial[0] in texts:
        path, name = probe.partial
        cases.append(rename_name_case("partial", path, texts[path], name, importers(path)))
    return cases


def run_probes(
    probes: list[ProbeProject], *, seed: int = 32, log: Any = None
) -> list[dict[str, Any]]:
    """Every probe project's cases, one project at a time, each in one warm
    session; one row per project and kind."""
    import sys

    import anyio

    from rein.bench.corpus import fresh_workspace
    from rein.bench.gates_structural import run_cases

    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    rows: list[dict[str, Any]] = []
    for probe in probes:
        project = probe.project
        with fresh_workspace(project, "rein-probes") as root:
            if probe.drop:
                _drop(root, probe.drop)

            def plan(root: Path, probe: ProbeProject = probe) -> list[Case]:
                return plan_probes(root, probe, seed)

            scratch = root.parent / "scratch"
            rows += anyio.run(
                run_cases, project, root, scratch, seed, False, say, plan, PROBE_KINDS
            )
    return rows


def _drop(root: Path, folders: tuple[str, ...]) -> None:
    import subprocess

    present = [f for f in folders if (root / f).exists()]
    if not present:
        return
    for args in (["rm", "-r", "-q", "--", *present], ["commit", "-q", "-m", "trimmed"]):
        subprocess.run(
            ["git", "-c", "user.name=rein bench", "-c", "user.email=bench@rein.invalid", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )


def choose_probes(spec: str | None, cap: int | None = None) -> list[ProbeProject]:
    """The probe projects ``spec`` names (all by default), at most ``cap``
    cases of each kind when given."""
    known = {p.project.name: p for p in PROBE_PROJECTS}
    names = [item.strip().partition("==")[0] for item in (spec or "").split(",") if item.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"--probes: unknown project(s) {unknown}; known: {sorted(known)}")
    chosen = [known[n] for n in names] if names else list(PROBE_PROJECTS)
    if cap is None:
        return chosen
    return [
        dataclasses.replace(p, counts={k: min(n, cap) for k, n in p.counts.items()}) for p in chosen
    ]


def exact(row: dict[str, Any]) -> bool:
    """A row judges exactly: recall and precision 1.0 (None: no case of it
    adds an error by the command line, nothing blocked), every case that adds
    no error passed with nothing unverified, and its special checks hold (the
    cause first and the count left out said; partial said)."""
    if row["recall"] not in (1.0, None) or row["precision"] not in (1.0, None):
        return False
    if row.get("clean_passed", 0) != row.get("clean_cases", 0):
        return False
    for case in row.get("cases_detail", []):
        if row["kind"] == "syntax-cascade" and not case["cause_first"]:
            return False
        if row["kind"] == "partial" and not case["partial_said"]:
            return False
    return True


def main_probes(args: Any) -> int:
    """``rein bench gates --probes [--projects click,...] [--edits N] [--json]
    [--strict]`` (``--edits``: at most N cases of each kind)."""
    import json

    from rein.bench.gates_structural_scores import print_cases

    rows = run_probes(choose_probes(args.projects, int(args.edits) if args.edits else None))
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print_cases(rows)
    return 1 if args.strict and not all(exact(r) for r in rows) else 0
