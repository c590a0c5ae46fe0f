"""``rein bench``: the dispatcher from the command's arguments to each
benchmark, and the row printer they share."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rein.bench import core as bench

__all__ = ["ALL_TARGETS", "main", "print_rows", "run_target"]

ALL_TARGETS = ("core", "providers", "gates", "lsp", "checkpoints", "acp", "sandbox")


def main(args: argparse.Namespace) -> int:
    if args.what == "gates" and args.probes:
        from rein.bench.gates_probes import main_probes

        return main_probes(args)
    if args.what == "gates" and args.corpus:
        from rein.bench.gates_structural import main_corpus

        return main_corpus(args)
    if args.what == "tests":
        if not args.corpus:
            raise SystemExit("rein bench tests: only --corpus (seeded bugs in real projects)")
        from rein.bench.tests_corpus import main_tests

        return main_tests(args)
    if args.what == "navigation":
        if not args.corpus:
            raise SystemExit("rein bench navigation: only --corpus (references in real projects)")
        from rein.bench.navigation import main_navigation

        return main_navigation(args)
    if args.what == "core-one":
        n, _, extra = str(args.n).partition("+")
        print(json.dumps(bench.bench_core_one(int(n), features=extra == "features")))
        return 0
    targets = list(ALL_TARGETS) if args.what == "all" else [args.what]
    for target in targets:
        if target == "core":
            sizes = tuple(int(x) for x in args.n.split(",")) if args.n else bench.CORE_SIZES
            print_rows(
                "core: scripted turns, one read_file call each", bench.bench_core(sizes), args.json
            )
        elif target == "lsp" and args.sessions:
            from rein.bench.lsp import bench_load

            rows = bench_load(args.sessions, args.turns)
            print_rows(
                f"lsp load: {args.sessions} sessions at once, mock server over HTTP",
                rows,
                args.json,
            )
        elif target == "acp":
            from rein.bench.acp import SAMPLES, bench_acp

            samples = int(args.n) if args.n and args.what == "acp" else SAMPLES
            print_rows(
                "acp: spawn to the initialize result, rein acp and rein serve",
                bench_acp(samples),
                args.json,
            )
        elif target == "sandbox":
            from rein.bench.sandbox import SAMPLES, bench_asks, bench_start, bench_walks

            samples = int(args.n) if args.n and args.what == "sandbox" else SAMPLES
            print_rows(
                f"sandbox: `true` started {samples} times, without and with",
                bench_start(samples),
                args.json,
            )
            print_rows(
                "sandbox: 30 typical commands, how often the person is asked",
                bench_asks(),
                args.json,
            )
            print_rows(
                "sandbox: Rein's bookkeeping per command (policy, git repositories below the root)",
                bench_walks(),
                args.json,
            )
        elif target == "isolated":
            from rein.bench.isolated import RUNS, bench_isolated

            runs = int(args.n) if args.n and args.what == "isolated" else RUNS
            print_rows(
                f"isolated: {runs} rein run --isolated at once on one repository, then rein apply",
                bench_isolated(runs),
                args.json,
            )
        elif target == "providers":
            from rein.bench.providers import bench_providers

            bench_providers(args.json)
        else:
            run_target(target, args.json)
    return 0


def run_target(target: str, as_json: bool) -> None:
    if target == "gates":
        from rein.bench.gates import bench_gates

        print_rows(
            "gates: analyzer verdict after the last publishDiagnostics", bench_gates(), as_json
        )
    elif target == "checkpoints":
        from rein.bench.checkpoints import bench_checkpoints

        print_rows(
            "checkpoints: one edit of a 9 KB file, without and with", bench_checkpoints(), as_json
        )
    elif target == "lsp":
        from rein.bench.lsp import bench_lsp

        print_rows("lsp: the server over stdio", bench_lsp(), as_json)
    else:
        raise SystemExit(f"unknown benchmark {target!r}")


def print_rows(title: str, rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        for row in rows:
            print(json.dumps(row))
        return
    print(title)
    if not rows:
        return
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r.get(k, ""))) for r in rows)) for k in keys}
    print("  ".join(k.rjust(widths[k]) for k in keys))
    for row in rows:
        print("  ".join(str(row.get(k, "")).rjust(widths[k]) for k in keys))
