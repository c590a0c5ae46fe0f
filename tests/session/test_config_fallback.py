"""Configuration that fails safe (issue 17): an invalid value falls back
alone, to the last good value of its key or its default, and is reported
naming the key and the allowed values; every other setting stays as
configured. An invalid model endpoint setting never falls back to another
endpoint: no model can be built from it."""

from __future__ import annotations

from typing import Any

import pytest

from rein.config import ConfigIssue, ReinConfig, load_config, resolve_config
from rein.harness.errors import ConfigError
from rein.lsp.server import ReinServer
from rein.providers import create_model

LOCAL = "http://127.0.0.1:8123/v1"


def _configured() -> dict[str, Any]:
    """A section that sets something in every part."""
    return {
        "model": {"provider": "openai", "baseUrl": LOCAL, "model": "local-m", "apiKeyEnv": ""},
        "harness": {"maxRepairAttempts": 1, "toolExecution": "sequential"},
        "gates": {"analyzer": {"maxWaitMs": 900}, "runtime": {"command": "pytest -q"}},
        "approval": {"read": "ask", "write": "ask", "command": "allow"},
        "tools": {"grepBackend": "python", "disabled": ["ask_user"]},
        "autoRepair": "onSave",
        "storagePath": "/tmp/rein-store",
    }


def _only(issues: tuple[ConfigIssue, ...]) -> ConfigIssue:
    assert len(issues) == 1, issues
    return issues[0]


def test_an_invalid_approval_command_keeps_every_other_setting() -> None:
    section = _configured()
    section["approval"]["command"] = "always"
    resolved = resolve_config(section, None, "settings")
    expected = _configured()
    del expected["approval"]["command"]
    assert resolved.config == load_config(expected)
    assert resolved.config.approval.command == "sandboxed"  # its default, nothing else reset
    assert (
        resolved.config.approval.write == "ask" and resolved.config.harness.max_repair_attempts == 1
    )
    assert resolved.config.model.resolved_base_url() == LOCAL
    issue = _only(resolved.issues)
    assert issue.key == "approval.command"
    assert issue.message("settings") == (
        "invalid settings: rein.approval.command: Input should be 'allow', 'ask', 'deny' or "
        "'sandboxed'; got 'always'; using the default 'sandboxed'"
    )


