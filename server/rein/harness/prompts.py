"""The system prompts of every role, assembled in one place.

A role is who the model is in a run: the ``agent`` (agent mode), the
``explainer`` (explain mode), the ``planner`` and the ``summariser`` of plan
mode (one Agent, two kinds of run), the ``executor`` (plan mode's step
runner) and a ``subagent`` (the ``task`` tool's child).

Every prompt is built from the tools the role is actually offered, so it
never forbids what the tools allow nor names a tool the role does not have
(``tests/session/test_prompt_contract.py`` checks both over the real wiring
of both hosts):

* what the role may do is said from the tools' classes: a role with a
  ``write`` tool is never told not to change files, one without it is told
  it cannot; the same for ``command`` tools;
* the rules about changing code appear only where a tool can change code;
* tools are named only in their own sections (``prompt_section``, or the
  bare name), and the toolkit rules of a toolkit (``<name_rules>``) only when
  one of its tools is offered.

The functions are pure: the caller passes the offered tools and the project
instructions (``rein.tools.project_instructions(root)``).

Layout of an acting role's prompt::

    identity
    # Rules          (core rules; the change rules when it can change files)
    # Tools          (one section per offered tool, in the order given)
    <name_rules>     (one per toolkit with an offered tool)
    # Role: <role>   (what this role does, and what its tools do not allow)
    # Project instructions   (AGENTS.md or the like, when given)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol, get_args

__all__ = [
    "ACTING_ROLES",
    "CHANGE_RULES",
    "CORE_RULES",
    "ROLES",
    "ROLE_SECTIONS",
    "PromptTool",
    "PromptToolkit",
    "Role",
    "build_system_prompt",
    "planner_prompt",
    "project_instructions_section",
    "summariser_prompt",
    "toolkit_rules_sections",
]

Role = Literal["agent", "explainer", "planner", "executor", "summariser", "subagent"]
ROLES: tuple[Role, ...] = get_args(Role)
#: The roles whose prompt :func:`build_system_prompt` makes (the planner's
#: and the summariser's come from :func:`planner_prompt` and
#: :func:`summariser_prompt`).
ACTING_ROLES: tuple[Role, ...] = ("agent", "explainer", "executor", "subagent")


class PromptToolkit(Protocol):
    """What a prompt needs of a tool's toolkit (a
    :class:`~rein.harness.toolkit.Toolkit`): its name and rules."""

    @property
    def name(self) -> str: ...

    @property
    def instructions(self) -> str: ...


class PromptTool(Protocol):
    """What a prompt needs of a tool (a :class:`~rein.harness.tools.Tool`)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def toolkit(self) -> PromptToolkit | None: ...

    @property
    def tool_class(self) -> str: ...

    @property
    def prompt_section(self) -> str: ...


IDENTITY = (
    "You are Rein, a coding agent working in the person's workspace through their "
    "editor. You work with the tools below and answer in plain, concise text."
)
SUBAGENT_IDENTITY = (
    "You are a subagent of Rein, a coding agent working in the person's workspace. "
    "The agent that started you gave you one subtask; only your final answer goes back "
    "to it. You work with the tools below and answer in plain, concise text."
)

CORE_RULES = """\
- Paths are relative to the workspace root. Files outside the workspace cannot be read or \
changed, and some protected files (secrets, keys, version-control internals) are never \
written.
- Look before you answer: read the relevant code first, and keep to the project's \
conventions, style and libraries.
- A tool result that is an error tells you what went wrong: read it and adjust. Do not \
repeat a call that was denied; find another way or explain what you need.
- Open editor buffers are the truth: a file may contain unsaved changes the person made. \
If a file changed since you read it, read it again before relying on it."""

#: Rules only a role that can change files gets.
CHANGE_RULES = """\
- Make the smallest change that does the task well. Do not reformat, rename or refactor \
what the task does not need.
- After changing code, check your work when you can. Rein checks the analyzers' \
diagnostics after the changes, and what they broke has to be fixed.
- When you finish, say briefly what you changed and anything the person should know. Do \
not paste whole files back."""

ROLE_SECTIONS: Mapping[Role, str] = {
    "agent": (
        "Carry out the task with your tools, and finish with a short summary of what you did."
    ),
    "explainer": (
        "Answer the question: read what you need and explain clearly, pointing to the "
        "relevant files and lines."
    ),
    "executor": (
        "You carry out a plan one step at a time; each message gives you the current step. "
        "Do that step's work with your tools, then call `complete_step`: success=true with "
        "a summary once the step is done, or success=false with the reason when it cannot "
        "be done. Do only the current step."
    ),
    "subagent": (
        "Do the subtask you were given with your tools, then end with a complete, "
        "self-contained answer: what you found or did, with the files and lines that matter."
    ),
    "planner": (
        "You are the planner of a coding agent. Break the person's task into a short list "
        "of concrete steps that an executor with the tools listed below can carry out one "
        "at a time. Each step must be checkable. Do not do the work yourself: answer a task "
        "by calling `submit_plan` (an empty plan means nothing needs doing); when a step "
        "failed, call it again with the revised remaining steps."
    ),
    "summariser": (
        "When you are told that all steps are done, write the final answer for the person "
        "in plain text, without calling a tool: what was done and anything they should know."
    ),
}

