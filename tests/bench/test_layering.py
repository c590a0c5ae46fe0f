"""The benchmarks are measurement, not part of any host: nothing under
server/rein but ``rein.cli`` and the benchmarks themselves imports them."""

from __future__ import annotations

from tests.test_import_graph import import_graph


def _is_bench(module: str) -> bool:
    return module == "rein.bench" or module.startswith("rein.bench.")


def test_only_the_cli_imports_the_benchmarks() -> None:
    graph = import_graph()
    assert "rein.bench.cli" in graph["rein.cli"]
    importers = {
        f"{source} -> {target} (line {line})"
        for source, edges in graph.items()
        if source != "rein.cli" and not _is_bench(source)
        for target, line in edges.items()
        if _is_bench(target)
    }
    assert not importers, "benchmarks imported outside rein.cli:\n" + "\n".join(sorted(importers))


def test_every_benchmark_module_is_in_the_bench_package() -> None:
    stray = [m for m in import_graph() if "bench" in m.rpartition(".")[2] and not _is_bench(m)]
    assert not stray, f"benchmark modules outside rein/bench/: {stray}"
