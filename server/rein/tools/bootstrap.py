"""Bootstrap context for the first message of a session: a compact tree of
the workspace and the project's instructions for agents.

This module does the I/O; :func:`rein.harness.prompts.build_system_prompt`
only assembles text. Use the project instructions in one place: either in
the system prompt (``project_instructions(root)``) or in the first message
(``bootstrap_message(root, include_instructions=True)``), not both.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rein.harness.errors import SandboxError, ToolError
from rein.tools._files import Entry, FileTree, plural
from rein.tools.sandbox import Sandbox
from rein.tools.settings import DEFAULT_DENY_GLOBS

__all__ = [
    "INSTRUCTION_FILES",
    "bootstrap_message",
    "find_project_instructions",
    "project_instructions",
    "workspace_summary",
]

#: Looked for in this order; the first that exists is used.
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md")
MAX_INSTRUCTIONS_CHARS = 16_000
_CHILDREN_PER_DIR = 8


def _describe(entry: Entry) -> str:
    return f"{entry.name}/" if entry.is_dir else entry.name


def workspace_summary(root: str | os.PathLike[str], max_entries: int = 200) -> str:
    """The top level of the workspace and the first entries of each top-level
    directory, ``.gitignore``-aware, at most ``max_entries`` lines of entries."""
    tree = FileTree(root)
    top, ignored = tree.list_dir("")
    lines: list[str] = []
    left_out = 0
    for entry in top:
        if len(lines) >= max_entries:
            left_out += 1
            continue
        if not entry.is_dir or entry.is_symlink:
            lines.append(_describe(entry))
            continue
        children, _ = tree.list_dir(entry.path)
        count = plural(len(children), "entry", "entries")
        lines.append(f"{entry.name}/ ({count})" if children else f"{entry.name}/")
        room = min(_CHILDREN_PER_DIR, max_entries - len(lines))
        for child in children[: max(room, 0)]:
            lines.append(f"  {_describe(child)}")
        if len(children) > max(room, 0):
            lines.append(f"  ... {len(children) - max(room, 0)} more")
    if left_out:
        lines.append(f"... {left_out} more top-level entries not shown")
    if not lines:
        lines.append("(empty)")
    if ignored:
        lines.append(
            f"({plural(ignored, 'top-level entry', 'top-level entries')} ignored by "
            ".gitignore not shown)"
        )
    return "\n".join(lines)


def _read_instructions(
    root: str | os.PathLike[str], deny_globs: Sequence[str]
) -> tuple[tuple[str, str] | None, list[str]]:
    """The first instruction file found, read through the workspace sandbox
    (as the file tools would), and a note for each one skipped: a symlink
    out of the workspace or to a protected file is never read."""
    sandbox = Sandbox(str(root), deny_globs)
    notes: list[str] = []
    for name in INSTRUCTION_FILES:
        path = Path(sandbox.root, name)
        if not os.path.lexists(path):
            continue
        try:
            rel = sandbox.resolve(name)
        except SandboxError:
            notes.append(f"{name} was not read: it leads outside the workspace.")
            continue
        glob = sandbox.denied_by(rel)
        if glob is not None:
            notes.append(f"{name} was not read: it leads to a protected file ({glob}).")
            continue
        try:
            # Opened once by the resolved path and checked (rein.tools.sandbox).
            disk = sandbox.read_disk(rel, 4 * MAX_INSTRUCTIONS_CHARS)
        except SandboxError:
            notes.append(f"{name} was not read: it leads outside the workspace.")
            continue
        except ToolError:
            continue  # a folder, a pipe, unreadable
        if disk is None:
            continue
        if disk.links > 1:
            notes.append(
                f"{name} was not read: it is a hard link ({disk.links} names), and another "
                "name may be outside the workspace."
            )
            continue
        text = disk.data.decode("utf-8", "replace").strip()
        if not text:
            continue
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            text = text[:MAX_INSTRUCTIONS_CHARS] + f"\n[... {name} cut here ...]"
        return (name, text), notes
    return None, notes


def find_project_instructions(
    root: str | os.PathLike[str], deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS
) -> tuple[str, str] | None:
    """``(file name, text)`` of the first instruction file found, bounded;
    read under the same sandbox as the file tools."""
    return _read_instructions(root, deny_globs)[0]


def project_instructions(
    root: str | os.PathLike[str], deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS
) -> str | None:
    """The text of AGENTS.md (else CLAUDE.md, else
    .github/copilot-instructions.md), bounded; None when there is none."""
    found = find_project_instructions(root, deny_globs)
    return found[1] if found else None


def bootstrap_message(
    root: str | os.PathLike[str],
    *,
    include_instructions: bool = False,
    max_entries: int = 200,
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
) -> str:
    """Context prepended to the first user message of a session."""
    parts = [
        "Context for this session (gathered automatically):",
        f'<workspace root="{Path(root).resolve()}">\n'
        f"{workspace_summary(root, max_entries)}\n</workspace>",
    ]
    found, notes = _read_instructions(root, deny_globs)
    if include_instructions and found is not None:
        name, text = found
        parts.append(f'<project_instructions file="{name}">\n{text}\n</project_instructions>')
    if notes:
        parts.append("<note>\n" + "\n".join(notes) + "\n</note>")
    return "\n\n".join(parts)
