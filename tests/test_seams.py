"""Seams are declared (Protocols in ports, typed attributes), never
discovered: no ``getattr``/``hasattr`` with a named attribute, no dispatch on
a computed method name, no ``__getattr__`` forwarding in ``server/rein``,
except the few below that read a third party's or the standard library's
objects (os flags, pygls/lsprotocol/ACP params, exceptions, streams)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "server" / "rein"

#: (module path under server/rein, attribute) -> why looking it up is not a
#: Rein seam. An entry names one attribute in one module, nothing wider.
ALLOWED: dict[tuple[str, str], str] = {
    # the standard library
    ("disk/disk_workspace.py", "O_DIRECTORY"): "os flag missing on some platforms",
    ("tools/disk_read.py", "O_NONBLOCK"): "os flag",
    ("tools/disk_read.py", "O_CLOEXEC"): "os flag",
    ("tools/disk_read.py", "O_NOFOLLOW"): "os flag",
    ("tools/sandbox.py", "O_NOFOLLOW"): "os flag",
    ("tools/sandbox.py", "O_NONBLOCK"): "os flag",
    ("tools/sandbox.py", "O_CLOEXEC"): "os flag",
    ("harness/run/streaming.py", "aclose"): "an async generator's aclose (PEP 525)",
    ("harness/run/streaming.py", "ag_frame"): "an async generator's frame (PEP 525)",
    ("lsp/server.py", "read1"): "a binary stream's read1 (io)",
    ("lsp/server.py", "__name__"): "an error source's name for a log line",
    ("bench/corpus.py", "decorator_list"): "an ast node's decorators",
    ("store/_sqlite_errors.py", "sqlite_errorcode"): "sqlite3's error code (3.11+)",
    # pygls, lsprotocol, the ACP schema
    ("lsp/channel.py", "code"): "a pygls JsonRpcException's code",
    ("lsp/lm.py", "code"): "a pygls JsonRpcException's code",
    ("lsp/_protocol.py", "method"): "a pygls message",
    ("lsp/_protocol.py", "id"): "a pygls message",
    ("disk/analyzer_server.py", "token"): "lsprotocol progress params",
    ("disk/analyzer_server.py", "value"): "lsprotocol progress params",
    ("disk/analyzer_server.py", "kind"): "lsprotocol progress value / report",
    ("disk/analyzer_server.py", "registrations"): "lsprotocol registration params",
    ("disk/analyzer_server.py", "unregisterations"): "lsprotocol registration params",
    ("disk/analyzer_server.py", "result_id"): "lsprotocol diagnostic report",
    ("disk/analyzer_server.py", "items"): "lsprotocol diagnostic report",
    ("acp/prompts.py", "type"): "an ACP schema content block",
    ("acp/mcp_servers.py", "type"): "an ACP schema MCP server",
    # Debt, left for their owners (issue 31): a Rein object discovered.
    ("bench/gates_corpus.py", "last_progress_end_at"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "last_publish_at"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "analyzers"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "client"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "_server"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "pid"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "wait_idle"): "benchmark probe of the pool",
    ("bench/gates_corpus.py", "diagnostics"): "benchmark probe of the pool",
}


def discoveries(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, attribute) of each lookup by name in ``tree``: ``getattr``/
    ``hasattr`` with a literal name (``"?"`` for a computed f-string name)
    and each ``__getattr__`` defined."""
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
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
        ):
            continue
        name = node.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            found.append((node.lineno, name.value))
        elif isinstance(name, ast.JoinedStr):
            found.append((node.lineno, "?"))
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
        ('handler = getattr(self, f"_on_{event.type}", None)', [(1, "?")]),
        ("class W:\n    def __getattr__(self, name): ...", [(2, "__getattr__")]),
        ("value = getattr(args, name)", []),
        ("value = workspace.before_change", []),
    ],
)
def test_the_scan_sees_a_lookup_by_name(source: str, expected: list[tuple[int, str]]) -> None:
    assert discoveries(ast.parse(source)) == expected
