"""Agent Skills: ``SKILL.md`` folders, and the ``skill`` tool that loads one.

Found in the workspace's ``.agents/skills/``, ``.claude/skills/`` and
``.github/skills/``, the user's ``~/.claude/skills/`` and the folders the
configuration adds (``setup.skillPaths``). Each is checked against the
Agent Skills specification (agentskills.io): ``name`` 1-64 characters of
lowercase letters, digits and single hyphens, not starting or ending with a
hyphen, the same as its folder's name; ``description`` 1-1024 characters;
``license`` a string; ``compatibility`` at most 500 characters;
``metadata`` a mapping of strings to strings; ``allowed-tools`` a string
of tool names. One that fails is reported with the reason.

Progressive disclosure: the ``skill`` tool's prompt section lists every
skill's name and description; ``skill(name)`` returns the body and the
skill's files. A skill inside the workspace is read further with
``read_file`` (the workspace's sandbox applies); one outside it (the
user's) with ``skill(name, file=...)``, which reads only files inside that
skill's folder. Scripts run with ``run_command`` under the usual approvals:
a skill's ``allowed-tools`` never approves anything.

Claude Code's own fields: a skill is also the slash command ``/name``
(:func:`skill_command`; ``argument-hint`` its hint) unless
``user-invocable: false``; ``disable-model-invocation: true`` leaves it out
of the list the model reads (only the person starts it, with ``/name``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rein.bring.commands import Command
from rein.bring.frontmatter import Document
from rein.bring.setup_folders import Place, personal_first, walk_setup_folders
from rein.bring.sources import Invalid, Scope, optional_text, tool_names
from rein.harness.errors import SandboxError, ToolError
from rein.harness.messages import Message, UserMessage
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools.sandbox import Sandbox
from rein.tools.secret_files import SecretFileError
from rein.tools.settings import DEFAULT_DENY_GLOBS

__all__ = [
    "PROJECT_FOLDERS",
    "USER_FOLDERS",
    "FoundSkills",
    "Skill",
    "SkillArgs",
    "SkillTool",
    "discover_skills",
    "person_texts",
    "skill_command",
]

#: The workspace's skill folders, in the order they are read.
PROJECT_FOLDERS = (".agents/skills", ".claude/skills", ".github/skills")
#: The user's, under the home folder.
USER_FOLDERS = (".claude/skills",)

#: A skill is a folder holding this file.
_MANIFESTS = "*/SKILL.md"
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
#: A skill lists at most this many of its files.
MAX_FILES = 200
#: ``skill(name, file=...)`` reads at most this many bytes.
MAX_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Skill:
    """One valid skill."""

    name: str
    description: str
    folder: Path
    source: str
    scope: Scope
    body: str
    #: Its other files, relative to its folder (``scripts/run.sh``).
    files: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    #: Its folder relative to the workspace (None: outside it).
    in_workspace: str | None = None
    #: Listed to the model (``disable-model-invocation: true``: not).
    model_invocable: bool = True
    #: A slash command ``/name`` (``user-invocable: false``: not).
    user_invocable: bool = True
    argument_hint: str | None = None


@dataclass(frozen=True)
class FoundSkills:
    skills: tuple[Skill, ...] = ()
    invalid: tuple[Invalid, ...] = ()


def discover_skills(
    root: Path,
    home: Path | None = None,
    extra: Sequence[Path] = (),
    deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
) -> FoundSkills:
    """Every skill of the user's ``home`` (None: none), the workspace
    ``root`` and the ``extra`` folders; a name found twice keeps the first:
    the person's own skill wins over the workspace's, as in Claude Code
    (personal over project), so a workspace never takes their /name."""
    user = [Place(home / p, "user", _MANIFESTS) for p in USER_FOLDERS] if home else []
    project = [Place(root / p, "project", _MANIFESTS) for p in PROJECT_FOLDERS]
    places = personal_first(user, project, root, home)
    places.extend(Place(p, "config", _MANIFESTS) for p in extra)
    skills, invalid = walk_setup_folders(
        "skill",
        places,
        root,
        home,
        deny_globs,
        lambda document, manifest, place, shown: _skill(
            document, manifest.parent, root, place.scope, shown
        ),
        lambda skill, first: f"a skill named {skill.name} is already {first.source}",
        check=lambda manifest: _not_broad(manifest.parent, root, home),
    )
    return FoundSkills(skills, invalid)


def _not_broad(entry: Path, root: Path, home: Path | None) -> None:
    """A skill folder that is (a link to) the workspace, the home folder or
    a folder holding one of them would let ``skill(file=...)`` read all of
    it: a ValueError."""
    real = entry.resolve()
    for held in (root, home):
        if held is not None and held.resolve().is_relative_to(real):
            raise ValueError(
                f"its folder is {real}, which holds {held}: a skill's folder holds only the skill"
            )


def _skill(document: Document, folder: Path, root: Path, scope: Scope, shown: str) -> Skill:
    meta = document.meta
    name = optional_text(meta, "name", 64)
    if not name:
        raise ValueError("name: required")
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"name: {name!r} is not lowercase letters, digits and single hyphens "
            "(not at the start or end)"
        )
    if name != folder.name:
        raise ValueError(f"name: {name!r} is not the name of its folder {folder.name!r}")
    description = optional_text(meta, "description", 1024)
    if not description or not description.strip():
        raise ValueError("description: required")
    optional_text(meta, "license")
    optional_text(meta, "compatibility", 500)
    _check_metadata(meta.get("metadata"))
    try:
        relative = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = None
    return Skill(
        name=name,
        description=" ".join(description.split()),
        folder=folder,
        source=shown,
        scope=scope,
        body=document.body.strip(),
        files=_files(folder),
        allowed_tools=tool_names(meta, "allowed-tools"),
        in_workspace=relative,
        model_invocable=not _flag(meta, "disable-model-invocation", False),
        user_invocable=_flag(meta, "user-invocable", True),
        argument_hint=optional_text(meta, "argument-hint"),
    )


def _flag(meta: dict[str, Any], key: str, default: bool) -> bool:
    value = meta.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key}: must be true or false, not {value!r}")
    return value


def skill_command(skill: Skill) -> Command:
    """The slash command ``/name`` a skill is, as in Claude Code: its
    instructions, where its files are, and the arguments
    (:func:`~rein.bring.commands.expand` puts them in)."""
    return Command(
        name=skill.name,
        description=skill.description,
        body=_loaded(skill),
        source=skill.source,
        scope=skill.scope,
        argument_hint=skill.argument_hint,
        allowed_tools=skill.allowed_tools,
    )


def _check_metadata(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError("metadata: must be a mapping of strings to strings")


def _files(folder: Path) -> tuple[str, ...]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            rel = (Path(dirpath) / filename).relative_to(folder).as_posix()
            if rel != "SKILL.md":
                found.append(rel)
            if len(found) >= MAX_FILES:
                return tuple(found)
    return tuple(found)


#: The origins of the messages the person wrote (a hook's, a repair's or
#: the bootstrap's are not theirs).
PERSON_ORIGINS = frozenset({"prompt", "steer", "follow_up"})


def person_texts(messages: Iterable[Message]) -> list[str]:
    """The texts of the person's own messages among ``messages``."""
    return [
        m.content for m in messages if isinstance(m, UserMessage) and m.origin in PERSON_ORIGINS
    ]


