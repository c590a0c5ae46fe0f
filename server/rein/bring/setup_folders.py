"""One walk over the person's setup folders, for every kind read from
markdown files (skills, custom agents, commands).

Each kind names its places (:class:`Place`: the workspace's folders, the
user's ``~/.claude/...``, the configured ones) and how one file becomes an
item; :func:`walk_setup_folders` reads them in order, through the
workspace's sandbox rules (:func:`rein.bring.frontmatter.read`), and
reports every file that cannot be used as an :class:`Invalid`: one that
does not read or parse, and one whose name an earlier place already has
(the first place wins). A folder reached twice (the workspace is the home
folder, a link) is read once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Protocol, TypeVar

from rein.bring.frontmatter import Document, FrontmatterError, read
from rein.bring.sources import Invalid, Scope, display_path, read_within

__all__ = ["Place", "SetupItemFile", "personal_first", "walk_setup_folders"]


@dataclass(frozen=True)
class Place:
    """A setup folder: where, whose, which files of it, in which format."""

    folder: Path
    scope: Scope
    #: The files it holds, as a glob below ``folder`` (``*.md``, ``*/SKILL.md``).
    pattern: str
    #: The files' format, for the kind that reads them (``claude``, ``copilot``).
    format: str = ""
    #: The most files read from it (None: every one); past it the folder is
    #: reported and the first ones found are read.
    limit: int | None = None


def personal_first(
    user: Sequence[Place], project: Sequence[Place], root: Path, home: Path | None
) -> list[Place]:
    """The person's folders before the workspace's, so their skill or
    command keeps its name (Claude Code: personal over project); a
    workspace that is the home folder is read as the workspace's."""
    if home is not None and home.resolve() == root.resolve():
        return [*project, *user]
    return [*user, *project]


class SetupItemFile(Protocol):
    """What the walk needs of an item: its name, and where it was found."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...


T = TypeVar("T", bound=SetupItemFile)


def walk_setup_folders(
    kind: str,
    places: Iterable[Place],
    root: Path,
    home: Path | None,
    deny_globs: Sequence[str],
    make: Callable[[Document, Path, Place, str], T],
    clash: Callable[[T, T], str],
    check: Callable[[Path], None] | None = None,
) -> tuple[tuple[T, ...], tuple[Invalid, ...]]:
    """The items of ``kind`` in ``places`` and the files that are not used.

    ``make(document, path, place, shown)`` turns a read file into an item
    (a ValueError: invalid with its message); ``check(path)`` runs before a
    file is read (a ValueError: invalid); ``clash(second, first)`` says why
    a name found again is not used. ``shown`` is the file's path as the
    person reads it (workspace-relative, ``~/...``)."""
    items: dict[str, T] = {}
    invalid: list[Invalid] = []
    seen: set[Path] = set()
    for place in places:
        folder = place.folder
        if not folder.is_dir() or folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        found = folder.glob(place.pattern)
        if place.limit is None:
            paths = list(found)
        else:
            paths = list(islice(found, place.limit + 1))
            if len(paths) > place.limit:
                paths = paths[: place.limit]
                invalid.append(
                    Invalid(
                        kind,
                        display_path(folder, root, home),
                        f"over {place.limit} files: only the first {place.limit} found are read",
                    )
                )
        for path in sorted(paths):
            if not path.is_file():
                continue
            shown = display_path(path, root, home)
            try:
                if check is not None:
                    check(path)
                within, outside = read_within(root, folder, place.scope)
                document = read(path, within, deny_globs=deny_globs, outside=outside)
                item = make(document, path, place, shown)
            except (FrontmatterError, ValueError) as exc:
                invalid.append(Invalid(kind, shown, str(exc)))
                continue
            first = items.get(item.name)
            if first is not None:
                invalid.append(Invalid(kind, shown, clash(item, first)))
                continue
            items[item.name] = item
    return tuple(items.values()), tuple(invalid)
