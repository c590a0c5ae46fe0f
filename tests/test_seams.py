"""Seams are declared (Protocols in ports, typed attributes), never
discovered: no ``getattr``/``hasattr``/``setattr`` with a named attribute,
none with a computed name (a dispatch on a computed method name), no
``__getattr__`` forwarding in ``server/rein``, except the few below that read
a third party's or the standard library's objects (os flags,
pygls/lsprotocol/ACP params, exceptions) or reflect on what a person wrote
(a toolkit's methods, a tool's argument model, an import path)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "server" / "rein"

#: (module path under server/rein, attribute) -> why looking it up is not a
#: Rein seam. An entry names one attribute in one module, nothing wider; a
#: computed name is ``"?"`` followed by its expression.
ALLOWED: dict[tuple[str, str], str] = {
    # the standard library
    ("disk/disk_workspace.py", "O_DIRECTORY"): "os flag missing on some platforms",
    ("tools/disk_read.py", "O_NONBLOCK"): "os flag",
    ("tools/disk_read.py", "O_CLOEXEC"): "os flag",
    ("tools/disk_read.py", "O_NOFOLLOW"): "os flag",
    ("tools/sandbox.py", "O_NOFOLLOW"): "os flag",
    ("tools/sandbox.py", "O_NONBLOCK"): "os flag",
    ("tools/sandbox.py", "O_CLOEXEC"): "os flag",
    ("lsp/transports.py", "read1"): "a binary stream's read1 (io)",
    ("lsp/server.py", "__name__"): "an error source's name for a log line",
    ("bench/corpus.py", "decorator_list"): "an ast node's decorators",
    ("store/_sqlite_errors.py", "sqlite_errorcode"): (
        "sqlite3's error code: set on errors from the SQLite library only, not on "
        "the sqlite3 module's own (a closed connection, wrong bindings)"
    ),
    ("cli.py", "?args.log_level.upper()"): "a logging level by its name",
    # pygls, lsprotocol, the ACP schema
    ("lsp/_protocol.py", "method"): "a pygls message",
    ("lsp/_protocol.py", "id"): "a pygls message",
    ("disk/analyzer_notices.py", "token"): "lsprotocol progress params",
    ("disk/analyzer_notices.py", "value"): "lsprotocol progress params",
    ("disk/analyzer_notices.py", "kind"): "lsprotocol progress value",
    ("disk/analyzer_findings.py", "kind"): "lsprotocol diagnostic report",
    ("disk/analyzer_findings.py", "result_id"): "lsprotocol diagnostic report",
    ("disk/analyzer_findings.py", "items"): "lsprotocol diagnostic report",
    ("acp/prompts.py", "type"): "an ACP schema content block",
    ("acp/mcp_servers.py", "type"): "an ACP schema MCP server",
    # what a person wrote, read by reflection
    ("harness/toolkit.py", "?name"): "a tool's argument model's fields, as keyword arguments",
    ("harness/toolkit.py", "?attr"): "a toolkit's @tool methods, bound",
    ("tools/toolkit.py", "?part"): "a toolkit's import path (tools.toolkits)",
}


def discoveries(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, attribute) of each lookup by name in ``tree``: ``getattr``/
    ``hasattr``/``setattr``/``delattr`` with a literal name, or ``"?"`` and
    the expression of any other name, and each ``__getattr__`` defined."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in (
            "__getattr__",
            "__getattribute__",
        ):
            found.append((node.lineno, node.name))
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
        ):
            continue
        name = node.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            found.append((node.lineno, name.value))
        else:
            found.append((node.lineno, "?" + ast.unparse(name)))
    return found


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_no_collaborator_is_discovered_by_name() -> None:
    offending = []
    for path in _modules():
        rel = path.relative_to(SRC).as_posix()
        for line, name in discoveries(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel, name) not in ALLOWED:
                offending.append(f"server/rein/{rel}:{line}: {name!r}")
    assert not offending, (
        "declare the seam (a Protocol in rein.harness.ports checked with "
        "isinstance, or a typed attribute) instead of looking it up:\n" + "\n".join(offending)
    )


def test_every_allowed_lookup_is_still_there() -> None:
    """An entry whose lookup went away goes too (the list stays the debt)."""
    found = {
        (path.relative_to(SRC).as_posix(), name)
        for path in _modules()
        for _, name in discoveries(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert sorted(set(ALLOWED) - found) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('hook = getattr(workspace, "before_change", None)', [(1, "before_change")]),
        ('ok = hasattr(view, "text_of")', [(1, "text_of")]),
        ('handler = getattr(self, f"_on_{event.type}", None)', [(1, "?f'_on_{event.type}'")]),
        ("class W:\n    def __getattr__(self, name): ...", [(2, "__getattr__")]),
        ("value = getattr(args, name)", [(1, "?name")]),
        ("policy = getattr(self, approval_class)", [(1, "?approval_class")]),
        ("ok = hasattr(item, FIELDS[kind])", [(1, "?FIELDS[kind]")]),
        ('setattr(workspace, "on_sending", expect)', [(1, "on_sending")]),
        ("setattr(self, key, value)", [(1, "?key")]),
        ("value = workspace.before_change", []),
    ],
)
def test_the_scan_sees_a_lookup_by_name(source: str, expected: list[tuple[int, str]]) -> None:
    assert discoveries(ast.parse(source)) == expected
