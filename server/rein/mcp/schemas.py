"""Checks an MCP tool's ``inputSchema`` before the providers see it.

The schema is passed to the model as it is, so one the providers would
reject must not reach them: it must be a JSON object schema
(``"type": "object"``), valid JSON Schema, with only local ``$ref``s
(``#/...``) that resolve and do not form a cycle. :func:`schema_problem`
says what is wrong, or None.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["schema_problem"]


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _resolve(schema: dict[str, Any], ref: str) -> Any:
    node: Any = schema
    for raw in ref[2:].split("/") if ref != "#" else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(ref)
    return node


def _ref_problem(schema: dict[str, Any]) -> str | None:
    targets: dict[str, Any] = {}
    pending = list(_refs(schema))
    while pending:
        ref = pending.pop()
        if ref in targets:
            continue
        if ref != "#" and not ref.startswith("#/"):
            return f"$ref {ref!r} is not local to the schema (only #/... refs are supported)"
        try:
            targets[ref] = _resolve(schema, ref)
        except KeyError:
            return f"$ref {ref!r} does not resolve"
        pending.extend(_refs(targets[ref]))
    # A cycle: a ref reachable again from its own target.
    edges = {ref: set(_refs(target)) for ref, target in targets.items()}
    state: dict[str, int] = {}

    def cyclic(ref: str) -> bool:
        state[ref] = 1
        for nxt in edges[ref]:
            if state.get(nxt) == 1 or (state.get(nxt) is None and cyclic(nxt)):
                return True
        state[ref] = 2
        return False

    for ref in sorted(edges):
        if state.get(ref) is None and cyclic(ref):
            return f"$ref {ref!r} is recursive, which the model providers cannot take"
    return None


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` cannot be offered to the model, or None when it can."""
    if not isinstance(schema, dict):
        return f"inputSchema is {type(schema).__name__}, not a JSON object schema"
    if schema.get("type") != "object":
        return f'inputSchema has type {schema.get("type")!r}; a tool\'s arguments need "object"'
    import jsonschema  # a dependency of the mcp extra; only loaded with a server configured

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"inputSchema is not valid JSON Schema at {where}: {exc.message}"
    return _ref_problem(schema)
