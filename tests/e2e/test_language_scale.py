"""A workspace over ``gates.analyzer.workspaceMaxFiles`` with the real
typescript-language-server and gopls (issue 35 item 4): every server, not
only basedpyright, opens nothing at start; a change opens the changed file
with its importers (TypeScript's and Go's import graphs,
:mod:`rein.disk.importers`) before it is made, so the importer's old error
does not block and the break the change causes there does; once validated,
what was opened is closed again. The limit is set small; the projects are
small (one per language, one session each)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.config import load_config
from rein.harness.analyzer_servers import PRESETS
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

TOOLS = Path(os.environ.get("REIN_TOOLS") or Path(__file__).resolve().parents[2] / ".tools")

TS = {
    "package.json": '{"name": "shop", "version": "1.0.0"}\n',
    "tsconfig.json": '{"compilerOptions": {"strict": true, "baseUrl": "src"}}\n',
    "src/price.ts": "export function price(n: number): number {\n  return n * 2;\n}\n",
    # The importer, through baseUrl, with an error of its own already.
    "src/cart/total.ts": (
        'import { price } from "price";\n\n'
        "export const total: number = price(3);\n"
        'export const label: number = "old error";\n'
    ),
    "src/unrelated.ts": 'export const broken: number = "never opened";\n',
}
GO = {
    "go.mod": "module example.com/shop\n\ngo 1.19\n",
    "price/price.go": "package price\n\nfunc Of(n int) int {\n\treturn n * 2\n}\n",
    # The importer, with an error of its own already.
    "cmd/shop/main.go": (
        'package main\n\nimport "example.com/shop/price"\n\n'
        'func main() {\n\t_ = price.Of(3)\n\tvar old int = "old error"\n\t_ = old\n}\n'
    ),
    "other/other.go": 'package other\n\nvar Broken int = "never opened"\n',
}
CASES = {
    "typescript": (
        TS,
        "src/price.ts",
        "price(n: number)",
        "price(n: number, tax: number)",
        ("src/cart/total.ts", 2, "2554"),
    ),
    "gopls": (
        GO,
        "price/price.go",
        "Of(n int)",
        "Of(n int, tax int)",
        ("cmd/shop/main.go", 5, "WrongArgCount"),
    ),
}


def edit(path: str, old: str, new: str) -> dict:
    call = {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}
    return {"tool_calls": [call]}


@pytest.mark.parametrize("preset", list(CASES))
async def test_a_large_workspace_opens_the_changed_file_with_its_importers_only(
    preset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_TOOL_CACHE", str(TOOLS))
    files, path, old, new, (importer, line, code) = CASES[preset]
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    servers = [{"name": p.name, "enabled": p.name == preset} for p in PRESETS]
    config = load_config({"gates": {"analyzer": {"workspaceMaxFiles": 2, "servers": servers}}})
    script = [
        edit(path, old, new),
        {"text": "done"},
        {"expect": {"last_message_contains": importer}, **edit(path, new, old)},
        {"text": "repaired"},
    ]
    events = EventLog()
    async with HeadlessSession(tmp_path, ReplayModel(script), config, watch=False) as session:
        await session.analyzers_started()
        pool = session.pool
        assert pool.large
        (analyzer,) = pool.analyzers
        assert analyzer.spec.name == preset and analyzer.file_by_file
        assert analyzer.versions == {}  # nothing opened at start
        opened: list[str] = []
        original_open = analyzer.open

        def recording_open(rel: str) -> None:
            opened.append(rel)
            original_open(rel)

        analyzer.open = recording_open  # type: ignore[method-assign]
        session.agent.subscribe(events)
        result = await session.prompt("add a tax")
        # Validated: what was opened for the change is closed again.
        assert analyzer.versions == {}
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    assert sorted(set(opened)) == sorted([path, importer])
    first, second = [r for r in events.of("gate_result") if r.gate == "analyzer"]
    # The break in the importer; not its old error, not the unrelated file.
    assert [(b.path, b.line, b.code) for b in first.blockers] == [(importer, line, code)], (
        first.blockers
    )
    assert (second.status, second.blockers) == ("passed", [])
