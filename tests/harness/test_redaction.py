"""The redactor (issue 17): known secret values and common key shapes."""

from __future__ import annotations

import logging
import sys

import pytest

from rein.harness.redaction import REDACTED, RedactingFilter, Redactor
from rein.process.environment import child_environment, is_secret_name, remember_secret_name


def test_a_remembered_value_is_replaced_wherever_it_appears() -> None:
    r = Redactor()
    r.remember("hunter2-local-key")
    assert r.redact("a hunter2-local-key b hunter2-local-key") == f"a {REDACTED} b {REDACTED}"
    r.remember("short")  # too short to be treated as a secret
    assert r.redact("a short word") == "a short word"


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnop0123456789",
        "sk-ant-api03-abcdefghijklmnop0123",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_" + "a" * 50,
        "xoxb-1234567890-abcdef",
        "AKIAABCDEFGHIJKLMNOP",
        "AIza" + "b" * 35,
    ],
)
def test_key_shapes_are_redacted(secret: str) -> None:
    assert Redactor().redact(f"key={secret}!") == f"key={REDACTED}!"


def test_a_bearer_token_keeps_its_scheme() -> None:
    text = "Authorization: Bearer abc.DEF-ghi_jkl/mno+pqr=="
    assert Redactor().redact(text) == f"Authorization: Bearer {REDACTED}"


def test_text_without_secrets_is_returned_unchanged() -> None:
    text = "def ask(): return 'sk-' + task_id  # Bearer of news"
    assert Redactor().redact(text) == text


def test_the_log_filter_redacts_the_formatted_message_and_the_traceback() -> None:
    record = logging.LogRecord(
        "pygls.protocol",
        logging.DEBUG,
        __file__,
        1,
        "Sending %s",
        ("sk-ant-x0123456789abcdefgh",),
        None,
    )
    try:
        raise RuntimeError("token sk-proj-0123456789abcdefghij")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    assert record.getMessage() == f"Sending {REDACTED}"
    assert record.exc_text is not None and "sk-proj" not in record.exc_text
    assert REDACTED in record.exc_text


def test_a_childs_environment_has_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_KEY_VAR", "v1")  # a name that does not look secret
    monkeypatch.setenv("OPENAI_API_KEY", "v2")
    monkeypatch.setenv("GITHUB_TOKEN", "v3")
    monkeypatch.setenv("aws_secret_access_key", "v4")
    monkeypatch.setenv("NPM_TOKEN", "v5")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    remember_secret_name("MY_PROVIDER_KEY_VAR")  # a provider reads its key from it
    env = child_environment({"EXTRA": "1"}, pass_env=["NPM_TOKEN"])
    for name in ("MY_PROVIDER_KEY_VAR", "OPENAI_API_KEY", "GITHUB_TOKEN", "aws_secret_access_key"):
        assert name not in env and is_secret_name(name)
    assert env["NPM_TOKEN"] == "v5" and env["EXTRA"] == "1"
    assert env["TOKENIZERS_PARALLELISM"] == "false" and "PATH" in env


def test_a_childs_environment_has_no_xdist_worker_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Rein in a pytest-xdist worker (its own suite): a child pytest took
    # itself for a worker (the tests gate's recorder skipped its early start).
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "abc")
    env = child_environment()
    assert not {k for k in env if k.startswith("PYTEST_XDIST_")}


def test_the_written_out_prefilter_knows_every_key_shapes_prefix() -> None:
    """The prefilter's substring checks are written out (no generator, for
    a short text such as an analyzer's message): each shape's prefix is
    among them, so none goes unredacted."""
    from rein.harness.redaction import _PREFIXES, _may_hold_a_shape

    for prefix in _PREFIXES:
        assert _may_hold_a_shape(f"x {prefix} y"), prefix
    assert not _may_hold_a_shape("Cannot access attribute for class Widget")
