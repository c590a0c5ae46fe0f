"""Reading the three sources of MCP servers and checking each entry's fields.

Nothing here asks anyone or substitutes a variable: an :class:`Entry` is a
server as written, :func:`parse_entry` turns it into a
:class:`~rein.mcp.spec.McpServerSpec` (variables still in) or raises
:class:`McpConfigError` naming the file, the server and the field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rein.harness.errors import ReinError
from rein.harness.redaction import remember_secret
from rein.mcp._jsonc import JsoncError, loads_jsonc
from rein.mcp.spec import InputSpec, McpServerSpec, Source, Transport

__all__ = [
    "SETTINGS_WHERE",
    "WORKSPACE_SETTINGS_WHERE",
    "Entry",
    "McpConfigError",
    "parse_entry",
    "read_sources",
]

VSCODE_FILE = ".vscode/mcp.json"
MCP_JSON_FILE = ".mcp.json"
SETTINGS_WHERE = "settings rein.mcp.servers"
WORKSPACE_SETTINGS_WHERE = "workspace settings rein.mcp.servers"

#: The fields a server may have (the camelCase names of the files).
_FIELDS = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "envFile",
        "cwd",
        "url",
        "headers",
        "disabled",
        "includeTools",
        "excludeTools",
        "timeout",
    }
)
#: VS Code's own fields that Rein has no use for (not reported).
_VSCODE_ONLY = frozenset({"dev", "gallery", "version", "description"})


class McpConfigError(ReinError, ValueError):
    """An invalid server entry; the message names where and which field."""


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    source: Source
    #: Where it is written, for messages: ".vscode/mcp.json", ...
    where: str
    raw: Any

    @property
    def workspace_defined(self) -> bool:
        """Defined by the workspace (a file, or its settings): trust first."""
        return self.source != "settings" or self.where == WORKSPACE_SETTINGS_WHERE


def read_sources(
    root: Path,
    settings: Mapping[str, Any],
    config_files: bool,
    workspace_settings: Collection[str] = (),
) -> tuple[list[Entry], dict[str, InputSpec], list[str]]:
    """Every entry, highest precedence first; the inputs of
    ``.vscode/mcp.json``; file-level errors. ``workspace_settings``: the
    names in ``settings`` that the workspace's settings define."""
    entries = [
        Entry(
            name,
            "settings",
            WORKSPACE_SETTINGS_WHERE if name in workspace_settings else SETTINGS_WHERE,
            raw,
        )
        for name, raw in sorted(settings.items())
    ]
    inputs: dict[str, InputSpec] = {}
    errors: list[str] = []
    if not config_files:
        return entries, inputs, errors
    vscode = _read_file(root / VSCODE_FILE, VSCODE_FILE, "servers", errors)
    if vscode is not None:
        servers, document = vscode
        entries += [Entry(n, "vscode", VSCODE_FILE, r) for n, r in sorted(servers.items())]
        inputs = _inputs(document.get("inputs"), errors)
    claude = _read_file(root / MCP_JSON_FILE, MCP_JSON_FILE, "mcpServers", errors)
    if claude is not None:
        servers, _ = claude
        entries += [Entry(n, "mcp.json", MCP_JSON_FILE, r) for n, r in sorted(servers.items())]
    return entries, inputs, errors


