"""The files a cold run's changes can reach (their importers, transitively,
from the real import scan): only those are asked about the workspace as it
was before the run; a file with errors out of reach keeps them as
pre-existing, and the verdict says so (issue 32 item 7: that question shows
the analyzers the earlier texts and waits for two analyses of the
workspace)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

from rein.analysis import reach_verdict
from rein.analysis.gate import AnalyzerGate
from rein.disk.analyzer_specs import find_executable
from rein.disk.importers import ImportIndex
from rein.harness.gating.gates import GateContext, GatePipeline
from rein.harness.generations import MutationLog, TrackedWorkspace
from tests.analysis.test_gate_cold_start import OLD, TRANSITIVE, A, B, C, D, lines
from tests.disk.test_importers import INIT_FILES
from tests.fakes.diagnostics import ColdFakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.harness.test_gates_truth import diag


class _Reaching(ColdFakeDiagnostics):
    """Its closure is the real import scan's of the workspace's files now."""

    async def importer_closure(self, paths: Sequence[str]) -> Collection[str] | None:
        files = dict(self.texts_now())
        return ImportIndex(sorted(files), files.get).closure(paths)


async def _world() -> tuple[TrackedWorkspace, _Reaching, AnalyzerGate]:
    """pkg/b.py re-exports a.py's ``helper``, c.py uses it through b.py
    (two imports away), d.py imports nothing of them and has an old error."""
    workspace = TrackedWorkspace(
        FakeWorkspace({"pkg/a.py": A, "pkg/b.py": B, "pkg/c.py": C, "pkg/d.py": D}),
        MutationLog(),
    )
    source = _Reaching([OLD])
    source.importers = {"pkg/a.py": ["pkg/b.py"]}
    source.texts_now = lambda: workspace.inner.files  # type: ignore[attr-defined]
    gate = AnalyzerGate(source)
    gates = GatePipeline([gate])

    async def before_change(paths: tuple[str, ...]) -> None:
        await gates.before_change(paths, workspace)

    workspace.before_change(before_change)
    await gate.on_run_start(0)
    return workspace, source, gate


async def test_a_transitive_break_is_caught_and_files_out_of_reach_are_not_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """a.py's ``helper`` returns str now: c.py's use breaks (through b.py's
    re-export), caught as before; d.py's old error is out of reach: not
    asked about the workspace before the run (old: it was, with c.py). The
    closure's bound is set below its size: the verdict is the whole
    workspace's (within it, :mod:`tests.analysis.test_gate_reach`)."""
    monkeypatch.setattr(reach_verdict, "CLOSURE_BOUND", 2)
    workspace, source, gate = await _world()
    await workspace.write_text("pkg/a.py", A.replace("int", "str"))
    source.diagnostics = [OLD, TRANSITIVE]
    source.counterfactual = [OLD]
    source.workspace_analysed.set()
    outcome = await gate.check(GateContext(1, frozenset({"pkg/a.py"}), workspace))
    assert lines(outcome) == [("pkg/c.py", 0)], outcome.detail
    assert outcome.unverified is None
    asked = [line for line in source.log if line.startswith("snapshot_with")]
    assert asked and asked[0] == "snapshot_with pkg/a.py -> pkg/c.py"
    assert not any("pkg/d.py" in line for line in asked)
    assert "1 file(s) with errors outside what the changes can reach" in outcome.detail


async def test_with_a_deleted_file_gone_only_files_in_its_reach_are_not_checked() -> None:
    """A deleted file cannot be shown to the analyzers: c.py (in its reach)
    stays not checked; d.py's old error, out of reach, is pre-existing
    (old: both were not checked)."""
    workspace, source, gate = await _world()
    await workspace.delete("pkg/a.py")
    broken_b = diag("pkg/b.py", 0, 'Import "pkg.a" could not be resolved', code="I")
    source.diagnostics = [OLD, broken_b, TRANSITIVE]
    ctx = GateContext(1, frozenset({"pkg/a.py"}), workspace)
    assert "partial" in (await gate.check(ctx)).detail
    source.workspace_analysed.set()
    await gate.baseline_ready()
    outcome = await gate.check(ctx)
    assert lines(outcome) == [("pkg/b.py", 0)], outcome.detail
    assert outcome.unverified is not None
    assert "1 file(s) with errors not checked" in outcome.unverified
    assert "pkg/c.py" in outcome.unverified and "pkg/d.py" not in outcome.unverified


def _basedpyright(root: Path) -> dict[str, list[tuple[int, str]]]:
    """The command-line basedpyright's errors per file (path -> (line,
    message)) for ``root``."""
    exe = find_executable("basedpyright")
    assert exe is not None
    out = subprocess.run(
        [exe, "--outputjson"], cwd=root, capture_output=True, text=True, timeout=120
    )
    found: dict[str, list[tuple[int, str]]] = {}
    for d in json.loads(out.stdout)["generalDiagnostics"]:
        if d["severity"] == "error":
            path = Path(d["file"]).resolve().relative_to(root.resolve()).as_posix()
            found.setdefault(path, []).append((d["range"]["start"]["line"], d["message"]))
    return found


@pytest.mark.skipif(find_executable("basedpyright") is None, reason="needs basedpyright")
def test_what_the_closure_leaves_out_basedpyright_does_not_change(tmp_path: Path) -> None:
    """The closure counts a reached ``__init__`` only for the files
    importing from the package or binding its name
    (``tests/disk/test_importers.py``): on a real run, ``pkg/a.py``'s
    ``f`` returning ``str`` changes the errors of files in its closure only,
    though ``pkg/__init__.py`` rebinds ``other`` and ``g`` to ``f`` (``from
    pkg.other import g`` still means the module's ``g``); the files binding
    ``pkg`` or importing from it do change."""
    for path, text in INIT_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n')
    before = _basedpyright(tmp_path)
    (tmp_path / "pkg/a.py").write_text('def f() -> str:\n    return ""\n')
    after = _basedpyright(tmp_path)
    changed = {p for p in {*before, *after} if before.get(p) != after.get(p)}
    assert changed == {"app/binds.py", "app/binds_deep.py", "app/from_package.py"}, (before, after)
    closure = ImportIndex(INIT_FILES, INIT_FILES.get).closure(["pkg/a.py"])
    assert changed <= closure
    assert not {"app/from_module.py", "app/module_as.py", "app/from_deep.py"} & closure
