"""MCP servers from where people keep them, checked, substituted and trusted.

Three sources, in this order of precedence when the same name appears in more
than one (the others are skipped, saying which one won):

1. ``rein.mcp.servers`` in the settings (``source="settings"``; trusted: the
   person wrote them into their own settings, except the names listed in
   ``rein.mcp.workspaceServers``, which the workspace's settings define);
2. ``.vscode/mcp.json`` (VS Code's format: ``servers`` and ``inputs``; JSON
   with comments; ``source="vscode"``);
3. ``.mcp.json`` at the workspace root (Claude Code's format:
   ``mcpServers``; ``source="mcp.json"``).

The two files are read only with ``rein.mcp.configFiles`` (default true), and
their servers (and the workspace settings' ones) start only after the person
trusts them (:mod:`rein.mcp.trust`).

Every invalid entry is skipped with a reason naming the file, the server and
the field; a file that is not JSON is reported with its line. ``${input:id}``
values are asked once per load through :class:`McpConfigPorts` and
registered with the redactor, so they never reach a log, an event or the
store; ``${env:VAR}`` and ``${workspaceFolder}`` are put in too, and in
``.mcp.json`` Claude Code's ``${VAR}`` and ``${VAR:-default}``. A variable
that is not set (and has no default) skips the server with the reason; one
whose name looks secret has its value redacted like an input's; the
variables model providers read their keys from are never given to a server
the workspace defines (checked before the trust question; :func:`given_lines`
is what that question shows beside the command line).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rein.harness.redaction import remember_secret
from rein.mcp._entries import (
    MCP_JSON_FILE,
    VSCODE_FILE,
    Entry,
    McpConfigError,
    parse_entry,
    read_sources,
)
from rein.mcp.spec import InputSpec, McpServerSpec, Skipped, Source
from rein.mcp.trust import trust_key
from rein.process.environment import is_provider_key_name, is_secret_name

if TYPE_CHECKING:
    from rein.config import ReinConfig

__all__ = [
    "PROVIDER_KEY_NAMES",
    "InputSpec",
    "McpConfigError",
    "McpConfigPorts",
    "McpServerSpec",
    "McpServers",
    "Skipped",
    "Source",
    "TrustStore",
    "config_fingerprint",
    "given_lines",
    "load_servers",
    "variables_note",
    "variables_read",
]

_VARIABLE = re.compile(r"\$\{(input|env):([^}]*)\}|\$\{workspaceFolder\}")
#: Claude Code's forms in ``.mcp.json``: ``${VAR}`` and ``${VAR:-default}``.
_PLAIN_VARIABLE = re.compile(
    r"\$\{(input|env):([^}]*)\}|\$\{workspaceFolder\}"
    r"|\$\{(?P<plain>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}"
)


@dataclass(slots=True)
class McpServers:
    #: Enabled and trusted servers, by name.
    servers: list[McpServerSpec] = field(default_factory=list)
    #: Disabled, not trusted, invalid, overridden, or an input not given.
    skipped: list[Skipped] = field(default_factory=list)
    #: File-level problems: a file that is not JSON (with the line), ...
    errors: list[str] = field(default_factory=list)


class TrustStore(Protocol):
    def is_trusted(self, key: str) -> bool: ...
    def remember(self, key: str) -> None: ...


class McpConfigPorts(Protocol):
    """What loading needs from the host (the editor, or the terminal)."""

    @property
    def trust(self) -> TrustStore:
        """Where the person's trust is remembered."""
        ...

    async def ask_input(self, spec: InputSpec) -> str | None:
        """The value of an input (``rein/askUser``; at the terminal), or None
        when nobody gives one (the servers using it are skipped).
        McpConfigError: nobody can be asked (its message is the reason)."""
        ...

    async def confirm_trust(self, spec: McpServerSpec) -> bool:
        """Whether the person trusts this workspace-defined server (a
        ``rein/confirm`` naming :meth:`McpServerSpec.command_line`).
        McpConfigError: nobody can be asked (its message is the reason)."""
        ...


class _Unresolved(Exception):
    """A variable that has no value: the server is skipped with the reason.
    Control flow caught in this module (the reason becomes the skipped
    server's), so outside the ReinError tree."""


def config_fingerprint(root: Path, config: ReinConfig) -> object:
    """What the servers are read from, cheaply: the ``mcp`` settings and the
    size and modification time of each configuration file. A different
    value means the configuration may have changed."""
    files: list[tuple[int, int] | None] = []
    if config.mcp.config_files:
        for name in (VSCODE_FILE, MCP_JSON_FILE):
            try:
                stat = (root / name).stat()
            except OSError:
                files.append(None)
            else:
                files.append((stat.st_mtime_ns, stat.st_size))
    settings = json.dumps(config.mcp.servers, sort_keys=True, default=str)
    return settings, tuple(config.mcp.workspace_servers), config.mcp.config_files, tuple(files)


