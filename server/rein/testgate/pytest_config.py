"""The project's pytest configuration as pytest reads it, for every part
of the tests gate that asks (:mod:`rein.testgate.selection`: test paths,
file patterns, the doctest plugin, pytest-xdist's ``-n``, the cache
options; :mod:`rein.testgate.cores`: the project's own workers): the
settings of the first file that has them, in pytest's order
(pytest 9's ``pytest.toml`` and ``.pytest.toml``, their ``[pytest]``
table in native TOML, even an empty file; ``pytest.ini``, even one without
a ``[pytest]`` section, ``.pytest.ini``; ``pyproject.toml``'s
``[tool.pytest]``, native TOML, or ``[tool.pytest.ini_options]``;
``tox.ini``'s ``[pytest]``; ``setup.cfg``'s ``[tool:pytest]``: pytest 9's
``CONFIG_LOADERS_BY_NAME``; until 2026-12-06 the TOML forms were not read,
review23 F4), and the options pytest
adds to its command line: the configured ``addopts``, then
``PYTEST_ADDOPTS`` (pytest reads both; the gate's pytest inherits the
server's environment, less its secrets). One reader: two that each chose
their file disagreed (review20b finding 7)."""

from __future__ import annotations

import configparser
import os
import shlex
import tomllib
from pathlib import Path

__all__ = ["addopts", "config_values", "words"]

#: pytest 9's own TOML files: read whatever their ``[pytest]`` table says
#: (pytest takes the first even when it is empty).
_TOML = ("pytest.toml", ".pytest.toml")
#: Read whatever their section says (pytest takes the first even when it
#: has none of its settings).
_ALWAYS = ("pytest.ini", ".pytest.ini")


def config_values(root: Path) -> dict[str, object] | None:
    """The settings of the first file with pytest's configuration, in
    pytest's order; None when none has it. A TOML file that does not parse
    gives no settings (pytest stops at it with a usage error, so the gate's
    run fails and says so)."""
    for name in _TOML:
        if (root / name).is_file():
            section = _toml(root / name).get("pytest")
            return section if isinstance(section, dict) else {}
    for name in _ALWAYS:
        if (root / name).is_file():
            return _ini(root / name, "pytest") or {}
    if (root / "pyproject.toml").is_file():
        tool = _toml(root / "pyproject.toml").get("tool")
        pytest = tool.get("pytest") if isinstance(tool, dict) else None
        if isinstance(pytest, dict):
            native = {k: v for k, v in pytest.items() if k != "ini_options"}
            if native:  # [tool.pytest], native TOML (pytest 9)
                return native
            section = pytest.get("ini_options")
            if isinstance(section, dict):
                return section
    values = _ini(root / "tox.ini", "pytest")
    if values is None:
        values = _ini(root / "setup.cfg", "tool:pytest")
    return values


def _toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def addopts(root: Path) -> tuple[str, ...]:
    """The options pytest adds to every run of ``root``'s tests: the
    configured ``addopts``, then ``PYTEST_ADDOPTS``."""
    values = config_values(root) or {}
    return (*words(values.get("addopts")), *words(os.environ.get("PYTEST_ADDOPTS")))


def words(value: object) -> tuple[str, ...]:
    """An ini value (space or line separated) or a TOML list or string."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def _ini(path: Path, section: str) -> dict[str, object] | None:
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    return dict(parser[section]) if parser.has_section(section) else None
