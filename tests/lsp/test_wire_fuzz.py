"""Hypothesis drives the real ``rein serve`` over stdio: generated params for
every custom method and command (valid, or with one field broken), random
junk and odd headers before a well-formed request, and the listed defects.
A small count runs here; ``rein fuzz --cases N`` runs a long one
(docs/performance.md records a 10,000-case run)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from rein.fuzz import WireClient, frame, fuzz_workspace, run_case
from rein.fuzz_cases import Case, any_case, nested_case
from tests.forkserver import REIN

pytestmark = pytest.mark.e2e

#: The server's resident memory may grow this much over the run (kB).
RSS_GROWTH_BOUND_KB = 64_000


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


#: A nesting error is answered at once: well under the fuzz's 20 s bound.
NESTED_BOUND_S = 5.0


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=nested_case())
def test_a_request_nested_at_any_depth_is_answered_at_once_under_its_id(
    served: tuple[WireClient, list[int]], case: Case
) -> None:
    client, _ = served
    assert run_case(client, case, bound_s=NESTED_BOUND_S) == []


@pytest.mark.parametrize(
    ("depth", "where"),
    [
        pytest.param(129, "params", id="129-params"),
        pytest.param(3_990, "params", id="3990-params"),
        pytest.param(100_000, "params", id="100000-params"),
        pytest.param(100_000, "meta", id="100000-elsewhere"),
    ],
)
def test_deep_nesting_is_refused_before_parsing_naming_where(
    served: tuple[WireClient, list[int]], depth: int, where: str
) -> None:
    client, _ = served
    msg_id = f"deep-{depth}-{where}"
    value = b"[" * depth + b"]" * depth
    if where == "params":
        body = b'{"jsonrpc": "2.0", "id": "%s", "method": "rein/steer", "params": {"text": %s}}'
    else:
        body = b'{"jsonrpc": "2.0", "id": "%s", "method": "rein/steer", "meta": %s}'
    client.send_raw(frame(body % (msg_id.encode(), value)))
    answer = client.wait(msg_id, NESTED_BOUND_S)
    assert answer is not None, f"not answered under its id within {NESTED_BOUND_S} s"
    if where == "params":
        assert answer["error"] == {
            "code": -32602,
            "message": "params.text.0…: nested deeper than 128 levels",
        }
    else:
        assert answer["error"]["code"] == -32600
        assert answer["error"]["message"] == "meta.0.0…: nested deeper than 128 levels"


def test_the_server_is_alive_and_its_memory_bounded_after_the_fuzz(
    served: tuple[WireClient, list[int]],
) -> None:
    client, rss = served
    assert client.alive
    assert client.rss_kb() - rss[0] < RSS_GROWTH_BOUND_KB


def test_rein_fuzz_runs_the_cases_and_reports_them() -> None:
    out = subprocess.run(
        [*REIN, "fuzz", "--cases", "8", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["cases"] == 8
    assert report["failures"] == 0 and report["alive"] is True
    assert report["rss_before_kb"] > 0 and report["rss_after_kb"] > 0
