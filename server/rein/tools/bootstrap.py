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
from dataclasses import dataclass
from pathlib import Path

from rein.harness.errors import SandboxError, ToolError
from rein.tools._files import Entry, FileTree, plural
from rein.tools._globs import glob_regex
from rein.tools.instruction_imports import IMPORTING_FILES, MAX_IMPORTS, imports_of
from rein.tools.sandbox import Sandbox
from rein.tools.secret_files import DEFAULT_SECRET_RULES, SecretFiles, secret_note
from rein.tools.settings import DEFAULT_DENY_GLOBS, DEFAULT_INSTRUCTION_FILES

__all__ = [
    "INSTRUCTION_FILES",
    "MAX_ALL_INSTRUCTIONS_CHARS",
    "FoundInstructions",
    "InstructionFile",
    "bootstrap_message",
    "find_instructions",
    "find_project_instructions",
    "instructions_text",
    "project_instructions",
    "user_instructions",
    "workspace_summary",
]

#: The default instruction-file globs (the setting ``instructions.files``).
INSTRUCTION_FILES = DEFAULT_INSTRUCTION_FILES
#: Each instruction file is cut at this many characters.
MAX_INSTRUCTIONS_CHARS = 16_000
#: The most workspace entries visited looking for instruction files.
MAX_INSTRUCTION_WALK = 20_000
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


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One instruction file read: its workspace-relative path, its text
    (bounded) and, for an AGENTS.md in a subfolder, the folder it applies to
    (``"src/api/"``; None: the whole workspace)."""

    path: str
    text: str
    scope: str | None = None
    #: The CLAUDE.md whose ``@path`` brought it in (None: found by a glob).
    imported_by: str | None = None


@dataclass(frozen=True, slots=True)
class FoundInstructions:
    files: tuple[InstructionFile, ...]
    #: Why a matching file was not read (outside the workspace, protected,
    #: a hard link), and whether the search stopped at its bound.
    notes: tuple[str, ...]


def _matching(root: str, globs: Sequence[str]) -> tuple[list[tuple[int, str]], bool]:
    """``(index of the first glob it matches, path)`` of every file the
    globs match, ``.gitignore``-aware, visiting at most
    :data:`MAX_INSTRUCTION_WALK` entries; and whether it stopped there."""
    regexes = [glob_regex(g.strip().removeprefix("./"), anchored=True) for g in globs]
    deep = any("**" in g for g in globs)
    depth = None if deep else max((g.count("/") + 1 for g in globs), default=1)
    found: list[tuple[int, str]] = []
    for visited, entry in enumerate(FileTree(root).walk(max_depth=depth)):
        if visited >= MAX_INSTRUCTION_WALK:
            return found, True
        if entry.is_dir and not entry.is_symlink:
            continue
        for index, regex in enumerate(regexes):
            if regex.match(entry.path):
                found.append((index, entry.path))
                break
    return found, False


def _read_one(sandbox: Sandbox, name: str) -> tuple[str | None, str | None]:
    """``(text, None)``, ``(None, note)`` for a file not read for safety, or
    ``(None, None)`` for one with nothing to read."""
    try:
        rel = sandbox.resolve(name)
    except SandboxError:
        return None, f"{name} was not read: it leads outside the workspace."
    secret = sandbox.secret_by(rel)
    if secret is not None:
        return None, secret_note(name, secret)
    glob = sandbox.denied_by(rel)
    if glob is not None:
        return None, f"{name} was not read: it leads to a protected file ({glob})."
    try:
        # Opened once by the resolved path and checked (rein.tools.sandbox).
        disk = sandbox.read_disk(rel, 4 * MAX_INSTRUCTIONS_CHARS)
    except SandboxError:
        return None, f"{name} was not read: it leads outside the workspace."
    except ToolError:
        return None, None  # a folder, a pipe, unreadable
    if disk is None:
        return None, None
    if disk.links > 1:
        return None, (
            f"{name} was not read: it is a hard link ({disk.links} names), and another "
            "name may be outside the workspace."
        )
    text = disk.data.decode("utf-8", "replace").strip()
    if len(text) > MAX_INSTRUCTIONS_CHARS:
        text = text[:MAX_INSTRUCTIONS_CHARS] + f"\n[... {name} cut here ...]"
    return text or None, None


def _read_import(sandbox: Sandbox, path: str) -> tuple[str, str | None, str | None]:
    """:func:`_read_one` for an import: ``(its workspace-relative path,
    text, note)``."""
    try:
        rel = sandbox.resolve(path)
    except SandboxError:
        return path, None, f"{path} was not read: it leads outside the workspace."
    text, note = _read_one(sandbox, rel)
    return rel, text, note


def _with_imports(
    sandbox: Sandbox,
    files: Sequence[InstructionFile],
    notes: list[str],
    home: str | None = None,
) -> list[InstructionFile]:
    """``files``, each CLAUDE.md followed by the files its ``@path``
    lines import (:mod:`rein.tools.instruction_imports`; ``home``: what
    ``@~/`` means, for the person's own file)."""
    seen = {f.path for f in files}
    out: list[InstructionFile] = []
    left = MAX_IMPORTS
    for found in files:
        out.append(found)
        if found.path.rpartition("/")[2] not in IMPORTING_FILES:
            continue
        brought = imports_of(
            found.path, found.text, lambda p: _read_import(sandbox, p), seen, notes, left, home
        )
        left -= len(brought)
        out.extend(InstructionFile(i.path, i.text, imported_by=i.imported_by) for i in brought)
    return out


#: How the person's own instruction file and its imports are named.
USER_PREFIX = "~/.claude/"


def user_instructions(
    home: str | os.PathLike[str] | None,
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> FoundInstructions:
    """The person's own ``~/.claude/CLAUDE.md`` (Claude Code's user memory)
    and the files it imports, read inside ``~/.claude`` only (under the same
    rules as the workspace's: no link out, no protected file, no hard
    link); named ``~/.claude/...``. None found with no ``home``."""
    if home is None:
        return FoundInstructions((), ())
    folder = Path(home) / ".claude"
    sandbox = Sandbox(str(folder), deny_globs, secret_files)
    notes: list[str] = []
    text, note = _read_one(sandbox, "CLAUDE.md")
    if text is None and note is not None and "leads outside" in note:
        # A per-file dotfiles link (~/.claude/CLAUDE.md -> ~/dotfiles/...):
        # the person's own link, which no workspace writes, is followed; the
        # file it leads to is read under the same rules (protected, hard link).
        try:
            real = (folder / "CLAUDE.md").resolve(strict=True)
        except (OSError, RuntimeError):
            real = None
        if real is not None:
            link = Sandbox(str(real.parent), deny_globs, secret_files)
            text, note = _read_one(link, real.name)
            note = note and note.replace(real.name, "CLAUDE.md", 1)
    if text is None:
        shown = note.replace("outside the workspace", "outside ~/.claude") if note else None
        return FoundInstructions((), (USER_PREFIX + shown,) if shown else ())
    files = _with_imports(sandbox, [InstructionFile("CLAUDE.md", text)], notes, str(Path(home)))
    # Its notes name its files from its folder, which is not the workspace.
    notes = [USER_PREFIX + n.replace("outside the workspace", "outside ~/.claude") for n in notes]
    named = tuple(
        InstructionFile(
            USER_PREFIX + f.path,
            f.text,
            imported_by=USER_PREFIX + f.imported_by if f.imported_by else None,
        )
        for f in files
    )
    return FoundInstructions(named, tuple(notes))


def _scope(path: str) -> str | None:
    folder, _, name = path.rpartition("/")
    return f"{folder}/" if folder and name == "AGENTS.md" else None


def find_instructions(
    root: str | os.PathLike[str],
    files: Sequence[str] = DEFAULT_INSTRUCTION_FILES,
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> FoundInstructions:
    """Every instruction file the globs ``files`` match, read under the
    file tools' sandbox (a symlink out of the workspace, a protected file or
    a hard link is never read; a note says so). Workspace-wide files first
    in the order of ``files``, then each subfolder's AGENTS.md, shallowest
    first; a CLAUDE.md is followed by the files it imports (``@path``)."""
    sandbox = Sandbox(str(root), deny_globs, secret_files)
    notes: list[str] = []
    read: list[tuple[tuple[int, int, int, str], InstructionFile]] = []
    matches, cut = _matching(sandbox.root, files)
    if cut:
        notes.append(
            f"Instruction files were looked for in the first {MAX_INSTRUCTION_WALK} "
            "entries of the workspace only."
        )
    for index, path in matches:
        text, note = _read_one(sandbox, path)
        if note is not None:
            notes.append(note)
        if text is None:
            continue
        scope = _scope(path)
        key = (scope is not None, index, path.count("/"), path)
        read.append((key, InstructionFile(path, text, scope)))
    ordered = [f for _, f in sorted(read, key=lambda r: r[0])]
    return FoundInstructions(tuple(_with_imports(sandbox, ordered, notes)), tuple(notes))


def _block(found: InstructionFile) -> str:
    scope = f' applies_to="{found.scope}"' if found.scope else ""
    if found.imported_by:
        scope += f' imported_by="{found.imported_by}"'
    return (
        f'<project_instructions file="{found.path}"{scope}>\n{found.text}\n</project_instructions>'
    )


#: The most characters the instructions take in the prompt, every file
#: together (the prompt's own cut, at 20 000, is only a backstop).
MAX_ALL_INSTRUCTIONS_CHARS = 19_000
#: What a file cut to fit ends with (the text's length is counted first).
_CUT_MARK = "\n[... {} cut here to fit the prompt ...]"


def _fit(found: Sequence[InstructionFile], budget: int) -> list[InstructionFile]:
    """``found`` with their texts fitting ``budget`` characters together:
    the shorter files whole, the longer ones cut to an equal share of what
    is left (so a large file of the person's, or a large import, never
    pushes a short project file out), each cut file saying so."""
    budget = max(budget, 0)
    if sum(len(f.text) for f in found) <= budget:
        return list(found)
    shares: dict[int, int] = {}
    left, count = budget, len(found)
    for index in sorted(range(len(found)), key=lambda i: len(found[i].text)):
        share = left // count
        shares[index] = min(len(found[index].text), share)
        left -= shares[index]
        count -= 1
    out = []
    for index, file in enumerate(found):
        if shares[index] < len(file.text):
            mark = _CUT_MARK.format(file.path)
            text = file.text[: max(shares[index] - len(mark), 0)] + mark
            file = InstructionFile(file.path, text, file.scope, file.imported_by)
        out.append(file)
    return out


def instructions_text(
    found: Sequence[InstructionFile], budget: int = MAX_ALL_INSTRUCTIONS_CHARS
) -> str | None:
    """The instructions as the prompt carries them: the list of every file
    found, the nearest-wins rule when a subfolder has its own AGENTS.md, then
    one tagged block per file; all within ``budget`` characters (the longer
    files cut, :func:`_fit`, and named)."""
    if not found:
        return None
    empty = [InstructionFile(f.path, "", f.scope, f.imported_by) for f in found]
    overhead = len(_render(empty, [f.path for f in found]))
    fitted = _fit(found, budget - overhead)
    return _render(fitted, [f.path for f, g in zip(found, fitted, strict=True) if f is not g])


def _render(found: Sequence[InstructionFile], cut: Sequence[str] = ()) -> str:
    own = any(f.path.startswith(USER_PREFIX) for f in found)
    if len(found) == 1 and found[0].scope is None and not own and not cut:
        return _block(found[0])
    lines = ["Instruction files found: " + ", ".join(f.path for f in found) + "."]
    if own:
        lines.append(
            f"The files named {USER_PREFIX}... are the person's own instructions (for every "
            "project); the others are the repository's."
        )
    if cut:
        lines.append(f"Cut to fit the prompt (read the rest when you need it): {', '.join(cut)}.")
    if any(f.scope for f in found):
        lines.append(
            "An AGENTS.md in a subfolder applies to the files under that folder; for a "
            "file, the AGENTS.md nearest to it wins where it disagrees with one further "
            "up. Follow the one that applies to a file when you change it."
        )
    if any(f.imported_by for f in found):
        lines.append(
            "A file with imported_by was named with @ in that file (an import): its text is "
            "part of that file's instructions."
        )
    return "\n".join(lines) + "\n\n" + "\n\n".join(_block(f) for f in found)


def find_project_instructions(
    root: str | os.PathLike[str], deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS
) -> tuple[str, str] | None:
    """``(path, text)`` of the first instruction file found with the
    default globs, bounded; read under the same sandbox as the file tools."""
    found = find_instructions(root, DEFAULT_INSTRUCTION_FILES, deny_globs).files
    return (found[0].path, found[0].text) if found else None


def project_instructions(
    root: str | os.PathLike[str],
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
    files: Sequence[str] = DEFAULT_INSTRUCTION_FILES,
    home: str | os.PathLike[str] | None = None,
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> str | None:
    """The person's own ``~/.claude/CLAUDE.md`` (with ``home``,
    :func:`user_instructions`), then every instruction file ``files``
    match (:func:`instructions_text`); None when there is none. No secret
    file (``secret_files``) is read, imported or not."""
    own = user_instructions(home, deny_globs, secret_files).files
    found = find_instructions(root, files, deny_globs, secret_files).files
    return instructions_text(own + found)


def bootstrap_message(
    root: str | os.PathLike[str],
    *,
    include_instructions: bool = False,
    max_entries: int = 200,
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
    files: Sequence[str] = DEFAULT_INSTRUCTION_FILES,
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> str:
    """Context prepended to the first user message of a session."""
    parts = [
        "Context for this session (gathered automatically):",
        f'<workspace root="{Path(root).resolve()}">\n'
        f"{workspace_summary(root, max_entries)}\n</workspace>",
    ]
    found = find_instructions(root, files, deny_globs, secret_files)
    text = instructions_text(found.files)
    if include_instructions and text is not None:
        parts.append(text)
    if found.notes:
        parts.append("<note>\n" + "\n".join(found.notes) + "\n</note>")
    return "\n\n".join(parts)
