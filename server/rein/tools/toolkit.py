"""Toolkits registered by configuration, without editing Rein.

Two routes, both read when a session is built (:func:`configured_toolkits`):

* the ``tools.toolkits`` setting: import paths ``"package.module:ClassName"``;
* the ``rein.toolkits`` entry point group of installed distributions
  (``[project.entry-points."rein.toolkits"] notes = "notes_kit:NotesToolkit"``).

Each names a :class:`~rein.harness.toolkit.Toolkit` subclass (made with no
arguments) or an instance. A path that does not import, names nothing, or
names something else is a :class:`~rein.harness.errors.ConfigError` that
names the setting (or the entry point): a toolkit is never skipped quietly.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from importlib import metadata
from typing import Any

from rein.harness.errors import ConfigError
from rein.harness.toolkit import Toolkit

__all__ = ["ENTRY_POINT_GROUP", "TOOLKITS_KEY", "configured_toolkits", "load_toolkit"]

#: The entry point group installed toolkits register in.
ENTRY_POINT_GROUP = "rein.toolkits"
#: The setting that lists toolkit import paths.
TOOLKITS_KEY = "tools.toolkits"


def _toolkit_of(found: Any, where: str) -> Toolkit:
    if isinstance(found, Toolkit):
        return found
    if isinstance(found, type) and issubclass(found, Toolkit):
        try:
            return found()
        except Exception as exc:
            raise ConfigError(
                f"{where}: {found.__qualname__}() failed: {exc}", TOOLKITS_KEY
            ) from exc
    raise ConfigError(
        f"{where}: names {type(found).__name__} {found!r}, not a "
        "rein.harness.toolkit.Toolkit subclass",
        TOOLKITS_KEY,
    )


def load_toolkit(path: str) -> Toolkit:
    """The toolkit at ``"package.module:ClassName"`` (``tools.toolkits``)."""
    where = f"{TOOLKITS_KEY}: {path!r}"
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f'{where} is not an import path "package.module:ClassName"', TOOLKITS_KEY)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(
            f"{where}: cannot import {module_name}: {type(exc).__name__}: {exc}", TOOLKITS_KEY
        ) from exc
    found: Any = module
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ConfigError(f"{where}: {module_name} has no attribute {attr}", TOOLKITS_KEY)
        found = getattr(found, part)
    return _toolkit_of(found, where)


def _entry_point_toolkits() -> Iterable[Toolkit]:
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f"{ENTRY_POINT_GROUP} entry point {entry.name} = {entry.value!r}"
        try:
            found = entry.load()
        except Exception as exc:
            raise ConfigError(
                f"{where}: cannot load it: {type(exc).__name__}: {exc}", TOOLKITS_KEY
            ) from exc
        yield _toolkit_of(found, where)


def configured_toolkits(paths: Iterable[str]) -> list[Toolkit]:
    """The toolkits of installed distributions' ``rein.toolkits`` entry
    points, then those of ``paths`` (``tools.toolkits``), each once."""
    kits: list[Toolkit] = []
    for kit in [*_entry_point_toolkits(), *(load_toolkit(p) for p in paths)]:
        if all(type(k) is not type(kit) for k in kits):
            kits.append(kit)
    return kits
