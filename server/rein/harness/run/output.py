"""Structured output through output tools.

An output tool's arguments are the answer: they are validated against a
pydantic model (a validation error goes back as the tool result, so the model
repairs it), and a valid call ends the run (``details["terminal"]``). When an
output tool is required (``Agent.required_output``), a plain text reply gets
one nudge to call it; a second one fails the run with a clear reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from rein.harness.errors import ToolError
from rein.harness.tools import Tool, ToolContext, ToolResult

__all__ = ["OutputTool", "output_of"]

T = TypeVar("T", bound=BaseModel)


class OutputTool(Tool[T], Generic[T]):
    """A tool whose valid call is the run's answer.

    ``check`` may reject a well-formed answer with a reason the model reads
    (raise :class:`~rein.harness.errors.ToolError`). ``validates`` says
    whether an answer ends the run through the gates (default: always); an
    answer that gives up (plan-act's failed step) skips them, and its
    changes stay unvalidated for a later run's gates.
    """

    tool_class: ClassVar[Any] = "other"

    def __init__(
        self,
        name: str,
        description: str,
        args_model: type[T],
        *,
        check: Callable[[T, ToolContext], None] | None = None,
        summary: Callable[[T], str] | None = None,
        validates: Callable[[T], bool] | None = None,
    ) -> None:
        self.name = name  # type: ignore[misc]
        self.description = description  # type: ignore[misc]
        self.args_model = args_model  # type: ignore[misc]
        self._check = check
        self._summary = summary
        self._validates = validates
        self._schema = None

    async def execute(self, args: T, ctx: ToolContext) -> ToolResult:
        if self._check is not None:
            self._check(args, ctx)
        text = self._summary(args) if self._summary is not None else "Recorded."
        details: dict[str, Any] = {
            "terminal": True,
            "output": args.model_dump(mode="json"),
            "text": text,
        }
        if self._validates is not None and not self._validates(args):
            details["skip_gates"] = True
        return ToolResult(text, details=details)


def output_of(details: dict[str, Any] | None, model: type[T]) -> T:
    """The validated answer from a run's ``output`` details."""
    if not details or "output" not in details:
        raise ToolError("the run ended without calling its output tool")
    return model.model_validate(details["output"])
