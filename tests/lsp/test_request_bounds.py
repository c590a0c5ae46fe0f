"""Which setting bounds which request Rein sends the editor, and that the
bounds are validated like every setting (the real server's behaviour past a
bound: tests/lsp/test_bounded_waits.py)."""

from __future__ import annotations

import pytest

from rein.config import load_config
from rein.harness.errors import ConfigError
from rein.lsp.channel import request_bound
from rein.lsp.client_timeout import BOUND_SETTINGS, ClientTimeout


def test_each_client_method_has_its_configured_bound() -> None:
    config = load_config(
        {
            "gates": {"analyzer": {"requestTimeoutMs": 1_100}},
            "harness": {"clientRequestTimeoutMs": 2_200},
            "approval": {"timeoutMs": 3_300},
        }
    )
    bounds = {method: request_bound(config, method) for method in BOUND_SETTINGS}
    assert bounds == {
        "rein/diagnostics": 1.1,
        "workspace/applyEdit": 2.2,
        "rein/saveDocuments": 2.2,
        "rein/navigate": 2.2,
        "rein/confirm": 3.3,
        "rein/askUser": 3.3,
    }


def test_the_defaults_wait_long_for_a_person_and_briefly_for_the_editor() -> None:
    config = load_config({})
    assert request_bound(config, "rein/diagnostics") == 10.0
    assert request_bound(config, "workspace/applyEdit") == 30.0
    assert request_bound(config, "rein/confirm") == 600.0


@pytest.mark.parametrize(
    ("data", "key"),
    [
        pytest.param(
            {"gates": {"analyzer": {"requestTimeoutMs": 50}}},
            "gates.analyzer.requestTimeoutMs",
            id="analyzer",
        ),
        pytest.param(
            {"harness": {"clientRequestTimeoutMs": 0}},
            "harness.clientRequestTimeoutMs",
            id="client",
        ),
        pytest.param({"approval": {"timeoutMs": "long"}}, "approval.timeoutMs", id="approval"),
    ],
)
def test_a_bad_bound_is_named(data: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(data)


def test_a_timeout_names_the_method_the_bound_and_its_setting() -> None:
    error = ClientTimeout("workspace/applyEdit", 0.3)
    assert str(error) == (
        "the editor did not answer workspace/applyEdit within 0.3 s "
        "(harness.clientRequestTimeoutMs)"
    )
    assert isinstance(error, TimeoutError)