class SkillArgs(BaseModel):
    name: str = Field(description="The skill's name, as the list of skills gives it")
    file: str | None = Field(
        None,
        description="A file of a skill outside the workspace to read, relative to its folder "
        "(scripts/x.py); without it, the skill's instructions and its list of files",
    )


class SkillTool(Tool[SkillArgs]):
    """``skill``: load a skill's instructions, or read one of its files."""

    name = "skill"
    description = (
        "Load a skill: its instructions and the list of its files. Use a skill when the task "
        "matches its description, before doing the work."
    )
    args_model = SkillArgs
    tool_class = "read"

    def __init__(
        self,
        skills: Sequence[Skill],
        deny_globs: Sequence[str] = DEFAULT_DENY_GLOBS,
        person_texts: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        self.skills = {s.name: s for s in skills}
        #: The texts the person sent in this session (None: none known): a
        #: skill with ``disable-model-invocation`` is served only once one of
        #: them started it (``/name``, whose text begins with its heading).
        self.person_texts = person_texts
        #: Files of a skill outside the workspace these cover are not read.
        self.deny_globs = tuple(deny_globs)
        # A skill only the person starts (/name) is not listed.
        shown = [s for s in skills if s.model_invocable]
        listed = "\n".join(f"  - {s.name}: {s.description}" for s in shown)
        self.prompt_section = (
            "`skill` loads one of the skills below (instructions for a kind of task, with "
            "their scripts and references) when the task matches its description; follow "
            "the instructions it returns. Skills:\n" + listed
            if shown
            else "`skill` reads the files of a skill the person started with /name."
        )

    async def execute(self, args: SkillArgs, ctx: ToolContext) -> ToolResult:
        skill = self.skills.get(args.name)
        if skill is None:
            known = ", ".join(n for n, s in self.skills.items() if s.model_invocable) or "none"
            raise ToolError(f"no skill named {args.name!r}; the skills are: {known}")
        if not skill.model_invocable and not self._started(skill):
            raise ToolError(
                f"the skill {skill.name} is started only by the person, with /{skill.name} "
                "(disable-model-invocation); they have not started it in this session"
            )
        if args.file is None:
            return ToolResult(_loaded(skill), details={"skill": skill.name})
        text = _file(skill, args.file, self.deny_globs)
        return ToolResult(text, details={"skill": skill.name, "file": args.file})

    def _started(self, skill: Skill) -> bool:
        heading = _heading(skill)
        texts = self.person_texts() if self.person_texts is not None else ()
        return any(heading in text for text in texts)


def _heading(skill: Skill) -> str:
    return f"# Skill: {skill.name}\n"


def _loaded(skill: Skill) -> str:
    parts = [_heading(skill).rstrip("\n"), skill.body or "(no instructions)"]
    if skill.in_workspace is not None:
        where = (
            f"Its folder is {skill.in_workspace}/ in the workspace: read its files with "
            f"read_file ({skill.in_workspace}/<file>) and run its scripts with run_command "
            "from the workspace root."
        )
    else:
        where = (
            f"Its folder is {skill.folder}, outside the workspace: read its files with "
            f"skill(name={skill.name!r}, file=<file>) and run its scripts with run_command "
            f"by their full path ({skill.folder}/<file>)."
        )
    files = "\n".join(f"- {f}" for f in skill.files) or "(none)"
    return "\n\n".join([*parts, where, "Files:\n" + files])


def _file(skill: Skill, rel: str, deny_globs: Sequence[str]) -> str:
    """A file of a skill outside the workspace, read as the file tools read
    the workspace's: inside the skill's folder after links, not covered by
    ``deny_globs``, no hard link, opened once and read at most
    :data:`MAX_FILE_BYTES`."""
    if skill.in_workspace is not None:
        raise ToolError(
            f"the skill {skill.name} is in the workspace: read its files with read_file "
            f"({skill.in_workspace}/{rel})"
        )
    sandbox = Sandbox(str(skill.folder), deny_globs)
    not_its = ToolError(f"{rel} is not a file of the skill {skill.name}")
    try:
        inside = sandbox.resolve(rel)
    except SandboxError:
        raise not_its from None
    if inside == "." or rel.strip().startswith("/"):
        raise not_its
    glob = sandbox.denied_by(inside)
    if glob is not None:
        raise ToolError(f"{rel} is a protected file ({glob}); it is not read")
    try:
        disk = sandbox.read_disk(inside, MAX_FILE_BYTES)
    except SandboxError:
        raise not_its from None
    except SecretFileError:
        raise  # a secret file (tools.secretFiles' defaults): said as it is
    except ToolError:  # a folder, a pipe, unreadable
        raise ToolError(f"the skill {skill.name} has no file {rel}") from None
    if disk is None:
        raise ToolError(f"the skill {skill.name} has no file {rel}")
    if disk.links > 1:
        raise ToolError(f"{rel} is a hard link ({disk.links} names); it is not read")
    if disk.size > MAX_FILE_BYTES:
        raise ToolError(f"{rel} is over {MAX_FILE_BYTES} bytes")
    try:
        return disk.data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not UTF-8 text") from None
