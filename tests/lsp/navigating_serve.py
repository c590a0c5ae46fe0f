"""``rein serve`` with one more tool, for the editor-navigation round trip
over the real server (tests/lsp/test_navigate_round_trip.py) before the
semantic tools use the session's navigator: ``probe_navigation`` asks the
navigator of its session's ports every question once and returns what came
back (a question the editor could not answer: ``unavailable: <reason>``).

Run as a script: ``python tests/lsp/navigating_serve.py [args]`` is ``rein
serve [args]``.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel

from rein.harness.navigation_ports import NavigationUnavailable, Navigator, Position
from rein.harness.tools import Tool, ToolContext
from rein.session import manager


class ProbeArgs(BaseModel):
    path: str
    line: int
    character: int


class ProbeNavigation(Tool[ProbeArgs]):
    name = "probe_navigation"
    description = "Ask the navigator every question about one place."
    args_model = ProbeArgs
    tool_class = "read"

    def __init__(self, navigator: Navigator) -> None:
        self.navigator = navigator

    async def execute(self, args: ProbeArgs, ctx: ToolContext) -> str:
        nav, where = self.navigator, Position(args.line, args.character)
        lines = [f"source: {nav.source}"]

        async def ask(label: str, question: Any) -> None:
            try:
                answer = await question
            except NavigationUnavailable as exc:
                lines.append(f"{label}: unavailable: {exc}")
                return
            if isinstance(answer, dict):
                answer = sorted(
                    f"{path}@{e.range.start.line}:{e.range.start.character}={e.new_text}"
                    + ("" if e.version is None else f" v{e.version}")
                    for path, edits in answer.items()
                    for e in edits
                )
            elif isinstance(answer, list):
                answer = [
                    f"{x.path}@{x.range.start.line}:{x.range.start.character}"
                    if hasattr(x, "path")
                    else f"{x.kind} {x.name}@{x.location.path}:{x.location.range.start.line}"
                    for x in answer
                ]
            lines.append(f"{label}: {answer}")

        await ask("definition", nav.definition(args.path, where))
        await ask("references", nav.references(args.path, where))
        await ask("hover", nav.hover(args.path, where))
        await ask("documentSymbols", nav.document_symbols(args.path))
        await ask("workspaceSymbols", nav.workspace_symbols("f"))
        await ask("rename", nav.rename(args.path, where, "g2"))
        return "\n".join(lines)


def main() -> int:
    build = manager.build_session

    def build_session(config: Any, ports: Any, spec: Any, **kwargs: Any) -> Any:
        session = build(config, ports, spec, **kwargs)
        if ports.navigator is not None:
            session.tools.register(ProbeNavigation(ports.navigator))
        return session

    manager.build_session = build_session  # type: ignore[assignment]
    from rein.cli import main as rein

    return rein(["serve", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