#: Said to a role without a tool of that class (never to one with it).
NO_WRITE = (
    "None of your tools changes files: do not change any file and do not claim you did; "
    "where a change is needed, say what to change and where."
)
NO_COMMAND = "None of your tools runs commands: do not run commands or claim you did."
NO_TOOLS = "No tools are available in this session: answer from what you know."

_MAX_INSTRUCTIONS_CHARS = 20_000


def _section(tool: PromptTool) -> str:
    return tool.prompt_section.strip()


def toolkit_rules_sections(tools: Iterable[PromptTool]) -> list[str]:
    """One ``<name_rules>`` section per toolkit with a tool in ``tools``
    (a tool's ``toolkit`` attribute: a name and its ``instructions``), in
    the order the toolkits first appear; toolkits without instructions give
    none."""
    seen: dict[str, str] = {}
    for tool in tools:
        kit = tool.toolkit
        if kit is None or kit.name in seen:
            continue
        seen[kit.name] = kit.instructions.strip()
    return [f"<{name}_rules>\n{text}\n</{name}_rules>" for name, text in seen.items() if text]


def project_instructions_section(project_instructions: str | None) -> str | None:
    """The ``# Project instructions`` section (cut at 20 000 characters), or
    None without instructions."""
    if not project_instructions or not project_instructions.strip():
        return None
    text = project_instructions.strip()
    if len(text) > _MAX_INSTRUCTIONS_CHARS:
        text = text[:_MAX_INSTRUCTIONS_CHARS] + "\n[... project instructions cut ...]"
    return (
        "# Project instructions\nThe repository's own guidance for agents (and the "
        "person's own, where a file says so). Follow it where it does not conflict with "
        "the instructions above.\n\n" + text
    )


def _tools_section(tools: Sequence[PromptTool], sections: Mapping[str, str] | None) -> str:
    if not tools:
        return "# Tools\n" + NO_TOOLS
    lines = []
    for tool in tools:
        text = (sections or {}).get(tool.name, "").strip() or _section(tool)
        if not text:
            described = tool.description.strip().split("\n\n")[0]
            text = f"`{tool.name}`: {' '.join(described.split())}" if described else ""
        lines.append(f"- {text}" if text else f"- `{tool.name}`")
    return "# Tools\n" + "\n".join(lines)


def build_system_prompt(
    tools: Iterable[PromptTool],
    role: Role = "agent",
    project_instructions: str | None = None,
    *,
    sections: Mapping[str, str] | None = None,
) -> str:
    """The system prompt of an acting role (:data:`ACTING_ROLES`) offered
    ``tools`` (every tool the model receives, output tools included).

    A tool's section is ``sections[name]``, else its ``prompt_section``,
    else its name and the first paragraph of its description. ``project_instructions`` come last.
    """
    if role not in ACTING_ROLES:
        raise ValueError(
            f"unknown acting role {role!r}; expected one of {', '.join(ACTING_ROLES)} "
            "(the planner's prompt is planner_prompt, the summariser's summariser_prompt)"
        )
    offered = list(tools)
    classes = {t.tool_class for t in offered}
    can_write = "write" in classes
    rules = CORE_RULES + ("\n" + CHANGE_RULES if can_write else "")
    parts = [SUBAGENT_IDENTITY if role == "subagent" else IDENTITY, "# Rules\n" + rules]
    parts.append(_tools_section(offered, sections))
    parts.extend(toolkit_rules_sections(offered))
    role_text = [ROLE_SECTIONS[role]]
    if offered and not can_write:
        role_text.append(NO_WRITE)
    if offered and "command" not in classes:
        role_text.append(NO_COMMAND)
    parts.append(f"# Role: {role}\n" + " ".join(role_text))
    instructions = project_instructions_section(project_instructions)
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)


def planner_prompt(
    overview: str,
    project_instructions: str | None = None,
) -> str:
    """The prompt of plan mode's planner (its plan runs are offered
    ``submit_plan``). ``overview`` lists the executor's tools (names and one
    line each), framed as the executor's, not the planner's."""
    return _plan_role_prompt(ROLE_SECTIONS["planner"], overview, project_instructions)


def summariser_prompt(
    overview: str,
    project_instructions: str | None = None,
) -> str:
    """The prompt of the planner's summary run (the same Agent, whose
    request can call no tool): the summariser's role, and the executor's
    tools as :func:`planner_prompt` shows them, naming nothing it could call."""
    return _plan_role_prompt(
        "# Role: summariser\n" + ROLE_SECTIONS["summariser"], overview, project_instructions
    )


def _plan_role_prompt(role: str, overview: str, project_instructions: str | None) -> str:
    parts = [role, "# The executor's tools (not yours)\n" + (overview or "(none)")]
    instructions = project_instructions_section(project_instructions)
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)