@pytest.mark.parametrize(
    ("model", "key"),
    [
        pytest.param(
            {"provider": "openai-compatible", "baseUrl": LOCAL}, "model.provider", id="provider"
        ),
        pytest.param(
            {"provider": "openai", "baseUrl": "127.0.0.1:8123/v1"}, "model.baseUrl", id="no-scheme"
        ),
        pytest.param(
            {"provider": "openai", "baseUrl": "ftp://127.0.0.1/v1"}, "model.baseUrl", id="ftp"
        ),
        pytest.param({"baseUrl": LOCAL, "apiKeyEnv": 7}, "model.apiKeyEnv", id="key-env"),
        pytest.param("gpt-4.1", "model", id="not-an-object"),
    ],
)
def test_an_invalid_endpoint_setting_never_points_at_the_public_endpoint(
    model: Any, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    # Neither from the defaults nor from a last good configuration that had one.
    for last_good in (None, ReinConfig(), load_config({"model": {"provider": "anthropic"}})):
        resolved = resolve_config({"model": model, "approval": {"command": "allow"}}, last_good)
        config = resolved.config
        assert config.approval.command == "allow"  # the rest is applied
        issue = _only(resolved.issues)
        assert issue.key == key and "no model request is sent" in issue.instead
        assert config.model.unusable is not None and f"rein.{key}:" in config.model.unusable
        with pytest.raises(ConfigError, match=f"rein\\.{key}:") as caught:
            config.model.resolved_base_url()
        assert "api.openai.com" not in str(caught.value)
        with pytest.raises(ConfigError, match="No model request is sent"):
            create_model(config.model)
        # Copies of the configuration stay unusable.
        copied = config.model_copy(update={"storage_path": "/elsewhere"})
        with pytest.raises(ConfigError):
            copied.model.resolved_base_url()
    assert "'openai', 'anthropic', 'replay' or 'vscode-lm'" in (
        resolve_config({"model": {"provider": "gemini"}}).config.model.unusable or ""
    )


def test_last_good_per_key_across_two_changes() -> None:
    first = resolve_config(
        {"approval": {"command": "allow"}, "harness": {"maxRepairAttempts": 5}}, None
    )
    assert first.issues == () and first.config.approval.command == "allow"
    second = resolve_config(
        {"approval": {"command": "sometimes"}, "harness": {"maxRepairAttempts": 1}},
        first.config,
    )
    assert second.config.approval.command == "allow"  # its last good value
    assert second.config.harness.max_repair_attempts == 1  # the new value of another key
    assert _only(second.issues).instead == "using the last good value 'allow'"
    # Still invalid: the last good value is kept; another key changed meanwhile.
    third = resolve_config({"approval": {"command": "sometimes", "write": "deny"}}, second.config)
    assert third.config.approval.command == "allow" and third.config.approval.write == "deny"
    assert third.config.harness.max_repair_attempts == 3  # unset now: its default
    # Fixed, then removed: the default again.
    assert resolve_config({}, third.config).config.approval.command == "sandboxed"


@pytest.mark.parametrize(
    ("bad", "key", "kept"),
    [
        pytest.param(
            {"gates": {"custom": [{"name": "t", "command": "make"}, {"name": "x"}]}},
            "gates.custom",
            lambda c: [g.command for g in c.gates.custom] == ["pytest"],
            id="an-item-of-a-list",
        ),
        pytest.param(
            {"gates": {"custom": [{"name": "x"}, {"command": 5}]}},
            "gates.custom",
            lambda c: [g.command for g in c.gates.custom] == ["pytest"],
            id="two-bad-items-of-one-list",
        ),
        pytest.param(
            {"harness": 5},
            "harness",
            lambda c: c.harness.max_repair_attempts == 1,
            id="a-section-not-an-object",
        ),
        pytest.param(
            {"gates": {"dependencies": {"commands": {"package.json": 3}}}},
            "gates.dependencies.commands",
            lambda c: c.gates.dependencies.commands == {"pyproject.toml": "uv sync"},
            id="an-entry-of-a-mapping",
        ),
        pytest.param(
            {"gates": {"preview": {"readiness": {"url": "http://example.com/"}}}},
            "gates.preview.readiness.url",
            lambda c: c.gates.preview.readiness.url == "http://127.0.0.1:8000/",
            id="a-nested-leaf",
        ),
    ],
)
def test_the_setting_falls_back_whole_and_alone(bad: dict[str, Any], key: str, kept: Any) -> None:
    good = load_config(
        {
            "harness": {"maxRepairAttempts": 1},
            "gates": {
                "custom": [{"name": "tests", "command": "pytest"}],
                "dependencies": {"commands": {"pyproject.toml": "uv sync"}},
                "preview": {"readiness": {"url": "http://127.0.0.1:8000/", "timeoutMs": 500}},
            },
        }
    )
    section = {**bad, "autoRepair": "onSave"}
    resolved = resolve_config(section, good)
    assert _only(resolved.issues).key == key
    assert kept(resolved.config)
    assert resolved.config.auto_repair == "onSave"


def test_an_unknown_key_is_reported_and_ignored() -> None:
    resolved = resolve_config({"harness": {"maxRepairAttemps": 9, "maxRepairAttempts": 2}})
    issue = _only(resolved.issues)
    assert (issue.key, issue.instead) == ("harness.maxRepairAttemps", "ignored")
    assert resolved.config.harness.max_repair_attempts == 2


def test_a_section_that_is_not_an_object_keeps_the_last_good_settings() -> None:
    good = load_config({"approval": {"command": "allow"}})
    resolved = resolve_config(["not", "a", "section"], good)
    assert resolved.config is good and _only(resolved.issues).key == "(root)"


def test_the_strict_loader_names_every_invalid_key() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(
            {"model": {"provider": "openai-compatible"}, "approval": {"command": "x"}}, "f.yaml"
        )
    assert caught.value.key == "model.provider"
    assert str(caught.value) == (
        "invalid f.yaml: rein.model.provider: Input should be 'openai', 'anthropic', 'replay' "
        "or 'vscode-lm'; got 'openai-compatible' (also invalid: rein.approval.command)"
    )


def test_a_long_value_is_quoted_bounded() -> None:
    issue = _only(resolve_config({"approval": {"command": "x" * 10_000}}).issues)
    assert len(issue.message()) < 300


def test_the_server_reports_each_invalid_key_once_and_keeps_the_rest() -> None:
    server = ReinServer()
    shown: list[str] = []
    server.window_show_message = lambda params: shown.append(params.message)  # type: ignore[method-assign]
    server.set_initialization_options({"storagePath": "/tmp/s"})
    assert server.apply_configuration(
        {"approval": {"command": "allow"}, "model": {"baseUrl": LOCAL}}, "settings"
    )
    bad = {"approval": {"command": "never"}, "model": {"baseUrl": LOCAL}, "autoRepair": "onSave"}
    for _ in range(2):
        assert not server.apply_configuration(bad, "settings")
    assert server.config.approval.command == "allow"
    assert server.config.auto_repair == "onSave" and server.config.storage_path == "/tmp/s"
    assert server.config.model.resolved_base_url() == LOCAL
    assert shown == [
        "Rein: invalid settings: rein.approval.command: Input should be 'allow', 'ask', "
        "'deny' or 'sandboxed'; got 'never'; using the last good value 'allow'"
    ]
    # Fixed, then broken again: reported again.
    assert server.apply_configuration({"approval": {"command": "deny"}}, "settings")
    assert not server.apply_configuration(bad, "settings")
    assert len(shown) == 2 and server.config.approval.command == "deny"
