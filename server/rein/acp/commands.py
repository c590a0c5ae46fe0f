"""Slash commands over ACP: the person's prompt files
(:mod:`rein.bring.commands`) as the agent's available commands
(``available_commands_update``, sent after ``session/new`` and
``session/load``), and a prompt that starts with ``/name`` run as one."""

from __future__ import annotations

from pathlib import Path

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate

from rein.acp import errors
from rein.bring.commands import CommandError
from rein.config import ReinConfig
from rein.session.setup_files import Prompted, commands_of, prompted

__all__ = ["available_commands", "command_prompt"]


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


def command_prompt(config: ReinConfig, root: Path, text: str) -> Prompted:
    """The prompt ``text`` runs (Invalid params naming ``prompt`` for an
    unknown command, listing the known ones)."""
    try:
        return prompted(config, root, text)
    except CommandError as exc:
        raise errors.invalid_field("prompt", str(exc)) from None
