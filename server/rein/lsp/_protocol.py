"""pygls plumbing: keep custom messages' params and results as plain dicts.

By default pygls turns the params of methods it does not know into
namedtuples (keys that are not Python names get renamed, and a namedtuple
sent back serialises as a JSON array). Rein validates custom params with
pydantic instead, so the JSON-RPC message classes are structured from the
plain dicts as they are.
"""

from __future__ import annotations

from typing import Any

from cattrs import Converter
from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

__all__ = ["plain_dict_converter"]


def _as_is(obj: Any, cls: type) -> Any:
    return cls(**obj)


def _action_or_command(obj: Any, _type: Any) -> Any:
    # lsprotocol 2025.0.0 can parse a CodeAction carrying a command object as
    # a Command: decide by the shape of "command".
    if isinstance(obj, dict) and isinstance(obj.get("command"), str):
        return converter_for_actions.structure(obj, lsp.Command)
    return converter_for_actions.structure(obj, lsp.CodeAction)


converter_for_actions: Converter = default_converter()


def plain_dict_converter() -> Converter:
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(cls, _as_is)
    converter.register_structure_hook(lsp.Command | lsp.CodeAction, _action_or_command)
    result: Converter = converter
    return result