async def load_servers(root: Path, config: ReinConfig, ports: McpConfigPorts) -> McpServers:
    """The configured MCP servers of the workspace at ``root``."""
    out = McpServers()
    entries, inputs, errors = read_sources(
        root, config.mcp.servers, config.mcp.config_files, config.mcp.workspace_servers
    )
    out.errors.extend(errors)
    winners: dict[str, Entry] = {}
    for entry in entries:  # highest precedence first
        first = winners.get(entry.name)
        if first is not None:
            reason = f"overridden by the server of the same name in {first.where}"
            out.skipped.append(Skipped(entry.name, entry.source, reason))
            continue
        winners[entry.name] = entry
    values: dict[str, str | None] = {}
    for name in sorted(winners):
        entry = winners[name]
        try:
            spec = parse_entry(entry, root)
        except McpConfigError as exc:
            out.skipped.append(Skipped(name, entry.source, str(exc)))
            continue
        if spec.disabled:
            out.skipped.append(Skipped(name, entry.source, "disabled"))
            continue
        if entry.workspace_defined:
            # Before the question: a server that would be skipped for a
            # provider's key is neither asked about nor remembered.
            keys = [n for n in variables_read(spec) if _is_provider_key(n)]
            if keys:
                reason = f"{entry.where}: {_provider_key_reason(keys[0])}"
                out.skipped.append(Skipped(name, entry.source, reason))
                continue
            shown = _substitute_plain(spec, root)
            key = trust_key(root, name, entry.source, _trust_parts(spec))
            if not ports.trust.is_trusted(key):
                try:
                    trusted = await ports.confirm_trust(shown)
                    why = ""
                except McpConfigError as exc:
                    trusted, why = False, f" ({exc})"
                if not trusted:
                    note = variables_note(shown)
                    reason = (
                        f"not trusted: {entry.where} defines it to run {shown.command_line()}{why}"
                        + (f"; it is {note}" if note else "")
                    )
                    out.skipped.append(Skipped(name, entry.source, reason))
                    continue
                ports.trust.remember(key)
        try:
            final = await _substitute(spec, root, entry, inputs, values, ports)
        except _Unresolved as exc:
            out.skipped.append(Skipped(name, entry.source, f"{entry.where}: {exc}"))
            continue
        written = _substitute_plain(spec, root).command_line()
        out.servers.append(replace(final, trusted=True, written=written))
    return out


def variables_read(spec: McpServerSpec) -> list[str]:
    """The environment variables a server's fields put in (``${env:X}``,
    and in ``.mcp.json`` ``${X}`` and ``${X:-default}``), in order, once
    each: what the trust question names, since the command line alone does
    not show what the server is given (its ``env``, an HTTP server's
    ``headers``)."""
    pattern = _PLAIN_VARIABLE if spec.source == "mcp.json" else _VARIABLE
    fields = [spec.command or "", *spec.args, spec.url or "", spec.cwd or ""]
    fields += [*spec.env.values(), *spec.headers.values()]
    names: dict[str, None] = {}
    for text in fields:
        for match in pattern.finditer(text):
            name = match.groupdict().get("plain") or (
                match.group(2) if match.group(1) == "env" else None
            )
            if name:
                names[name] = None
    return list(names)


def variables_note(spec: McpServerSpec) -> str:
    """What the trust question adds about :func:`variables_read`, as "It
    is given ..." (empty: the server is given none of the person's
    variables)."""
    names = variables_read(spec)
    if not names:
        return ""
    return f"given your environment variables {', '.join(names)}"


def given_lines(spec: McpServerSpec) -> list[str]:
    """What the trust question shows beside the command line: the ``env``
    entries as written (variables left unsubstituted: a literal
    ``NODE_OPTIONS`` or ``LD_PRELOAD`` changes what runs), the header
    names (never their values), and :func:`variables_note`."""
    lines: list[str] = []
    if spec.env:
        lines.append("Its environment: " + ", ".join(f"{k}={v}" for k, v in spec.env.items()))
    if spec.headers:
        lines.append("Its headers: " + ", ".join(spec.headers))
    note = variables_note(spec)
    if note:
        lines.append(f"It is {note}.")
    return lines


