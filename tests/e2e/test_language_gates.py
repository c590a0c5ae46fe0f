"""The analyzer gate with real language servers of other languages than
Python, headless (issue 35 item 5): TypeScript (typescript-language-server
with typescript 5.9), Go (gopls), C (clangd) and shell
(bash-language-server with shellcheck), each on a real project with
pre-existing diagnostics (rein.bench.language_projects). A replayed model
seeds one error in one file; the gate blocks on exactly that error, not on
the project's own; the model repairs it; the run passes.

``make test`` installs the servers (scripts/install-language-servers.sh):
Debian's gopls, clangd and shellcheck, and npm's servers pinned in
``.tools/node_modules`` (or ``$REIN_TOOLS``)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rein.bench import language_projects as projects
from rein.config import ReinConfig, load_config
from rein.disk.analyzer_discovery import workspace_specs
from rein.disk.analyzer_specs import find_executable
from rein.hosting.headless import HeadlessSession
from rein.providers.replay import ReplayModel
from tests.e2e.headless_gate import edit_turn, only_server, prompt_headless, write_workspace
from tests.fakes.events import EventLog

pytestmark = pytest.mark.e2e

TOOLS = Path(os.environ.get("REIN_TOOLS") or Path(__file__).resolve().parents[2] / ".tools")
NPM_BIN = TOOLS / "node_modules" / ".bin"

#: The presets the cases use (gates.analyzer.servers), found as a person's
#: Rein finds them: gopls and clangd on PATH, the npm servers in Rein's tool
#: cache (REIN_TOOL_CACHE: where make test installs them).
PRESETS = ("typescript", "gopls", "clangd", "bash")


def only(preset: str, severity: str) -> ReinConfig:
    """The configuration that runs just ``preset``'s server."""
    servers = only_server(preset)
    return load_config({"gates": {"analyzer": {"severity": severity, "servers": servers}}})


@dataclass(frozen=True)
class Case:
    spec: str
    make: Callable[[Path], Path]
    path: str
    old: str
    new: str
    #: The seeded error's source (the server's word), code, line (1-based)
    #: and a part of its message.
    source: str
    code: str
    line: int
    message: str
    #: The gate's severity: low enough that pre-existing findings would block
    #: if they were taken for new.
    severity: str = "error"


CASES = {
    "typescript": Case(
        "typescript",
        projects.typescript_project,
        "index.ts",
        "this.count = count;",
        "this.count = String(count);",
        "typescript",
        "2322",
        6,
        "Type 'string' is not assignable to type 'number'.",
    ),
    "go": Case(
        "gopls",
        projects.go_project,
        "cmd/dump/main.go",
        "os.Exit(1)",
        'os.Exit("1")',
        "compiler",
        "IncompatibleAssign",
        24,
        'cannot use "1" (untyped string constant) as int value in argument to os.Exit',
    ),
    "c": Case(
        "clangd",
        projects.c_project,
        "murmurhash3.c",
        "h1 ^= len;\n\n    h1 = fmix32(h1);",
        "h1 ^= length;\n\n    h1 = fmix32(h1);",
        "clang",
        "undeclared_var_use",
        77,
        "Use of undeclared identifier 'length'",
        severity="warning",
    ),
    "shell": Case(
        "bash",
        projects.shell_project,
        "clean.bash",
        "\texit 1\nfi\nexport GOROOT",
        "\texit 300\nfi\nexport GOROOT",
        "shellcheck",
        "SC2242",
        10,
        "Can only exit with status 0-255.",
        severity="warning",
    ),
}

SEVERITY = {"error": 1, "warning": 2}


@pytest.fixture(autouse=True)
def _tool_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REIN_TOOL_CACHE", str(TOOLS))


def test_every_preset_the_cases_use_is_found(tmp_path: Path, _tool_cache: None) -> None:
    for preset in PRESETS:
        (spec,) = [
            s
            for s in workspace_specs(tmp_path, only(preset, "error").gates.analyzer)
            if s.name == preset
        ] or [None]
        assert spec is not None and Path(spec.command[0]).is_absolute(), (
            f"{preset} was not found (make test installs it: scripts/install-language-servers.sh)"
        )
    assert find_executable("shellcheck") and find_executable("go")


