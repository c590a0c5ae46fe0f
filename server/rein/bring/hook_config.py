"""Hooks in Claude Code's shape, from where people keep them.

Read, in this order: ``rein.hooks`` of Rein's configuration (the person's
own: trusted), ``~/.claude/settings.json`` (the person's own: trusted), the
workspace's ``.claude/settings.json`` and ``.claude/settings.local.json``
(the workspace's: they run only once the person allowed them, remembered by
:func:`workspace_hooks_key`). Each file's ``hooks`` has the shape of
``rein.hooks`` (:class:`rein.config.HookMatcher`): an entry that does not is
reported in :attr:`HookInventory.invalid` with the field and the reason, and
the file's other entries are kept; a file that is not JSON is reported too.
Nothing is dropped silently. ``"disableAllHooks": true`` in a file switches
hooks off (:attr:`HookInventory.disabled_by`): in ``~/.claude/settings.json``
those of that file and the workspace's, in a workspace's file the
workspace's; ``rein.hooks`` is Rein's own setting and stays.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import ValidationError

from rein.config import HOOK_EVENTS, HookCommand, HookMatcher, ReinConfig

__all__ = [
    "HOOKS_TRUST_FILE",
    "HookEntry",
    "HookInventory",
    "InvalidHook",
    "TrustStore",
    "discover_hooks",
    "hook_files",
    "workspace_hooks_key",
]

#: The workspace's files, as named in events and reports.
PROJECT_FILE = ".claude/settings.json"
LOCAL_FILE = ".claude/settings.local.json"
USER_FILE = "~/.claude/settings.json"
SETTINGS = "rein.hooks"

Scope = Literal["settings", "user", "workspace"]

#: Where the person's permission for a workspace's hooks is remembered, in
#: Rein's storage folder (a ``rein.mcp.trust.FileTrustStore`` of its own).
HOOKS_TRUST_FILE = "hooks-trust.json"


class TrustStore(Protocol):
    """Remembered permissions by key (``rein.mcp.trust``'s stores)."""

    def is_trusted(self, key: str) -> bool: ...
    def remember(self, key: str) -> None: ...


@dataclass(frozen=True, slots=True)
class HookEntry:
    """One hook command of one event."""

    event: str
    matcher: str
    command: str
    #: Seconds from the entry's ``timeout``; None: ``hookOptions.timeoutS``.
    timeout_s: float | None
    #: Where it was defined (``.claude/settings.json``, ``rein.hooks``, ...).
    source: str
    scope: Scope
    #: ``onFailure``: "block" makes a failure (no start, a time-out, an
    #: exit code other than 0 and 2) block as exit 2 does.
    on_failure: Literal["continue", "block"] = "continue"

    @property
    def trusted_by_default(self) -> bool:
        """The person's own hooks (their settings, their home folder)."""
        return self.scope != "workspace"


@dataclass(frozen=True, slots=True)
class InvalidHook:
    source: str
    #: The field the problem is at: ``hooks.PreToolUse[0].hooks[0].command``.
    where: str
    reason: str


@dataclass(slots=True)
class HookInventory:
    """Every hook found, and every entry that could not be read."""

    hooks: list[HookEntry] = field(default_factory=list)
    invalid: list[InvalidHook] = field(default_factory=list)
    #: Whether the workspace's hooks are allowed (remembered, or allowed in
    #: this session); None: there are none, or no trust store was given.
    workspace_allowed: bool | None = None
    #: The files whose ``disableAllHooks: true`` switched hooks off.
    disabled_by: list[str] = field(default_factory=list)

    @property
    def workspace_hooks(self) -> list[HookEntry]:
        return [h for h in self.hooks if h.scope == "workspace"]

    def for_event(self, event: str) -> list[HookEntry]:
        return [h for h in self.hooks if h.event == event]


#: The folder whose every file is part of the key (scripts kept beside the settings).
HOOKS_FOLDER = ".claude/hooks"
_PROJECT_DIR = re.compile(r"\$(?:\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR\b)")


def _named_files(root: Path, command: str) -> list[Path]:
    """The workspace's files a command names: each word, with
    ``$CLAUDE_PROJECT_DIR`` expanded, relative to the folder it runs in,
    that is a file inside ``root``."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    out: list[Path] = []
    for word in words:
        word = _PROJECT_DIR.sub(lambda _m: str(root), word)
        if not word or len(word) > 4096:
            continue
        try:
            path = (root / word).resolve()
            if path.is_relative_to(root) and path.is_file():
                out.append(path)
        except (OSError, ValueError):
            continue
    return out


def _file_digest(path: Path) -> bytes:
    try:
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError as exc:
        return f"unreadable: {exc}".encode()


def workspace_hooks_key(root: Path, hooks: list[HookEntry]) -> str:
    """The hash the person's permission for the workspace's hooks is
    remembered by: the folder, every workspace hook's event, matcher,
    command, time limit and file, and the bytes of every file of the
    workspace they run (each file a command names, after expanding
    ``$CLAUDE_PROJECT_DIR``, and every file under ``.claude/hooks``). A
    changed entry or script asks again; the adapter computes it again just
    before each hook runs."""
    root = root.resolve()
    digest = hashlib.sha256(b"rein-hooks\0")
    digest.update(str(root).encode("utf-8", "surrogatepass") + b"\0")
    for hook in hooks:
        parts = [hook.source, hook.event, hook.matcher, hook.command, str(hook.timeout_s)]
        if hook.on_failure != "continue":  # so the keys of other hooks stay as they were
            parts.append(f"onFailure={hook.on_failure}")
        for part in parts:
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    for path in hook_files(root, hooks):
        digest.update(str(path.relative_to(root)).encode("utf-8", "surrogatepass") + b"\0")
        digest.update(_file_digest(path))
    return digest.hexdigest()


def hook_files(root: Path, hooks: list[HookEntry]) -> list[Path]:
    """The workspace's files the hooks run, sorted (resolved paths): each
    file a command names and every file under ``.claude/hooks``."""
    root = root.resolve()
    files: set[Path] = set()
    for hook in hooks:
        files.update(_named_files(root, hook.command))
    folder = root / HOOKS_FOLDER
    if hooks and folder.is_dir():
        files.update(p for p in folder.rglob("*") if p.is_file())
    return sorted(files)


def _where(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _report(out: HookInventory, source: str, where: str, exc: ValidationError) -> None:
    for error in exc.errors(include_url=False):
        loc = f".{_where(error['loc'])}" if error["loc"] else ""
        out.invalid.append(InvalidHook(source, where + loc, str(error["msg"])))


def _valid_command(raw: object) -> bool:
    try:
        HookCommand.model_validate(raw)
    except ValidationError:
        return False
    return True


def _invalid(out: HookInventory, source: str, where: str, raw: object) -> None:
    kind = raw.get("type") if isinstance(raw, dict) else None
    if isinstance(kind, str) and kind != "command":
        out.invalid.append(
            InvalidHook(
                source,
                f"{where}.type",
                f'"{kind}" hooks are not run by Rein (only "command" hooks)',
            )
        )
        return
    try:
        HookCommand.model_validate(raw)
    except ValidationError as exc:
        _report(out, source, where, exc)


def _entries(
    hooks: object, source: str, scope: Scope, out: HookInventory, prefix: str = "hooks"
) -> None:
    if not isinstance(hooks, dict):
        out.invalid.append(
            InvalidHook(source, prefix, f"must be an object of events, not {type(hooks).__name__}")
        )
        return
    for event, matchers in hooks.items():
        where = f"{prefix}.{event}"
        if event not in HOOK_EVENTS:
            out.invalid.append(
                InvalidHook(source, where, f"not an event Rein runs ({', '.join(HOOK_EVENTS)})")
            )
            continue
        if not isinstance(matchers, list):
            out.invalid.append(InvalidHook(source, where, "must be a list of matchers"))
            continue
        for index, raw in enumerate(matchers):
            commands = raw.get("hooks") if isinstance(raw, dict) else None
            if isinstance(commands, list) and commands:
                # Each command on its own: one this Rein cannot run (a
                # ``prompt`` or ``http`` hook) leaves its siblings running.
                good = [c for i, c in enumerate(commands) if _valid_command(c)]
                for i, command in enumerate(commands):
                    if not _valid_command(command):
                        _invalid(out, source, f"{where}[{index}].hooks[{i}]", command)
                if not good:
                    continue
                raw = {**raw, "hooks": good}
            try:
                matcher = HookMatcher.model_validate(raw)
            except ValidationError as exc:
                _report(out, source, f"{where}[{index}]", exc)
                continue
            for hook in matcher.hooks:
                out.hooks.append(
                    HookEntry(
                        event,
                        matcher.matcher,
                        hook.command,
                        hook.timeout,
                        source,
                        scope,
                        hook.on_failure,
                    )
                )


def _read_file(path: Path, source: str, scope: Scope, out: HookInventory) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except OSError as exc:
        out.invalid.append(InvalidHook(source, "(file)", f"cannot be read: {exc}"))
        return
    try:
        data = json.loads(text)
    except ValueError as exc:
        out.invalid.append(InvalidHook(source, "(file)", f"is not JSON: {exc}"))
        return
    if not isinstance(data, dict):
        out.invalid.append(InvalidHook(source, "(file)", "must hold a JSON object"))
        return
    if data.get("disableAllHooks") is True:
        out.disabled_by.append(source)
    if "hooks" in data:
        _entries(data["hooks"], source, scope, out)


def discover_hooks(
    root: Path, home: Path | None, config: ReinConfig, trust: TrustStore | None = None
) -> HookInventory:
    """Every hook of Rein's settings, the person's home folder (``home``;
    None: not read) and the workspace ``root``, with the invalid entries and
    why, and (given the ``trust`` store, e.g.
    ``FileTrustStore(storage, file_name=HOOKS_TRUST_FILE)``) whether the
    workspace's hooks are allowed. Read fresh at each call (the adapter
    calls it before each run; a setup view may call it any time: it runs
    and asks nothing)."""
    out = HookInventory()
    for event, matchers in config.hooks.items():
        for matcher in matchers:
            for hook in matcher.hooks:
                out.hooks.append(
                    HookEntry(
                        event,
                        matcher.matcher,
                        hook.command,
                        hook.timeout,
                        SETTINGS,
                        "settings",
                        hook.on_failure,
                    )
                )
    if home is not None:
        _read_file(home / ".claude" / "settings.json", USER_FILE, "user", out)
    _read_file(root / PROJECT_FILE, PROJECT_FILE, "workspace", out)
    _read_file(root / LOCAL_FILE, LOCAL_FILE, "workspace", out)
    if out.disabled_by:
        # ``disableAllHooks: true``: the person's file switches off its own
        # hooks and the workspace's; a workspace's file only the workspace's
        # (it cannot switch off the person's guards). ``rein.hooks`` stays.
        off = {"user", "workspace"} if USER_FILE in out.disabled_by else {"workspace"}
        out.hooks = [h for h in out.hooks if h.scope not in off]
    workspace = out.workspace_hooks
    if trust is not None and workspace:
        out.workspace_allowed = trust.is_trusted(workspace_hooks_key(root, workspace))
    return out
