"""A file name that appears more than once under ``server/rein`` (the house
rule: only where the folder names make the difference obvious) says in its
docstring's first line which one it is: that line is there and differs
from the first line of every other module of the same name."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

REIN = Path(__file__).resolve().parents[1] / "server" / "rein"

#: Names every package may have; they say what they are by their folder.
EXEMPT = {"__init__.py", "__main__.py"}


def _modules_by_name() -> dict[str, list[Path]]:
    by_name: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(REIN.rglob("*.py")):
        if path.name not in EXEMPT:
            by_name[path.name].append(path)
    return {name: paths for name, paths in by_name.items() if len(paths) > 1}


def _first_line(path: Path) -> str:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    return docstring.splitlines()[0].strip() if docstring else ""


REPEATED = _modules_by_name()


def test_the_check_sees_the_repeated_names() -> None:
    # The tree has repeated names today (agent.py, config.py, ...): an empty
    # list would mean the check looks in the wrong place.
    assert {"agent.py", "config.py", "preview.py"} <= set(REPEATED)


@pytest.mark.parametrize("name", sorted(REPEATED))
def test_each_module_of_a_repeated_name_says_which_one_it_is(name: str) -> None:
    lines = {path.relative_to(REIN).as_posix(): _first_line(path) for path in REPEATED[name]}
    missing = sorted(module for module, line in lines.items() if not line)
    assert not missing, f"no docstring first line in {missing}"
    shared = {line for line in lines.values() if list(lines.values()).count(line) > 1}
    assert not shared, f"{name}: the same first line in more than one module: {lines}"


def _repeated_inside_a_package() -> dict[tuple[str, str], list[str]]:
    """(top-level package, file name) -> its modules, where a name repeats
    inside one package of ``rein`` (its subpackages included)."""
    by_package: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(REIN.rglob("*.py")):
        parts = path.relative_to(REIN).parts
        if len(parts) > 1 and path.name not in EXEMPT:
            by_package[(parts[0], path.name)].append("/".join(parts))
    return {key: paths for key, paths in by_package.items() if len(paths) > 1}


def test_no_name_repeats_inside_one_package() -> None:
    # lsp/lm.py beside lsp/handlers/lm.py read as one module in two places:
    # a package's helpers and its handlers are named apart.
    assert _repeated_inside_a_package() == {}
