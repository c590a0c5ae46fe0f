"""Code actions and the commands they carry: "Fix with Rein" (quickfix) for
diagnostics in range; "Explain with Rein" and "Ask Rein about this
selection" (refactor.rewrite) for a non-empty range."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from rein.lsp.params import PromptContext, parse

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["ABORT", "ASK", "EXPLAIN", "FIX", "actions_for", "start", "with_context"]

log = logging.getLogger(__name__)

FIX = "rein.fix"
EXPLAIN = "rein.explain"
ASK = "rein.ask"
ABORT = "rein.abort"

_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def _non_empty(rng: lsp.Range) -> bool:
    return (rng.start.line, rng.start.character) != (rng.end.line, rng.end.character)


def _range_json(rng: lsp.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def _diagnostic_json(d: lsp.Diagnostic) -> dict[str, Any]:
    code = d.code if not isinstance(d.code, dict) else d.code.get("value")
    return {
        "range": _range_json(d.range),
        "severity": int(d.severity) if d.severity is not None else 1,
        "code": code,
        "source": d.source,
        "message": d.message,
    }


def actions_for(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    actions: list[lsp.CodeAction] = []
    diagnostics = list(params.context.diagnostics or [])
    if diagnostics:
        argument = {
            "uri": uri,
            "range": _range_json(params.range),
            "diagnostics": [_diagnostic_json(d) for d in diagnostics],
        }
        first = diagnostics[0].message.splitlines()[0] if diagnostics[0].message else "this problem"
        title = (
            "Fix with Rein"
            if len(diagnostics) == 1
            else f"Fix {len(diagnostics)} problems with Rein"
        )
        actions.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=diagnostics,
                command=lsp.Command(
                    title=f"Fix with Rein: {first[:60]}", command=FIX, arguments=[argument]
                ),
            )
        )
    if _non_empty(params.range):
        argument = {
            "uri": uri,
            "range": _range_json(params.range),
            "diagnostics": [_diagnostic_json(d) for d in diagnostics],
        }
        for title, command in (
            ("Explain with Rein", EXPLAIN),
            ("Ask Rein about this selection", ASK),
        ):
            actions.append(
                lsp.CodeAction(
                    title=title,
                    kind=lsp.CodeActionKind.RefactorRewrite,
                    command=lsp.Command(title=title, command=command, arguments=[argument]),
                )
            )
    return actions


def with_context(text: str, context: PromptContext | None) -> str:
    """The prompt text with the client's context (file, selection, problems)."""
    if context is None:
        return text
    parts = [text]
    if context.uri:
        parts.append(f"\nFile: {context.uri}")
    if context.range:
        start = context.range.get("start", {})
        end = context.range.get("end", {})
        parts.append(f"Lines {start.get('line', 0) + 1}-{end.get('line', 0) + 1}")
    if context.selection:
        parts.append(f"Selected code:\n```\n{context.selection}\n```")
    if context.diagnostics:
        lines = [_problem_line(d) for d in context.diagnostics]
        parts.append("Problems:\n" + "\n".join(lines))
    return "\n".join(parts)


def _problem_line(d: dict[str, Any]) -> str:
    line = int(d.get("range", {}).get("start", {}).get("line", 0)) + 1
    severity = _SEVERITY.get(int(d.get("severity") or 1), "error")
    code = d.get("code") or ""
    return f"- line {line}: {severity} {code} {d.get('message', '')}".replace("  ", " ").rstrip()


def _argument(args: tuple[Any, ...], command: str) -> PromptContext:
    if not args or not isinstance(args[0], dict):
        raise JsonRpcInvalidParams(f"{command}: expected one argument {{uri, range, diagnostics}}")
    question = args[0].get("question")
    if question is not None and not isinstance(question, str):
        raise JsonRpcInvalidParams(f"{command}: invalid params: question: must be a string")
    return parse(PromptContext, args[0], command)


def _not_unicode(context: PromptContext) -> str:
    """The field of ``context`` holding text that is not valid Unicode."""
    for key, value in context.model_dump().items():
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return key
    return "argument"


def _selection(ls: ReinServer, context: PromptContext) -> str | None:
    if not context.uri or not context.range:
        return None
    doc = ls.workspace.text_documents.get(context.uri)
    if doc is None:
        return None
    lines = doc.source.splitlines()
    start = int(context.range.get("start", {}).get("line", 0))
    end = int(context.range.get("end", {}).get("line", start))
    return "\n".join(lines[start : end + 1])


def start(
    ls: ReinServer, kind: Literal["fix", "explain", "ask"], args: tuple[Any, ...]
) -> dict[str, Any]:
    """Start the run in the background; answer with its sessionId at once."""
    command = {"fix": FIX, "explain": EXPLAIN, "ask": ASK}[kind]
    context = _argument(args, command)
    question = args[0].get("question") if isinstance(args[0], dict) else None
    if context.selection is None:
        context = context.model_copy(update={"selection": _selection(ls, context)})
    workspace, _ = ls.adapters()
    rel = workspace.relative(context.uri or "") or context.uri or "the file"
    # The prompt is built (and the request can be rejected) before a session exists.
    if kind == "fix":
        text = f"Fix the problems reported in {rel}. Change as little as needed."
        spec = {"mode": "agent", "title": f"Fix {rel}", "origin": "fix"}
    elif kind == "explain":
        text = f"Explain this code in {rel}: what it does, and anything surprising."
        spec = {"mode": "explain", "title": f"Explain {rel}", "origin": "explain"}
    else:
        text = str(
            question or f"Look at this selection in {rel} and tell me what could be improved."
        )
        spec = {"mode": "explain", "title": f"Ask about {rel}", "origin": "ask"}
    prompt = with_context(text, context)
    try:
        answer_context = json.loads(context.model_dump_json())
    except ValueError as exc:  # a lone surrogate: not text that can be sent or stored
        raise JsonRpcInvalidParams(
            f"{command}: invalid argument: {_not_unicode(context)}: not valid Unicode text"
        ) from exc
    session = ls.new_session(**spec)

    async def run() -> None:
        try:
            await ls.run_prompt(session, prompt)
        except Exception:
            log.exception("%s run failed", command)

    task = asyncio.ensure_future(run())

    def cancel() -> None:
        if not task.done():
            task.cancel()

    session.closers.append(cancel)
    return {"sessionId": session.id, "context": answer_context}
