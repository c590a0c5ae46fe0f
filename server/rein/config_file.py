"""The configuration of the headless commands (``rein run``, ``rein acp``,
``rein mcp``): a file, then environment variables, then flags. Light on
purpose: ``rein acp`` reads it before it answers ``initialize``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from rein.config import ReinConfig, load_config
from rein.harness.errors import ConfigError

__all__ = ["build_config", "storage_folder"]


def build_config(config_file: str | None, overrides: dict[str, Any]) -> ReinConfig:
    """The config file (JSON or YAML, a ``rein`` section), then env vars
    (REIN_PROVIDER, REIN_MODEL, REIN_BASE_URL), then flags.

    Strict, unlike the language server: with no one to read a warning
    mid-run, an invalid value stops ``rein run`` before any request, with a
    ConfigError naming every bad key and the values it allows."""
    data: dict[str, Any] = {}
    path = config_file or os.environ.get("REIN_CONFIG")
    if path:
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the configuration file {path}: {exc}") from exc
        section = loaded.get("rein", loaded) if isinstance(loaded, dict) else loaded
        if section is not None and not isinstance(section, dict):
            raise ConfigError(
                f"invalid configuration file {path}: the rein section must be a mapping, "
                f"not {type(section).__name__}"
            )
        data = dict(section or {})
    source = _source(path, [e for e in _ENV_KEYS if os.environ.get(e)], bool(overrides))
    given = data.get("model")
    if given is not None and not isinstance(given, dict):
        raise ConfigError(
            f"invalid {source}: rein.model: must be a mapping, not {type(given).__name__}", "model"
        )
    model = dict(given or {})
    for env, key in _ENV_KEYS.items():
        if os.environ.get(env):
            model[key] = os.environ[env]
    for key, value in overrides.items():
        if value is None:
            continue
        section_name, _, name = key.partition(".")
        if section_name == "model":
            model[name] = value
        else:
            part = data.setdefault(section_name, {})
            if not isinstance(part, dict):
                raise ConfigError(
                    f"invalid {source}: rein.{section_name}: must be a mapping", section_name
                )
            part[name] = value
    data["model"] = model
    return load_config(data, source)


#: The environment variables build_config reads, and the model setting each sets.
_ENV_KEYS = {"REIN_PROVIDER": "provider", "REIN_MODEL": "model", "REIN_BASE_URL": "baseUrl"}


def _source(path: str | None, env: list[str], flags: bool) -> str:
    """Where the values came from, for messages: ``configuration (rein.yaml,
    REIN_PROVIDER and flags)``; a bad value set by an environment variable
    is traced to it."""
    parts = ([path] if path else []) + env + (["flags"] if flags else [])
    if not parts:
        return "configuration"
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"configuration ({listed})"


def storage_folder(flag: str | None, config_file: str | None = None) -> str:
    """The session store's folder as ``rein run`` finds it: ``--storage``
    (``flag``), else the configuration's ``storagePath`` (``config_file``,
    else ``REIN_CONFIG``), else the user data dir. So ``rein sessions``,
    ``undo`` and ``apply`` find the sessions ``rein run`` stored. Raises
    ConfigError for a configuration it cannot read (never a silent
    fallback to the default folder)."""
    if flag:
        return flag
    from rein.store import default_storage_path

    configured = build_config(config_file, {}).storage_path
    return configured or str(default_storage_path())
