"""The typescript preset end to end: typescript-language-server (found on
PATH, in Rein's tool cache or next to Rein's Python) joins the analyzer
gate with no configuration on a workspace with .ts files; a seeded type
error is the one blocker among the project's pre-existing error, repaired,
then passed (issue 35)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rein.config import ReinConfig
from rein.disk.analyzer_discovery import locate
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

TSCONFIG = '{"compilerOptions": {"strict": true, "target": "es2020", "noEmit": true}, "include": ["src"]}\n'
APP = "export function greet(name: string): string {\n  return `hello ${name}`;\n}\n"
LEGACY = 'export const count: number = "three";\n'


def edit(old: str, new: str) -> dict:
    return {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "src/app.ts", "old_string": old, "new_string": new},
            }
        ]
    }


@pytest.fixture
def tsproj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Where make test installs the npm servers (scripts/install-language-servers.sh).
    tools = os.environ.get("REIN_TOOLS") or str(Path(__file__).resolve().parents[2] / ".tools")
    monkeypatch.setenv("REIN_TOOL_CACHE", tools)
    assert locate("typescript-language-server") is not None, (
        "typescript-language-server is not installed (make test installs it)"
    )
    root = tmp_path / "tsproj"
    (root / "src").mkdir(parents=True)
    (root / "tsconfig.json").write_text(TSCONFIG)
    (root / "src" / "app.ts").write_text(APP)
    (root / "src" / "legacy.ts").write_text(LEGACY)
    (root / "notes.rs").write_text("fn main() {}\n")
    return root


async def test_a_seeded_type_error_blocks_alone_and_its_repair_passes(tsproj: Path) -> None:
    script = [
        edit("return `hello ${name}`;", "return name.length;"),
        {"text": "done"},
        {"expect": {"last_message_contains": "error 2322"}, **edit("name.length", "name")},
        {"text": "fixed the return type"},
    ]
    model = ReplayModel(script)
    events = EventLog()
    async with HeadlessSession(tsproj, model, ReinConfig(), watch=False) as session:
        await session.analyzers_started()
        line = session.analyzers_line()
        session.agent.subscribe(events)
        result = await session.prompt("shorten the greeting")
    # No Python here: the typescript preset alone, with its languages.
    assert line.startswith("analyzers: typescript "), line
    assert "(typescript, javascript; TypeScript 5." in line, line
    assert " next to the server (the project has none))" in line, line
    assert line.endswith("; not analysed: .rs (1 file)"), line
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    repair = model.requests[2].messages[-1].content
    assert "src/app.ts:2:3 error 2322 (typescript): Type 'number' is not assignable" in repair, (
        repair
    )
    results = events.of("gate_result")
    assert all(b.path == "src/app.ts" for r in results for b in r.blockers)
    assert [r.passed for r in results if r.gate == "analyzer"] == [False, True]
