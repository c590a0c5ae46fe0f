"""A setting the analyzers read changed during the run (``pyproject.toml``,
``pyrightconfig.json``, ``ruff.toml``): what the baselines taken after it
hold.

The analyzers read a setting from the disk, never from an open document: its
text before the run cannot be shown to them in memory. So a baseline they
gave after it changed holds the findings the new setting brings, taken for
the state before the run: a changed file's own baseline (captured before its
first change, but after the setting's), a command's changed files' (asked
after the command), an importer opened then, a run-start snapshot taken
after a cold change and corrected in memory. ruff's ``select`` widened to
``ALL`` and a module edited after it in one run: the module's new findings
passed while its unchanged neighbour's blocked; both done by one command in
a session whose workspace analysis was deferred: everything passed.

Where the run-start snapshot was taken before any change of the run and the
analyzers check the whole workspace, it holds every file as it was before
the run, the setting as it was: every file the verdict judges is judged
against it (:func:`judged_from_run_start`; a changed file's lines are still
mapped through the run's changes, a renamed one's baseline is its old
path's). Elsewhere (a cold session, open files only) the state before the
setting changed is known for no file the analyzers first saw after it: a
verdict that finds nothing blocking is unverified and says why
(:func:`unseen_setting`); what blocks still blocks.

A command that names a setting and may write (``sed -i ... pyproject.toml``,
``echo ... >> ruff.toml``: :func:`settings_named`), before any change of
the run, waits for the run-start snapshot before it runs, as a tool's
change of a setting does: taken then, it is before every change, and the
verdict judges every file against it (attrs, in a session whose workspace
analysis is deferred: the 139 new findings, 117 distinct file, line and
rule, blocked exactly, rather than an unverified verdict).

A ``pyproject.toml`` changed in its dependency lists only (a dependency
added by an edit, ``uv add`` or ``poetry add``) is no changed setting
(:func:`settings_moved`), where its text before the run is known: a tool's
change captured it, or the workspace's own was read before the run's first
command (a nested one's is not). The analyzers read no dependency list, and
a run that wrote a module and then added its dependency would be unverified
for nothing. What an install changes is the environment's question
(:mod:`rein.analysis.closure`).
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Callable, Collection, Mapping, MutableMapping
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from rein.analysis.baselines import FileBaseline, carried
from rein.analysis.run_texts import settings_changed, text_now
from rein.harness.gating.analyzer_inputs import read_not_checked
from rein.harness.gating.gate_types import GateOutcome
from rein.harness.ports import Diagnostic, Workspace

__all__ = [
    "PROJECT",
    "ProjectBefore",
    "dependencies_only",
    "judged_from_run_start",
    "settings_moved",
    "settings_named",
    "unseen_setting",
]

#: What the analyzers never read of a ``pyproject.toml``: (table, key) and
#: whole tables (key None): PEP 621's and PEP 735's dependency lists, the
#: build's requirements.
UNREAD = (
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("build-system", "requires"),
    ("dependency-groups", None),
)


#: The project file a run changes in its dependency lists (an edit, ``uv
#: add``, ``poetry add``): its text is kept before the run's first command.
PROJECT = "pyproject.toml"


class ProjectBefore:
    """``pyproject.toml``'s text before the first command since the last
    validation (``uv add`` changes its dependency lists only), where no tool
    changed it first; read once, forgotten when the changes are validated."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._read = False  # that command came (None text: not known)

    async def before_command(self, workspace: Workspace, files: Mapping[str, FileBaseline]) -> None:
        """A command is about to run: its text is read, once."""
        if PROJECT not in files and not self._read:
            self._text, self._read = await text_now(workspace, PROJECT), True

    def forget(self) -> None:
        self._text, self._read = None, False

    def unknown(self, files: Mapping[str, FileBaseline]) -> None:
        """A session restored from the store: its text before the stored
        run's commands is not known (not stored: it may hold an index's
        token), unless a tool captured it."""
        self._text, self._read = None, PROJECT not in files

    def text_before_run(self, path: str, files: Mapping[str, FileBaseline]) -> str | None:
        """``path``'s text before the run, where known: read before the run's
        first command, else captured by a tool's first change."""
        if path == PROJECT and self._read:
            return self._text
        baseline = files.get(path)
        return baseline.text_before_the_run if baseline is not None else None