@pytest.mark.parametrize("language", list(CASES))
async def test_a_seeded_error_is_the_one_blocker_then_repaired(
    language: str, tmp_path: Path
) -> None:
    case = CASES[language]
    root = case.make(tmp_path / language)
    script = [
        edit_turn(case.path, case.old, case.new),
        {"text": "done"},
        {
            "expect": {"last_message_contains": case.code},
            **edit_turn(case.path, case.new, case.old),
        },
        {"text": "repaired"},
    ]
    config = only(case.spec, case.severity)
    model = ReplayModel(script)
    events = EventLog()
    started = time.monotonic()
    async with HeadlessSession(root, model, config, watch=False) as session:
        await session.analyzers_started()
        assert [a.spec.name for a in session.pool.analyzers] == [case.spec], session.reports
        session.agent.subscribe(events)
        result = await session.prompt("change it")
        # The project's own findings, at the gate's severity or above, are
        # there again after the repair: they never blocked.
        after = await session.pool.snapshot()
    print(f"{language}: {time.monotonic() - started:.1f} s")
    assert result.status == "completed", result.error
    assert result.repair_attempts == 1
    verdicts = [r for r in events.of("gate_result") if r.gate == "analyzer"]
    assert [r.passed for r in verdicts] == [False, True]
    (blocker,) = verdicts[0].blockers
    assert (blocker.path, blocker.line, blocker.code) == (case.path, case.line - 1, case.code)
    assert case.message in blocker.message
    assert blocker.source == case.source
    pre_existing = [d for d in after.diagnostics if (d.severity or 1) <= SEVERITY[case.severity]]
    assert pre_existing, "the project has no pre-existing findings the gate could block on"
    assert not after.stale
    assert (root / case.path).read_text().count(case.old) >= 1
    assert case.new not in (root / case.path).read_text()


HEADER = "int push(int *v, int value);\n"
C_FILES = {
    "include/vec.h": f"#ifndef VEC_H\n#define VEC_H\n{HEADER}#endif\n",
    "src/vec.c": '#include "vec.h"\n\nint push(int *v, int value) {\n    *v = value;\n    return 0;\n}\n',
    "src/main.c": '#include "vec.h"\n\nint legacy(void) { return undefined_thing; }\n\n'
    "int main(void) {\n    int v;\n    return push(&v, 1);\n}\n",
}


async def test_a_changed_header_blocks_on_what_it_breaks_in_the_files_including_it(
    tmp_path: Path,
) -> None:
    """clangd reads an included header from the disk unless it runs with
    --use-dirty-headers: the gate's question 'are these errors there
    without the run's changes?' showed the header's old text in memory,
    clangd answered with the new one from disk, and a prototype that broke
    both files including it passed ('2 error(s) in unchanged files are
    there without the run's changes too')."""
    root = tmp_path / "c"
    write_workspace(root, C_FILES)
    commands = [
        {"directory": str(root), "file": f"src/{c}", "arguments": ["cc", "-Iinclude", "-c", c]}
        for c in ("vec.c", "main.c")
    ]
    (root / "compile_commands.json").write_text(json.dumps(commands))
    broken = "int push(int *v, int value, int times);\n"
    script = [
        edit_turn("include/vec.h", HEADER, broken),
        {"text": "done"},
        {"text": "giving up"},
    ]
    servers = only_server("clangd")
    config = load_config(
        {"harness": {"maxRepairAttempts": 1}, "gates": {"analyzer": {"servers": servers}}}
    )
    ran = await prompt_headless(root, script, config, "add a parameter")
    result = ran.result
    (verdict, *_) = ran.analyzer_gates()
    assert not verdict.passed, verdict.detail
    assert sorted((b.path, b.code) for b in verdict.blockers) == [
        ("src/main.c", "typecheck_call_too_few_args"),
        ("src/vec.c", "conflicting_types"),
    ]
    assert result.status != "completed"
