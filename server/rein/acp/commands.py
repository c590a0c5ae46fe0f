"""Slash commands over ACP: the person's prompt files
(:mod:`rein.bring.commands`) as the agent's available commands
(``available_commands_update``, sent after ``session/new`` and
``session/load``), and a prompt that starts with ``/name`` run as one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate

from rein.acp import errors
from rein.acp.prompts import command_line, prompt_text
from rein.bring.commands import CommandError
from rein.config import ReinConfig
from rein.session.setup_files import Prompted, commands_of, prompted

__all__ = ["available_commands", "command_prompt", "prompt_of"]


def available_commands(config: ReinConfig, root: Path) -> AvailableCommandsUpdate:
    """The ``available_commands_update`` of a session working in ``root``."""
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(
                name=c.name,
                description=c.description or c.source,
                input=AvailableCommandInput(hint=c.argument_hint) if c.argument_hint else None,
            )
            for c in commands_of(config, root).commands
        ],
    )


def command_prompt(config: ReinConfig, root: Path, text: str, field: str = "prompt") -> Prompted:
    """The prompt ``text`` runs (Invalid params naming ``field`` for an
    unknown command, listing the known ones): ``session/prompt``'s, and
    ``_rein/steer`` and ``_rein/followUp``'s ``text`` during a run."""
    try:
        return prompted(config, root, text)
    except CommandError as exc:
        raise errors.invalid_field(field, str(exc)) from None


def prompt_of(config: ReinConfig, root: Path, blocks: Sequence[Any]) -> Prompted:
    """What the prompt ``blocks`` run: a ``/name`` command takes its
    arguments from the text blocks and mentioned files (a file one word,
    its path), an embedded resource's text after the expanded command;
    anything else is the blocks' text (:func:`~rein.acp.prompts.prompt_text`)."""
    text = prompt_text(blocks, root, config.tool_settings().secret_files)
    if not text.startswith("/") or text.startswith("//"):
        return command_prompt(config, root, text)
    line, after = command_line(blocks, root)
    ran = command_prompt(config, root, line)
    if ran.command is None:
        return command_prompt(config, root, text)
    return Prompted(ran.text + after, ran.command)
