"""The person's setup files that are not used (a skill, agent or command
file with a reason, :func:`rein.session.setup_files.setup_problems`), told
in the editor once: a warning when a session is made and the list is new or
changed, never again for the same list."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rein.config import ReinConfig
from rein.session.setup_files import setup_problems

__all__ = ["SetupNotice"]

#: At most this many files are named in the message (rein doctor lists all).
SHOWN = 3


class SetupNotice:
    """Says the unused setup files through ``say`` (a warning), once per list."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._said: tuple[str, ...] = ()

    def check(self, config: ReinConfig, root: Path) -> None:
        problems = tuple(setup_problems(config, root))
        if not problems or problems == self._said:
            return
        self._said = problems
        more = len(problems) - SHOWN
        listed = "; ".join(problems[:SHOWN]) + (f"; and {more} more" if more > 0 else "")
        self._say(
            f"Rein: {len(problems)} of your setup files are not used (rein doctor lists them): "
            f"{listed}"
        )
