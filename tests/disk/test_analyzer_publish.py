"""What the pool keeps of an analyzer's publishDiagnostics (in process, no
analyzer runs): an unchanged publish keeps the same objects, which the
analyzer gate counts on to skip files nothing changed in."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, spec_of
from rein.disk.analyzers import AnalyzerPool
from rein.harness.analyzer_servers import PRESETS


def _publish(root: Path, message: str, version: int | None = None) -> dict[str, Any]:
    return {
        "uri": (root / "pkg" / "m.py").as_uri(),
        "version": version,
        "diagnostics": [
            {
                "range": {
                    "start": {"line": 2, "character": 4},
                    "end": {"line": 2, "character": 9},
                },
                "severity": 1,
                "code": "reportUndefinedVariable",
                "source": "basedpyright",
                "message": message,
            }
        ],
    }


def test_an_unchanged_publish_keeps_the_same_diagnostics_and_a_changed_one_replaces_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    pool = AnalyzerPool(tmp_path)
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)

    analyzer.on_publish(_publish(tmp_path, '"nmae" is not defined'))
    first = analyzer.diagnostics["pkg/m.py"]
    assert [(d.path, d.line, d.message) for d in first] == [
        ("pkg/m.py", 2, '"nmae" is not defined')
    ]

    analyzer.on_publish(_publish(tmp_path, '"nmae" is not defined'))
    again = analyzer.diagnostics["pkg/m.py"]
    assert again is first

    analyzer.on_publish(_publish(tmp_path, '"name2" is not defined'))
    changed = analyzer.diagnostics["pkg/m.py"]
    assert [d.message for d in changed] == ['"name2" is not defined']

    # after the file's diagnostics were dropped, the same publish is converted again
    analyzer.diagnostics.clear()
    analyzer.on_publish(_publish(tmp_path, '"name2" is not defined'))
    assert [d.message for d in analyzer.diagnostics["pkg/m.py"]] == ['"name2" is not defined']


def test_a_uri_outside_the_workspace_is_not_the_pools_and_stays_so(tmp_path: Path) -> None:
    pool = AnalyzerPool(tmp_path / "ws")
    outside = (tmp_path / "other.py").as_uri()
    assert pool.relative(outside) is None
    assert pool.relative(outside) is None
    inside = (tmp_path / "ws" / "a" / "b.py").as_uri()
    assert pool.relative(inside) == "a/b.py"
    assert pool.relative("untitled:Untitled-1") is None


def _go_publish(root: Path, line: int, message: str) -> dict[str, Any]:
    """gopls 0.5's publish, sometimes without a version."""
    return {
        "uri": (root / "main.go").as_uri(),
        "diagnostics": [
            {
                "range": {
                    "start": {"line": line, "character": 0},
                    "end": {"line": line, "character": 5},
                },
                "severity": 2,
                "source": "printf",
                "message": message,
            }
        ],
    }


def test_a_server_publishing_in_unversioned_passes_is_done_only_after_its_settle_period(
    tmp_path: Path,
) -> None:
    """Debian's gopls 0.5 publishes a change twice, the second time with its
    vet findings, 0.1-0.5 s later and sometimes unversioned. The first
    publish answers the change (no version to wait for), so the pool's quiet
    period alone would take the first for the verdict."""
    (tmp_path / "main.go").write_text("package main\n")
    pool = AnalyzerPool(tmp_path, quiet_ms=150)
    (config,) = [p for p in PRESETS if p.name == "gopls"]
    spec = spec_of(config)
    assert spec.settle_s >= 0.5
    analyzer = _Analyzer(spec, "gopls", pool)
    analyzer.alive = True
    analyzer.awaiting["main.go"] = 2

    analyzer.on_publish(_go_publish(tmp_path, 3, "the old text's vet finding"))
    assert analyzer.awaiting == {}
    first = analyzer.last_activity
    # Past the pool's quiet period, not past the preset's settle period.
    assert not analyzer.idle(pool.quiet_s, first + 0.3)
    assert analyzer.busy_until(pool.quiet_s) == first + spec.settle_s

    analyzer.on_publish(_go_publish(tmp_path, 1, "the new text's vet finding"))
    second = analyzer.last_activity
    assert not analyzer.idle(pool.quiet_s, second + spec.settle_s - 0.05)
    assert analyzer.idle(pool.quiet_s, second + spec.settle_s)
    assert [d.line for d in analyzer.diagnostics["main.go"]] == [1]

    # A server without a settle period is done after the pool's quiet period.
    plain = _Analyzer(replace(spec, settle_s=0.0), "gopls", pool)
    plain.alive = True
    plain.on_publish(_go_publish(tmp_path, 3, "a finding"))
    assert plain.idle(pool.quiet_s, plain.last_activity + 0.3)


