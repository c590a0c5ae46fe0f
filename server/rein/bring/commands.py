"""Slash commands from the person's prompt files.

Found in ``.claude/commands/**/*.md`` (named by the file, as Claude Code
does: ``frontend/component.md`` is ``/component``, its description ending
``(project:frontend)``; ``/frontend:component`` runs it too; two files of
one name are a clash, the second reported), ``.github/prompts/*.prompt.md`` (Copilot's prompt files) and
the user's ``~/.claude/commands/``. A command is a prompt, not code: its
body, with the arguments substituted, is the text the agent runs.

Arguments: ``$ARGUMENTS`` is everything after the name; ``$1`` .. ``$9``
are its words (shell quoting groups words); Copilot's
``${input:name}`` / ``${input:name:placeholder}`` take the words in the
order the names first appear. A body that uses none of them gets the
arguments appended (``ARGUMENTS: ...``), as Claude Code does.

What is a command: text that starts with ``/`` followed by a name of
letters, digits, ``_``, ``-`` and ``:`` (then a space or the end). A
path such as ``/etc/hosts explain`` or ``/setup.py`` is not (the name
would hold ``/`` or ``.``), and ``//text`` sends ``/text`` as it is. A
command name that is not known is an error listing the known ones.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rein.bring.frontmatter import Document
from rein.bring.setup_folders import Place, personal_first, walk_setup_folders
from rein.bring.sources import Invalid, Scope, optional_text, tool_names
from rein.harness.errors import ReinError
from rein.tools.instruction_imports import mentions
from rein.tools.secret_files import DEFAULT_SECRET_RULES, SETTING, SecretFiles
from rein.tools.settings import DEFAULT_DENY_GLOBS

__all__ = [
    "Command",
    "CommandError",
    "Found",
    "Invocation",
    "discover_commands",
    "expand",
    "literal",
    "resolve",
]

#: The most command files read from one folder.
MAX_FILES = 500

#: A command name: Claude Code's file names, ``:`` between namespaces.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*(?::[A-Za-z0-9_][A-Za-z0-9_-]*)*")
_INVOCATION = re.compile(r"/(?P<name>[^\s]+)(?:\s+(?P<args>.*))?", re.S)
_POSITIONAL = re.compile(r"\$([1-9])")
_INPUT = re.compile(r"\$\{input:([A-Za-z0-9_-]+)(?::[^}]*)?\}")
#: Every placeholder, replaced in one pass (an argument's own ``$1`` stays).
_PLACEHOLDER = re.compile(
    r"\$\{input:(?P<input>[A-Za-z0-9_-]+)(?::[^}]*)?\}|\$(?P<pos>[1-9])|(?P<all>\$ARGUMENTS(?!\[))"
)

#: The session modes a prompt file's ``mode`` (or Copilot's ``agent``) names.
_MODES: dict[str, Literal["agent", "plan", "explain"]] = {
    "agent": "agent",
    "edit": "agent",
    "plan": "plan",
    "ask": "explain",
}


class CommandError(ReinError, ValueError):
    """A ``/name`` that is no known command (the message lists the known ones)."""


@dataclass(frozen=True)
class Command:
    """One slash command: its name, what the person sees, and its prompt."""

    name: str
    description: str
    body: str
    source: str
    scope: Scope
    argument_hint: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    model: str | None = None
    mode: Literal["agent", "plan", "explain"] | None = None
    #: Other names that run it: ``frontend:component`` for a command in a
    #: subfolder (Claude Code names it by its file, ``/component``).
    aliases: tuple[str, ...] = ()

    def json(self) -> dict[str, object]:
        """The command as ``rein/commands`` lists it."""
        return {
            "name": self.name,
            "description": self.description,
            "argumentHint": self.argument_hint,
            "source": self.source,
        }


@dataclass(frozen=True)
class Found:
    """The commands found, and the files that are not commands and why."""

    commands: tuple[Command, ...] = ()
    invalid: tuple[Invalid, ...] = ()

    def names(self) -> list[str]:
        return [c.name for c in self.commands]

    def get(self, name: str) -> Command | None:
        found = next((c for c in self.commands if c.name == name), None)
        return found or next((c for c in self.commands if name in c.aliases), None)


@dataclass(frozen=True)
class Invocation:
    """A command the person ran: which, with what, and the prompt it makes."""

    command: Command
    arguments: str
    prompt: str


def discover_commands(
    root: Path, home: Path | None = None, deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS
) -> Found:
    """Every command of the user's ``home`` (None: none of the user's) and
    of the workspace ``root``; a name found twice keeps its first file (the
    person's own: a workspace never takes their /name, as Claude Code's
    personal skills and commands win over a project's), the other is
    reported."""
    user = []
    if home is not None:
        user.append(Place(home / ".claude" / "commands", "user", "**/*.md", "claude", MAX_FILES))
    project = [
        Place(root / ".claude" / "commands", "project", "**/*.md", "claude", MAX_FILES),
        Place(root / ".github" / "prompts", "project", "*.prompt.md", "copilot", MAX_FILES),
    ]
    places = personal_first(user, project, root, home)
    commands, invalid = walk_setup_folders(
        "command",
        places,
        root,
        home,
        deny_globs,
        _command,
        lambda command, first: f"/{command.name} is already {first.source}",
    )
    return Found(commands, invalid)


def _command(document: Document, path: Path, place: Place, shown: str) -> Command:
    meta = document.meta
    scope = place.scope
    aliases: tuple[str, ...] = ()
    namespace = ""
    if place.format == "claude":
        # Claude Code: the file's name is the command's; a subfolder is a
        # namespace shown in the description, ``folder:name`` an alias.
        parts = path.relative_to(place.folder).with_suffix("").parts
        name = parts[-1]
        if len(parts) > 1:
            namespace = ":".join(parts[:-1])
            aliases = (f"{namespace}:{name}",)
        tools = tool_names(meta, "allowed-tools")
        mode_field = "mode"
    else:
        name = optional_text(meta, "name") or path.name.removesuffix(".prompt.md")
        tools = tool_names(meta, "tools")
        mode_field = "agent" if "agent" in meta else "mode"
    if not all(NAME.fullmatch(n) for n in (name, *aliases)):
        raise ValueError(
            f"the name {name!r} is not a command name (letters, digits, '_', '-'; "
            "':' between namespaces)"
        )
    mode_name = optional_text(meta, mode_field)
    mode = None
    if mode_name is not None:
        mode = _MODES.get(mode_name)
        if mode is None:
            also = (
                " (a prompt file run by a custom agent is not supported: start the agent "
                "with the task tool from the prompt instead)"
                if mode_field == "agent"
                else ""
            )
            raise ValueError(f"{mode_field}: {mode_name!r} is not one of {', '.join(_MODES)}{also}")
    if not document.body.strip():
        # Its body is the prompt it sends: an empty one would send nothing
        # (or only the arguments) and look as if it ran.
        raise ValueError("the body is empty: a command's body is the prompt it sends")
    description = optional_text(meta, "description") or _first_line(document.body)
    if namespace:
        description = f"{description} ({scope}:{namespace})".strip()
    return Command(
        name=name,
        description=description,
        body=document.body,
        source=shown,
        scope=scope,
        argument_hint=optional_text(meta, "argument-hint"),
        allowed_tools=tools,
        model=optional_text(meta, "model"),
        mode=mode,
        aliases=aliases,
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:100]
    return ""


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        return arguments.split()


def expand(
    command: Command,
    arguments: str,
    root: Path | None = None,
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> str:
    """The command's prompt with ``arguments`` substituted (``root``: the
    workspace, whose files the note on ``@path`` names; ``secret_files``:
    those it names as not to be read)."""
    arguments = arguments.strip()
    words = _words(arguments)
    body = command.body
    used = "$ARGUMENTS" in body or _POSITIONAL.search(body) or _INPUT.search(body)
    inputs: list[str] = []
    for match in _INPUT.finditer(body):
        if match.group(1) not in inputs:
            inputs.append(match.group(1))

    def word(index: int) -> str:
        return words[index] if index < len(words) else ""

    def value(match: re.Match[str]) -> str:
        if match.group("input") is not None:
            return word(inputs.index(match.group("input")))
        if match.group("pos") is not None:
            return word(int(match.group("pos")) - 1)
        return arguments

    text = _PLACEHOLDER.sub(value, body).strip()
    if arguments and not used:
        text += f"\n\nARGUMENTS: {arguments}"
    return text + _unexpanded(text, root, secret_files)


#: Claude Code's ``!`command``` (runs it and puts in its output) and
#: ``@path`` (attaches the file), which Rein leaves as written.
_BANG = re.compile(r"!`([^`\n]+)`")


def _unexpanded(
    text: str, root: Path | None = None, secret_files: SecretFiles = DEFAULT_SECRET_RULES
) -> str:
    """What the model is told of the ``!`command``` and ``@path`` a prompt
    holds: Claude Code runs and attaches them, Rein does not (a command
    file is the workspace's text, and nothing of it runs by itself), so the
    model knows their output is not there and fetches what it needs. Worded
    for any session (one without a tool that runs commands too); with
    ``root``, only the ``@`` names that are a path in it (``@alice`` is
    someone, no file). A secret file (``tools.secretFiles``) named there
    is not offered to read: the note says it is secret and to ask the
    person (read_file would refuse it anyway)."""
    ran = list(dict.fromkeys(m.group(1).strip() for m in _BANG.finditer(text)))
    # As Claude Code reads them: outside code spans and blocks.
    named = list(dict.fromkeys(n.rstrip(".,;:!?)]'\"") for n in mentions(_BANG.sub("", text))))
    if root is not None:
        named = [n for n in named if _in_workspace(root, n)]
    secret = [n for n in named if _secret(root, n, secret_files)]
    named = [n for n in named if n not in secret]
    notes = []
    if ran:
        notes.append(
            "The !`...` commands above were not run and their output is not here: "
            f"run those you need if one of your tools runs commands ({'; '.join(ran)})."
        )
    if named:
        notes.append(
            "The files named with @ above are not attached: read those you need "
            f"({', '.join(named)})."
        )
    if secret:
        notes.append(
            f"The files named with @ above that are secret files ({SETTING}: "
            f"{', '.join(secret)}) are not shown to you: do not try to read them; ask the "
            "person if you need something from them."
        )
    return "\n\n(" + " ".join(notes) + ")" if notes else ""


def _secret(root: Path | None, name: str, secret_files: SecretFiles) -> bool:
    """Whether the ``@`` name is a secret file (as written, or where it
    leads in ``root``)."""
    if not secret_files:
        return False
    paths = [name.removeprefix("./")]
    if root is not None:
        try:
            real = (root / name).resolve().relative_to(root.resolve())
            paths.append(real.as_posix())
        except (OSError, RuntimeError, ValueError):
            pass
    return secret_files.matched_by(*paths) is not None


def _in_workspace(root: Path, name: str) -> bool:
    """Whether ``name`` is a path inside ``root`` that is there (a name
    only: nothing is read)."""
    if name.startswith(("/", "~")):
        return False
    try:
        path = (root / name).resolve()
        return path.is_relative_to(root.resolve()) and path.exists()
    except (OSError, RuntimeError, ValueError):
        return False


def resolve(
    text: str,
    found: Found,
    root: Path | None = None,
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> Invocation | None:
    """The command ``text`` runs, or None when it is no command (see the
    module's rules); a command-like name that is not known raises
    :class:`CommandError` listing the known ones. ``root`` and
    ``secret_files``: as for :func:`expand`."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    match = _INVOCATION.fullmatch(text.rstrip())
    if match is None or not NAME.fullmatch(match.group("name")):
        return None
    name = match.group("name")
    command = found.get(name)
    if command is None:
        known = ", ".join(f"/{n}" for n in found.names()) or "none"
        unusable = next((i for i in found.invalid if _file_name(i.path) == name), None)
        said = (
            f"/{name} is not usable: {unusable.path}: {unusable.reason}"
            if unusable is not None
            else f"unknown command /{name}"
        )
        raise CommandError(
            f"{said}; the known commands are: {known} (to send a text "
            "that starts with '/', start it with '//')"
        )
    arguments = match.group("args") or ""
    expanded = expand(command, arguments, root, secret_files)
    return Invocation(command, arguments.strip(), expanded)


def _file_name(path: str) -> str:
    """The command name a file of that path would have (``x.md``,
    ``x.prompt.md``: ``x``)."""
    return Path(path).name.removesuffix(".md").removesuffix(".prompt")


def literal(text: str) -> str:
    """The text a prompt sends: ``//text`` is ``/text``."""
    return text[1:] if text.startswith("//") else text
