"""A toolkit that lives outside Rein: the prompt contract and the toolkit
tests load it by its import path (``tools.toolkits``) or an entry point."""

from __future__ import annotations

from rein.harness.errors import ToolError
from rein.harness.toolkit import Toolkit, tool
from rein.harness.tools import ToolContext, ToolResult

#: The ``tools.toolkits`` entry for this toolkit.
NOTES_PATH = "tests.session.notes_toolkit:NotesToolkit"


class NotesToolkit(Toolkit):
    """Short notes kept in memory for one session."""

    name = "notes"
    instructions = "Keep every note under 80 characters and never store secrets in a note."

    def __init__(self) -> None:
        self.notes: dict[str, str] = {}

    @tool(tool_class="read")
    async def read_note(self, key: str) -> str:
        """Read the note stored under a key.

        Args:
            key: The key the note was stored under.
        """
        if key not in self.notes:
            raise ToolError(f"No note {key!r}; the keys are: {', '.join(self.notes) or 'none'}.")
        return self.notes[key]

    @tool(tool_class="write")
    async def write_note(self, key: str, text: str, ctx: ToolContext) -> ToolResult:
        """Store a note under a key, replacing any note with that key.

        Args:
            key: A short key for the note.
            text: The note itself.
        """
        self.notes[key] = text
        return ToolResult(f"Stored {key!r}.", details={"call": ctx.tool_call_id})


class NotAToolkit:
    """Names a class that is not a Toolkit (a bad ``tools.toolkits`` entry)."""