class TsClient:
    """typescript-language-server as the analyzer sees it: didChange, and
    tsserver's answers through ``typescript.tsserverRequest``."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.semantic_line = 3

    def text_document_did_change(self, params: Any) -> None: ...

    def text_document_did_save(self, params: Any) -> None: ...

    async def workspace_execute_command_async(self, params: Any) -> dict[str, Any]:
        command, args = params.arguments
        self.asked.append((command, Path(args["file"]).name))
        body = []
        if command == "semanticDiagnosticsSync":
            at = {"line": self.semantic_line, "offset": 1}
            body = [{"start": at, "end": at, "text": "Cannot find name 'x'.", "code": 2304,
                     "category": "error"}]  # fmt: skip
        return {"success": True, "body": body}


async def test_the_typescript_preset_asks_tsserver_for_every_open_file_after_a_change(
    tmp_path: Path,
) -> None:
    """typescript-language-server's first publish after a change can carry
    the old text's semantic findings (it publishes pass by pass, without a
    version): the preset asks tsserver instead, for the changed file and
    every other open one (the change may break them), and its publishes
    change nothing."""
    for name in ("a.ts", "b.ts"):
        (tmp_path / name).write_text("x\n")
    pool = AnalyzerPool(tmp_path)
    (config,) = [p for p in PRESETS if p.name == "typescript"]
    spec = spec_of(config)
    assert spec.tsserver
    analyzer = _Analyzer(spec, "typescript-language-server", pool)
    client = TsClient()
    analyzer.client = client  # type: ignore[assignment]
    analyzer.alive = analyzer.pull = True
    analyzer.versions = {"a.ts": 1, "b.ts": 1}

    client.semantic_line = 5
    analyzer.change("a.ts", "\n\nx\n")
    assert analyzer.awaiting == {"a.ts": 2, "b.ts": 1}
    await asyncio.gather(*analyzer.pulls.out)
    assert analyzer.awaiting == {}
    assert sorted(client.asked) == [
        ("semanticDiagnosticsSync", "a.ts"),
        ("semanticDiagnosticsSync", "b.ts"),
        ("syntacticDiagnosticsSync", "a.ts"),
        ("syntacticDiagnosticsSync", "b.ts"),
    ]
    (found,) = analyzer.diagnostics["a.ts"]
    assert (found.line, found.code, found.source, found.severity) == (4, "2304", "typescript", 1)
    # A stale publish (the old text's semantic pass) is not taken.
    analyzer.on_publish(
        {
            "uri": (tmp_path / "a.ts").as_uri(),
            "diagnostics": [_publish(tmp_path, "old")["diagnostics"][0]],
        }
    )
    assert [d.line for d in analyzer.diagnostics["a.ts"]] == [4]


async def test_a_typescript_pull_failing_every_attempt_leaves_the_file_unanswered_not_owed(
    tmp_path: Path,
) -> None:
    """tsserver answering every attempt with an error (not a timeout): the
    file is not owed for ever, the snapshot says it is stale, and why."""
    (tmp_path / "a.ts").write_text("x\n")
    pool = AnalyzerPool(tmp_path)
    (config,) = [p for p in PRESETS if p.name == "typescript"]
    analyzer = _Analyzer(spec_of(config), "typescript-language-server", pool)

    class Failing(TsClient):
        async def workspace_execute_command_async(self, params: Any) -> dict[str, Any]:
            return {"success": False, "message": "No Project."}

    analyzer.client = Failing()  # type: ignore[assignment]
    analyzer.alive = analyzer.pull = True
    analyzer.versions = {"a.ts": 1}
    analyzer.change("a.ts", "y\n")
    assert analyzer.awaiting == {"a.ts": 2}
    await asyncio.gather(*analyzer.pulls.out)
    assert analyzer.awaiting == {}
    assert analyzer.unanswered["a.ts"].startswith("typescript: tsserver's ")
    assert "No Project." in analyzer.unanswered["a.ts"]


def test_a_publish_read_after_the_process_exited_is_dropped(tmp_path: Path) -> None:
    # Written before the analyzer died, read after its exit was handled: the
    # crash cleared what it had said, and the late publish put it back, so a
    # snapshot showed a dead analyzer's diagnostics as if it had looked.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    analyzer.on_publish(_publish(tmp_path, '"nmae" is not defined'))
    assert [d.message for d in analyzer.diagnostics["pkg/m.py"]] == ['"nmae" is not defined']
    analyzer._stopping = True  # the pool is not told here: no restart
    anyio.run(analyzer.on_exit, -9)
    analyzer.diagnostics.clear()  # as the pool's crash handling does
    analyzer.on_publish(_publish(tmp_path, '"nmae" is not defined'))
    assert analyzer.diagnostics == {}
