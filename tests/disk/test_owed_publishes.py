"""An analyzer that never sends the diagnostics it owes (in process, no
analyzer runs): basedpyright in open-files mode never published django's
``contrib/sites/models.py`` and three importers again once they were
closed and opened again (the warm probes' ``sed`` case right after the
module rename of the same file). The
verdict's baseline of the command's change (``baselines_after_the_fact``,
``AnalyzerPool.snapshot_with``) waited for those files, its restore waited a
whole bound again, and every later wait of the session ran its bound too.
What is owed past the pool's bound is given up: the verdict's wait ends, the
snapshot is stale naming the server and the files, a later publish makes
them fresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from rein.analysis.command_baselines import baselines_after_the_fact
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.harness.ports import Mutation
from tests.fakes.lsp_client import RecordingLanguageClient

#: The verdict's bound in these tests: long enough that a wait running it
#: out fails the test's own bound (pytest's), short enough to be cheap if so.
BOUND_S = 5.0


async def _silent_pool(
    root: Path, *, owed_limit_ms: int, workspace_max_files: int = 0
) -> tuple[AnalyzerPool, _Analyzer]:
    """A large workspace's pool (file by file; not large when
    ``workspace_max_files`` is above its file count) whose basedpyright
    never publishes (nor answers pulls: it offers none)."""
    pool = AnalyzerPool(
        root,
        [DEFAULT_ANALYZERS[1]],
        workspace_max_files=workspace_max_files,
        quiet_ms=0,
        owed_limit_ms=owed_limit_ms,
    )
    await pool.prepare()
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", pool)
    analyzer.client = cast(Any, RecordingLanguageClient())
    analyzer.alive = True
    pool.analyzers = [analyzer]
    pool._started.set()
    return pool, analyzer


async def test_diagnostics_never_sent_are_given_up_and_the_verdict_says_whose(
    tmp_path: Path,
) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def validate(x):\n    return x\n")
    (pkg / "b.py").write_text("from pkg.a import validate\n\nvalidate(1)\n")
    pool, analyzer = await _silent_pool(tmp_path, owed_limit_ms=50)
    # A command renamed the function (sed): seen after the fact.
    (pkg / "a.py").write_text("def check(x):\n    return x\n")
    pool.on_mutation(Mutation(1, ("pkg/a.py",), "external"))

    async def now(path: str) -> str | None:
        return pool.read(path)

    files, late, unknown = await baselines_after_the_fact(pool, {"pkg/a.py"}, {}, {}, now, BOUND_S)
    # No baseline could be taken: the file's errors all block (never a
    # pass); its importer's state before the run is unknown (not checked).
    assert (files, late, unknown) == ({}, {}, {"pkg/b.py"})
    # The verdict's wait (the gate's _verdict_snapshot) ends: what was owed
    # past the bound is given up, not owed for the rest of the session.
    assert await pool.wait_idle(BOUND_S)
    assert analyzer.awaiting == {}
    snap = await pool.snapshot(None)
    assert snap.stale
    assert snap.stale_reason == (
        "diagnostics are missing: "
        "basedpyright sent no diagnostics for pkg/a.py within 0.05 s; "
        "basedpyright sent no diagnostics for pkg/b.py within 0.05 s"
    )
    # It publishes after all: fresh again.
    for path in ("pkg/a.py", "pkg/b.py"):
        analyzer.on_publish(
            {
                "uri": (tmp_path / path).as_uri(),
                "version": analyzer.versions[path],
                "diagnostics": [],
            }
        )
    assert not (await pool.snapshot(None)).stale


async def test_showing_other_texts_and_restoring_them_wait_one_bound_together(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    # Analysed as a whole (a large workspace asks file by file instead:
    # tests/disk/test_shown_texts_answers.py).
    pool, analyzer = await _silent_pool(tmp_path, owed_limit_ms=600_000, workspace_max_files=1_000)
    analyzer.open("a.py")
    waits: list[float] = []
    wait_idle = pool.wait_idle

    async def recorded(timeout_s: float) -> bool:
        waits.append(timeout_s)
        return await wait_idle(timeout_s)

    pool.wait_idle = recorded  # type: ignore[method-assign]
    assert await pool.snapshot_with({"a.py": "x = 2\n"}, ["a.py"], 0.2) is None
    # The restore's wait had what was left of the bound, not a bound more.
    assert len(waits) == 2 and sum(waits) <= 0.2 + 1e-6
