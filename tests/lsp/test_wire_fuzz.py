"""Hypothesis drives the real ``rein serve`` over stdio: generated params for
every custom method and command (valid, or with one field broken), random
junk and odd headers before a well-formed request, and the listed defects.
A small count runs here; ``rein fuzz --cases N`` runs a long one
(docs/performance.md records a 10,000-case run)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from rein.fuzz import WireClient, fuzz_workspace, run_case
from rein.fuzz_cases import Case, any_case

pytestmark = pytest.mark.e2e

#: The server's resident memory may grow this much over the run (kB).
RSS_GROWTH_BOUND_KB = 150_000


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WireClient, list[int]]]:
    client = fuzz_workspace(tmp_path_factory.mktemp("fuzz"))
    client.start()
    rss = [client.rss_kb()]
    yield client, rss
    client.close()


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=any_case())
def test_every_case_is_answered_in_bound_and_in_step(
    served: tuple[WireClient, list[int]], case: Case
) -> None:
    client, _ = served
    assert run_case(client, case, bound_s=20.0) == []


def test_the_server_is_alive_and_its_memory_bounded_after_the_fuzz(
    served: tuple[WireClient, list[int]],
) -> None:
    client, rss = served
    assert client.alive
    assert client.rss_kb() - rss[0] < RSS_GROWTH_BOUND_KB


def test_rein_fuzz_runs_the_cases_and_reports_them() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rein", "fuzz", "--cases", "8", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["cases"] == 8
    assert report["failures"] == 0 and report["alive"] is True
    assert report["rss_before_kb"] > 0 and report["rss_after_kb"] > 0