async def settings_moved(
    source: object,
    touched: Collection[str],
    before: Callable[[str], str | None],
    workspace: Workspace | None,
) -> list[str]:
    """The run's changes (``touched``) the analyzers read but never open
    (:func:`~rein.analysis.run_texts.settings_changed`), less a
    ``pyproject.toml`` whose text before the run is known (``before``: a
    tool's change captured it, or it was read before the run's first
    command) and differs in its dependency lists only."""
    moved: list[str] = []
    for path in settings_changed(source, touched):
        was = before(path)
        if was is not None and PurePosixPath(path).name == PROJECT:
            now = await text_now(workspace, path)
            if now is not None and dependencies_only(was, now):
                continue
        moved.append(path)
    return moved


def dependencies_only(before: str, now: str) -> bool:
    """Two texts of a ``pyproject.toml`` differ in what the analyzers never
    read (:data:`UNREAD`) only; False when either is no TOML."""
    try:
        return _read(tomllib.loads(before)) == _read(tomllib.loads(now))
    except tomllib.TOMLDecodeError:
        return False


def _read(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` without :data:`UNREAD` (a table left empty dropped)."""
    kept = dict(document)
    for table, key in UNREAD:
        if key is None:
            kept.pop(table, None)
        elif isinstance(value := kept.get(table), dict):
            rest = {k: v for k, v in value.items() if k != key}
            if rest:
                kept[table] = rest
            else:
                kept.pop(table)
    return kept


def judged_from_run_start(
    files: MutableMapping[str, FileBaseline],
    late: MutableMapping[str, tuple[Diagnostic, ...]],
    run_start: Callable[[str], tuple[Diagnostic, ...]],
) -> None:
    """Every baseline in ``files`` (the changed files') and ``late`` (the
    importers first analysed after the run-start snapshot) made the
    run-start snapshot's entries (``run_start(path)``), in place (a path
    that was no file before the run has none there)."""
    for path, baseline in list(files.items()):
        if baseline.renamed_from is not None:
            old = baseline.renamed_from
            was = FileBaseline(old, baseline.text, run_start(old), renamed_from=None)
            files[path] = carried(was, path)
        else:
            files[path] = replace(baseline, diagnostics=run_start(path), settled=True)
    for path in list(late):
        late[path] = run_start(path)


def unseen_setting(outcome: GateOutcome, settings: Collection[str]) -> GateOutcome:
    """``outcome`` where the run changed ``settings`` and the files it judged
    were not all analysed before they changed: unverified when nothing
    blocks (the findings they bring may have been taken for the state before
    the run), said in the detail either way."""
    names = ", ".join(sorted(settings))
    note = (
        f"a setting the analyzers read from the disk changed ({names}) and the files "
        "judged were not all analysed before it: what it adds to them is not known"
    )
    if outcome.blockers:
        return replace(outcome, detail=f"{outcome.detail}; {note}")
    unverified = note if outcome.unverified is None else f"{outcome.unverified}; {note}"
    return replace(outcome, detail=f"{outcome.detail}; {note}", unverified=unverified)


#: What makes a command one that may write the files it names: an in-place
#: edit, a redirection, a program that writes, moves or takes back files.
_WRITES = re.compile(
    r"(?:^|[\s;&|(])(?:>>?|tee|mv|cp|rm|truncate|patch|dd)(?=$|[\s;&|)])"
    r"|>"
    r"|\b(?:sed|perl)\b[^;&|]*\s(?:-[a-zA-Z]*i\S*|--in-place\S*)"
    r"|\bgit\s+(?:checkout|restore|apply|stash|reset|mv|rm)\b"
)


def settings_named(command: str) -> list[str]:
    """The settings the analyzers read (:data:`~rein.harness.gating.
    analyzer_inputs.SETTING_NAMES`) that ``command`` names where it may
    write (:data:`_WRITES`): a reading command (``cat pyproject.toml``,
    ``grep -i ruff pyproject.toml``, ``git diff pyproject.toml``) names none,
    so that it does not start a deferred workspace analysis."""
    try:
        words = shlex.split(command, comments=True, posix=True)
    except ValueError:
        words = command.split()
    # A redirection's target and a subshell's last word: ``>pyproject.toml``,
    # ``pyproject.toml)``.
    bare = (w.lstrip("<>").rstrip(");&|") for w in words)
    named = sorted({w for w in bare if w and read_not_checked(w)})
    return named if named and _WRITES.search(command) else []
