"""The one table of handlers (rein.lsp.handlers) and docs/protocol.md agree:
every method and command the server registers is documented, and every
client -> server method or command the page documents is registered."""

from __future__ import annotations

import re
from pathlib import Path

from rein.lsp import create_server
from rein.lsp.handlers import COMMANDS, METHODS

PROTOCOL = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

#: Documented, and handled by pygls (ReinProtocol) itself, not by a handler
#: of the table: it runs the table's commands.
BUILT_IN = {"workspace/executeCommand"}


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _first_cells(table: str) -> set[str]:
    names: set[str] = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            names.update(re.findall(r"`([^`]+)`", first))
    return names


def _documented() -> tuple[set[str], set[str]]:
    """The client -> server methods and the commands docs/protocol.md documents."""
    text = PROTOCOL.read_text(encoding="utf-8")
    lsp_part = text[: text.index("\n## `rein acp`")]
    methods = _first_cells(_section(lsp_part, "Standard features"))
    for title in ("Client -> server requests", "Client -> server notification"):
        methods.update(re.findall(r"^### `([^`]+)`", _section(lsp_part, title), re.M))
    methods.update(
        re.findall(r"^### (?:notification|request) `([^`]+)` \(client -> server\)", lsp_part, re.M)
    )
    commands = _first_cells(_section(lsp_part, "Commands"))
    return methods, commands


def test_every_registered_method_and_command_is_documented_and_the_reverse() -> None:
    methods, commands = _documented()
    registered = {route.name for route in METHODS}
    assert registered - methods == set()
    assert methods - registered == BUILT_IN
    assert {route.name for route in COMMANDS} == commands


def test_register_puts_the_whole_table_on_the_server() -> None:
    server = create_server()
    features = set(server.protocol.fm.features)
    assert {route.name for route in METHODS} <= features
    assert set(server.protocol.fm.commands) == {route.name for route in COMMANDS}