#: The variables the model providers people use read their keys from
#: (besides the one configured, :func:`is_provider_key_name`): never given
#: to a server the workspace defines.
PROVIDER_KEY_NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "MISTRAL_API_KEY",
        "GROQ_API_KEY",
        "OPENROUTER_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "TOGETHER_API_KEY",
        "FIREWORKS_API_KEY",
        "CEREBRAS_API_KEY",
    }
)


def _is_provider_key(name: str) -> bool:
    return name in PROVIDER_KEY_NAMES or is_provider_key_name(name)


def _provider_key_reason(name: str) -> str:
    return (
        f"it names {name}, the variable a model provider reads its key from, "
        "which is never given to a server the workspace defines"
    )


def _trust_parts(spec: McpServerSpec) -> list[str]:
    """What decides what runs, as written in the file."""
    parts = [spec.transport, spec.command or "", *spec.args, spec.url or "", spec.cwd or ""]
    parts += [f"{k}={v}" for k, v in sorted(spec.env.items())]
    # An HTTP server's headers are what it is sent (a token): a changed one
    # asks again. Only when there are some, so other keys stay as they were.
    parts += [f"header {k}={v}" for k, v in sorted(spec.headers.items())]
    # The variables read are part of what is trusted: a trust given when
    # ``${VAR}`` was passed as text (the server got nothing) asks again now
    # that it hands over the value. Only when there are some.
    names = variables_read(spec)
    if names:
        parts.append("vars " + ",".join(names))
    return parts


def _substitute_plain(spec: McpServerSpec, root: Path) -> McpServerSpec:
    """The spec the trust question shows: ``${workspaceFolder}`` put in,
    inputs and environment variables left as written (they may be secrets)."""

    def sub(text: str) -> str:
        return text.replace("${workspaceFolder}", str(root))

    return replace(
        spec,
        command=sub(spec.command) if spec.command else None,
        args=tuple(sub(a) for a in spec.args),
        url=sub(spec.url) if spec.url else None,
    )


async def _substitute(
    spec: McpServerSpec,
    root: Path,
    entry: Entry,
    inputs: Mapping[str, InputSpec],
    values: dict[str, str | None],
    ports: McpConfigPorts,
) -> McpServerSpec:
    def environment(name: str, written: str, default: str | None) -> str:
        if entry.workspace_defined and _is_provider_key(name):  # checked before trust too
            raise _Unresolved(_provider_key_reason(name))
        found = os.environ.get(name)
        if found is None:
            if default is None:
                raise _Unresolved(f"the environment variable {name} is not set ({written})")
            return default
        if found and is_secret_name(name):
            remember_secret(found)
        return found

    async def value(kind: str | None, name: str) -> str:
        if kind is None:
            return str(root)
        if kind == "env":
            return environment(name, f"${{env:{name}}}", None)
        if entry.source != "vscode":
            raise _Unresolved(f"${{input:{name}}}: inputs are defined only in .vscode/mcp.json")
        spec_in = inputs.get(name)
        if spec_in is None:
            raise _Unresolved(f"${{input:{name}}}: no input with that id in 'inputs'")
        if name not in values:
            try:
                answer = await ports.ask_input(spec_in)
            except McpConfigError as exc:
                raise _Unresolved(f"input '{name}' was not given ({exc})") from None
            if answer is not None:
                remember_secret(answer)
            values[name] = answer
        answer = values[name]
        if answer is None:
            raise _Unresolved(f"input '{name}' was not given")
        return answer

    pattern = _PLAIN_VARIABLE if entry.source == "mcp.json" else _VARIABLE

    async def sub(text: str) -> str:
        parts: list[str] = []
        last = 0
        for match in pattern.finditer(text):
            parts.append(text[last : match.start()])
            plain = match.groupdict().get("plain")
            if plain is not None:
                parts.append(environment(plain, match.group(0), match.group("default")))
            else:
                parts.append(await value(match.group(1), match.group(2) or ""))
            last = match.end()
        parts.append(text[last:])
        return "".join(parts)

    async def sub_map(mapping: Mapping[str, str]) -> dict[str, str]:
        return {k: await sub(v) for k, v in mapping.items()}

    cwd = await sub(spec.cwd) if spec.cwd else None
    if cwd is not None and not Path(cwd).is_absolute():
        cwd = str((root / cwd).resolve())
    return replace(
        spec,
        command=await sub(spec.command) if spec.command else None,
        args=tuple([await sub(a) for a in spec.args]),
        env=await sub_map(spec.env),
        cwd=cwd,
        url=await sub(spec.url) if spec.url else None,
        headers=await sub_map(spec.headers),
    )