def _read_file(
    path: Path, where: str, key: str, errors: list[str]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{where}: cannot be read: {exc}")
        return None
    try:
        document = loads_jsonc(text)
    except JsoncError as exc:
        errors.append(f"{where}: not valid JSON: {exc}; none of its servers start")
        return None
    if not isinstance(document, dict):
        errors.append(f"{where}: must be a JSON object; none of its servers start")
        return None
    servers = document.get(key, {})
    if not isinstance(servers, dict):
        errors.append(f"{where}: '{key}' must be an object of servers by name")
        return None
    return servers, document


def _inputs(raw: Any, errors: list[str]) -> dict[str, InputSpec]:
    where = f"{VSCODE_FILE}: inputs"
    if raw is None:
        return {}
    if not isinstance(raw, list):
        errors.append(f"{where}: must be a list")
        return {}
    out: dict[str, InputSpec] = {}
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            errors.append(f"{where}[{index}]: needs an 'id' string")
            continue
        kind = item.get("type")
        if kind not in ("promptString", "pickString"):
            errors.append(
                f"{where}[{index}] '{item['id']}': type {json.dumps(kind)} is not supported "
                "(promptString or pickString)"
            )
            continue
        options = item.get("options", [])
        if kind == "pickString" and (
            not isinstance(options, list)
            or not options
            or not all(isinstance(o, str) for o in options)
        ):
            errors.append(f"{where}[{index}] '{item['id']}': options must be a list of strings")
            continue
        default = item.get("default")
        out[item["id"]] = InputSpec(
            id=item["id"],
            type=kind,
            description=str(item.get("description", "")),
            password=item.get("password") is True,
            options=tuple(options) if kind == "pickString" else (),
            default=default if isinstance(default, str) else None,
        )
    return out


def parse_entry(entry: Entry, root: Path) -> McpServerSpec:
    """The spec of one entry, variables as written (trusted=False)."""
    raw = entry.raw
    where = f"{entry.where}: server '{entry.name}'"

    def bad(field: str, problem: str) -> McpConfigError:
        return McpConfigError(f"{where}: '{field}' {problem}")

    if not isinstance(raw, dict):
        raise McpConfigError(f"{where}: must be an object")
    unknown = sorted(set(raw) - _FIELDS - _VSCODE_ONLY)
    if unknown:
        raise bad(unknown[0], f"is not a server field (allowed: {', '.join(sorted(_FIELDS))})")
    transport = _transport(raw, bad)
    command = raw.get("command")
    url = raw.get("url")
    if transport == "stdio":
        if command is not None and not isinstance(command, str):
            raise bad("command", f"must be a string (the program); got {json.dumps(command)[:80]}")
        if not isinstance(command, str) or not command.strip():
            raise bad("command", "is missing: a stdio server needs the program to run")
        if url is not None:
            raise bad("url", "is for http servers; this one runs 'command'")
    else:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise bad("url", "must be an http:// or https:// URL")
        if command is not None:
            raise bad("command", "is for stdio servers; this one has a 'url'")
    env = _strings_map(raw.get("env", {}), "env", bad)
    if raw.get("envFile") is not None:
        env = {**_env_file(raw["envFile"], root, bad), **env}
    timeout = raw.get("timeout", 60)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise bad("timeout", f"must be a number of seconds above 0; got {json.dumps(timeout)}")
    disabled = raw.get("disabled", False)
    if not isinstance(disabled, bool):
        raise bad("disabled", "must be true or false")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise bad("cwd", "must be a string")
    include = raw.get("includeTools")
    return McpServerSpec(
        name=entry.name,
        source=entry.source,
        transport=transport,
        command=command if transport == "stdio" else None,
        args=_strings(raw.get("args", []), "args", bad),
        env=env,
        cwd=cwd,
        url=url if transport == "http" else None,
        headers=_strings_map(raw.get("headers", {}), "headers", bad),
        disabled=disabled,
        include_tools=None if include is None else _strings(include, "includeTools", bad),
        exclude_tools=_strings(raw.get("excludeTools", []), "excludeTools", bad),
        timeout_s=float(timeout),
        trusted=False,
    )


def _transport(raw: Mapping[str, Any], bad: Any) -> Transport:
    kind = raw.get("type")
    if kind is None:
        return "http" if "url" in raw and "command" not in raw else "stdio"
    if kind == "stdio":
        return "stdio"
    if kind in ("http", "streamableHttp", "streamable-http"):
        return "http"
    if kind == "sse":
        raise bad("type", 'is "sse", which Rein does not support (use a Streamable HTTP url)')
    raise bad("type", f"must be stdio or http; got {json.dumps(kind)}")


def _strings(value: Any, field: str, bad: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad(field, f"must be a list of strings; got {json.dumps(value)[:80]}")
    return tuple(value)


def _strings_map(value: Any, field: str, bad: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise bad(field, "must be an object of string values")
    return dict(value)


def _env_file(value: Any, root: Path, bad: Any) -> dict[str, str]:
    """``KEY=VALUE`` lines (``#`` comments, optional quotes)."""
    if not isinstance(value, str):
        raise bad("envFile", "must be a path")
    path = Path(value.replace("${workspaceFolder}", str(root)))
    path = path if path.is_absolute() else root / path
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise bad("envFile", f"cannot be read: {exc}") from None
    out: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, val = text.removeprefix("export ").partition("=")
        if not sep or not key.strip():
            raise bad("envFile", f"{path} line {number} is not KEY=VALUE")
        val = val.strip()
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
            val = val[1:-1]
        remember_secret(val)  # an env file holds keys: never logged or emitted
        out[key.strip()] = val
    return out
