"""The texts a verdict's shadows hold for the changed files: each as the
workspace port has it now, and as it was before the run.

The tests gate (:mod:`rein.testgate.gate`) overlays the first on the
shadow the run's tests see, the second on the baseline's; a file whose
earlier text is not known stays there as it is now. When every changed
file is as it was before the run (:func:`undone`), no test runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from rein.harness.errors import ReinError
from rein.harness.gating.gate_types import PriorTexts, UnsavedDocuments
from rein.harness.ports import Workspace
from rein.testgate.selection import imported_by

__all__ = ["current_texts", "texts_before", "undone", "unsaved_imported"]


async def current_texts(
    root: Path, changed: Sequence[str], workspace: Workspace | None
) -> dict[str, str | None]:
    """Each changed file as the workspace port has it (the editor's or
    the client's buffer; without one, the disk under ``root``), None when
    it no longer exists."""
    overlay: dict[str, str | None] = {}
    if workspace is None:
        for path in changed:
            file = root / path
            try:
                overlay[path] = file.read_text(encoding="utf-8") if file.is_file() else None
            except UnicodeDecodeError:
                continue  # not text: the disk's bytes are copied as they are
        return overlay
    for path in changed:
        if not await workspace.exists(path):
            overlay[path] = None
            continue
        try:
            overlay[path] = (await workspace.read_text(path)).text
        except (ReinError, UnicodeDecodeError):
            # Not text (an image): the disk's bytes are copied as they are.
            continue
    return overlay


def texts_before(
    changed: Sequence[str],
    prior: Mapping[str, str | None],
    prior_texts: PriorTexts | None,
) -> tuple[dict[str, str | None], list[str]]:
    """Each changed file before the run (the gate's ``prior``, else the
    ``prior_texts`` source); the files whose earlier text is not known
    (they stay as they are now)."""
    overlay: dict[str, str | None] = {}
    unknown: list[str] = []
    for path in changed:
        if path in prior:
            overlay[path] = prior[path]
            continue
        text = prior_texts.text_before_change(path) if prior_texts else None
        if text is not None:
            overlay[path] = text
        else:
            unknown.append(path)
    return overlay, unknown


def undone(
    changed: Sequence[str],
    overlay: Mapping[str, str | None],
    before: Mapping[str, str | None],
    unknown: Sequence[str],
) -> str:
    """What the detail says when every changed file is as it was before
    the run (its text known then and read now, or absent both times):
    the tests behave as they did before the run, so none can be broken
    by it and none needs to run; "" otherwise."""
    if unknown or any(path not in overlay or overlay[path] != before[path] for path in changed):
        return ""
    return (
        f"the run's changes are undone: its {len(changed)} changed file(s) are as they "
        "were before the run, so no test runs"
    )


async def unsaved_imported(
    root: Path, workspace: Workspace | None, changed: Sequence[str], tests: Sequence[str]
) -> str:
    """The files the person has unsaved in the editor (the run did not
    change them) that one of the test files ``tests`` imports,
    comma-separated: the tests read their saved text."""
    if not isinstance(workspace, UnsavedDocuments):
        return ""
    unsaved = [p for p in workspace.unsaved_paths() if p not in changed]
    if not unsaved:
        return ""
    found = await asyncio.to_thread(imported_by, root, unsaved, tests)
    return ", ".join(found)
