"""``rein bench sandbox``: the start cost of the sandbox (a real
bubblewrap), and the asks of a scripted session with and without it (the
figures in docs/performance.md and docs/security.md)."""

from __future__ import annotations

from rein.bench.sandbox import SESSION, bench_asks, bench_start, bench_walks


def test_the_bench_times_true_without_and_with_the_sandbox() -> None:
    off, on = bench_start(samples=3)
    assert (off["sandbox"], on["sandbox"]) == ("off", "on")
    assert 0 < off["p50_ms"] <= off["p95_ms"] and 0 < on["p50_ms"] <= on["p95_ms"]
    assert on["added_p50_ms"] == round(on["p50_ms"] - off["p50_ms"], 2)


def test_the_session_asks_only_for_what_leaves_the_sandbox() -> None:
    # .git is read-only in the sandbox: git add leaves it (and writes only
    # the session's own temporary workspace when it does).
    commands = ("git status --short", "git add -A", "ls")
    sandboxed, asked = bench_asks(commands)
    assert sandboxed["asked"] == sandboxed["left_sandbox"] == 1
    assert asked["asked"] == 3 and asked["left_sandbox"] == 0
    assert len(SESSION) == 30


def test_the_bookkeeping_is_timed_per_workspace_size() -> None:
    rows = bench_walks(sizes=(0, 40), samples=2, settle_s=0)
    assert [(r["folders"], r["looks"]) for r in rows] == [
        (0, "worker thread"),
        (0, "event loop"),
        (40, "worker thread"),
        (40, "event loop"),
    ]
    assert all(0 < r["p50_ms"] <= r["p95_ms"] and r["samples"] == 2 for r in rows)
    assert all(r["first_ms"] > 0 and r["loop_stall_max_ms"] >= 0 for r in rows)
