"""What the analyzers line says (issue 35 item 3): each running server
with its languages and version, what was not found, and the languages the
workspace has that nothing analyses."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from rein.config import ReinConfig
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec
from rein.disk.pool_status import describe, languages, not_analysed_text, server_version
from rein.hosting.workspace_host import WorkspaceHost

TS = AnalyzerSpec(
    "typescript",
    ("typescript-language-server", "--stdio"),
    frozenset({".ts", ".tsx", ".js"}),
    language_ids={".ts": "typescript", ".tsx": "typescriptreact", ".js": "javascript"},
    note="the project's TypeScript",
)


def running(spec: AnalyzerSpec, version: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(spec=spec, alive=True, version=version, failure=None)


def test_languages_are_named_by_language_id() -> None:
    assert languages(TS) == "typescript, javascript"
    assert languages(DEFAULT_ANALYZERS[0]) == "python"


def test_describe_names_servers_languages_versions_and_the_missing() -> None:
    pool = SimpleNamespace(
        specs=[DEFAULT_ANALYZERS[0], TS, DEFAULT_ANALYZERS[1]],
        missing=["basedpyright"],
        failed=[],
        analyzers=[running(DEFAULT_ANALYZERS[0], "0.6.1"), running(TS, "5.3.0")],
    )
    assert describe(pool) == (  # type: ignore[arg-type]
        "ruff 0.6.1 (python), typescript 5.3.0 (typescript, javascript; the project's "
        "TypeScript); basedpyright (basedpyright-langserver) was not found"
    )


def test_not_analysed_counts_files() -> None:
    assert not_analysed_text({}) is None
    assert (
        not_analysed_text({".java": 1, ".rs": 3}) == "not analysed: .java (1 file), .rs (3 files)"
    )


def test_the_hosts_line_adds_the_languages_nothing_analyses(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    (tmp_path / "src").mkdir()
    for name in ("a.rs", "b.rs", "c.rs", "d.go"):
        (tmp_path / "src" / name).write_text("\n")
    (tmp_path / "README.md").write_text("not code\n")
    host = WorkspaceHost(tmp_path, ReinConfig(), lambda _config: None, analyzers=(), watch=False)  # type: ignore[arg-type,return-value]
    host.pool.analyzers = [running(DEFAULT_ANALYZERS[0], "0.6.1")]  # type: ignore[list-item]
    host.pool._started.set()  # the stand-in above is what started
    assert host.analyzers_line() == (
        "analyzers: ruff 0.6.1 (python); not analysed: .go (1 file), .rs (3 files)"
    )


def test_a_servers_version_is_its_release_not_its_build_information() -> None:
    """gopls sends its build information as JSON in serverInfo.version: the
    analyzers line printed all of it ('gopls {"GoVersion":"go1.19.5",...}');
    clangd a sentence with its platform."""
    build = '{"GoVersion":"go1.19.5","Path":"golang.org/x/tools/gopls","Version":"v0.16.2"}'
    assert server_version({"name": "gopls", "version": build}) == "v0.16.2"
    assert server_version({"name": "gopls", "version": '{"GoVersion":"go1.19.5"}'}) is None
    assert server_version({"name": "ruff", "version": "0.6.1"}) == "0.6.1"
    clangd = "Debian clangd version 14.0.6 linux+grpc x86_64-pc-linux-gnu"
    assert server_version({"name": "clangd", "version": clangd}) == "14.0.6"
    assert server_version({"name": "x"}) is None
    assert server_version(None) is None
