"""``get_diagnostics``: the current analyzer findings through the
DiagnosticsSource port (the editor's language servers, or the headless
analyzers)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from rein.harness.errors import ToolError
from rein.harness.gating.gate_types import DeferredWorkspace
from rein.harness.ports import Diagnostic, SettlingDiagnostics
from rein.harness.tools import Tool, ToolContext, ToolResult
from rein.tools._context import sandbox_of
from rein.tools.settings import settings_of

__all__ = ["GetDiagnosticsArgs", "GetDiagnosticsTool", "format_diagnostic"]

MAX_DIAGNOSTICS = 200
_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def format_diagnostic(d: Diagnostic) -> str:
    """``path:line:col severity code message`` with 1-based line and column."""
    severity = _SEVERITY.get(d.severity, "error")
    code = f" {d.code}" if d.code else ""
    source = f" ({d.source})" if d.source else ""
    message = " ".join(d.message.split())
    return f"{d.path}:{d.line + 1}:{d.character + 1} {severity}{code} {message}{source}"


def _summary(diagnostics: list[Diagnostic]) -> str:
    counts: dict[str, int] = {}
    for d in diagnostics:
        name = _SEVERITY.get(d.severity, "error")
        counts[name] = counts.get(name, 0) + 1
    parts = [
        f"{counts[name]} {name}{'' if counts[name] == 1 else 's'}"
        for name in ("error", "warning", "info", "hint")
        if name in counts
    ]
    files = len({d.path for d in diagnostics})
    return f"{', '.join(parts)} in {files} file{'' if files == 1 else 's'}"


class GetDiagnosticsArgs(BaseModel):
    paths: list[str] | None = Field(
        None,
        description="Files to report on, relative to the workspace root. Omit for all files.",
    )


class GetDiagnosticsTool(Tool[GetDiagnosticsArgs]):
    name = "get_diagnostics"
    description = (
        "Get the current errors and warnings the analyzers (type checker, linter, compiler) "
        "report, as `path:line:col severity code message` lines. Use it after changing code "
        "to check for problems, or to see what is broken before you start."
    )
    args_model = GetDiagnosticsArgs
    tool_class = "read"
    prompt_section: str = (
        "`get_diagnostics` shows the analyzers' current errors and warnings; check it after "
        "your changes."
    )

    def __init__(self, max_diagnostics: int = MAX_DIAGNOSTICS) -> None:
        self.max_diagnostics = max_diagnostics

    async def execute(self, args: GetDiagnosticsArgs, ctx: ToolContext) -> ToolResult:
        source = ctx.env.diagnostics
        if source is None:
            raise ToolError(
                "No analyzer is connected in this session, so there are no diagnostics. "
                "Run the project's checks with a command instead, if one is available."
            )
        paths: list[str] | None = None
        if args.paths:
            _, sandbox = sandbox_of(ctx)
            paths = [sandbox.resolve(p) for p in args.paths]
        checking = False
        if isinstance(source, DeferredWorkspace) and source.workspace_deferred():
            # The analyzers check the changed files only until asked for the
            # rest: "no diagnostics" for a file nobody analysed would be false.
            # Started now, it is waited for, under the analyzer gate's bound.
            await source.analyse_workspace()
            if isinstance(source, SettlingDiagnostics):
                wait_s = settings_of(ctx).diagnostics_wait_ms / 1000
                checking = not await source.wait_idle(wait_s)
        snapshot = await source.snapshot(paths)
        found = sorted(
            snapshot.diagnostics, key=lambda d: (d.path, d.line, d.character, d.severity)
        )
        stale = snapshot.stale or checking
        details = {"count": len(found), "generation": snapshot.generation, "stale": stale}
        lines: list[str] = []
        if not found:
            scope = f" for {', '.join(paths)}" if paths else ""
            lines.append(f"No diagnostics{scope}.")
        else:
            lines.append(f"{_summary(found)}:")
            lines.extend(format_diagnostic(d) for d in found[: self.max_diagnostics])
            if len(found) > self.max_diagnostics:
                lines.append(
                    f"[{len(found) - self.max_diagnostics} more not shown; ask for fewer paths.]"
                )
        if checking:
            lines.append(
                "[Note: the analyzers were still checking the workspace when this was "
                "taken; it is incomplete (stale). Ask again later for the rest.]"
            )
        elif snapshot.stale:
            lines.append(
                "[Note: the analyzers had not caught up with every change when this was "
                "taken; it may be stale. Ask again after a moment if it looks wrong.]"
            )
        return ToolResult("\n".join(lines), details=details)
