"""ModelConfig (camelCase on the wire) and the create_model factory."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from rein.harness.errors import ConfigError
from rein.harness.ports import Model
from rein.providers import ModelConfig, create_model
from rein.providers.anthropic import AnthropicModel
from rein.providers.openai import OpenAIModel
from rein.providers.replay import ReplayModel


def test_camel_case_on_the_wire_snake_case_in_python() -> None:
    wire = {
        "provider": "anthropic",
        "baseUrl": "http://127.0.0.1:1234/",
        "model": "claude-x",
        "apiKeyEnv": "MY_KEY",
        "maxTokens": 1000,
        "temperature": 0.3,
        "extraHeaders": {"X-Team": "a"},
        "maxRetries": 1,
        "streamIdleTimeout": 5,
        "requestTimeout": 7,
        "wireDump": "/tmp/d.jsonl",
    }
    config = ModelConfig.model_validate(wire)
    assert config.api_key_env == "MY_KEY" and config.max_tokens == 1000
    assert config.stream_idle_timeout == 5.0 and config.wire_dump == "/tmp/d.jsonl"
    assert config.resolved_base_url() == "http://127.0.0.1:1234"
    assert config.model_dump(by_alias=True, exclude_defaults=True) == {
        **wire,
        "streamIdleTimeout": 5.0,
        "requestTimeout": 7.0,
    }
    assert ModelConfig(max_retries=0, api_key_env="K").max_retries == 0  # by name too
    with pytest.raises(ValidationError, match="maxTokenz"):
        ModelConfig.model_validate({"maxTokenz": 5})
    with pytest.raises(ValidationError):
        ModelConfig.model_validate({"provider": "gemini"})


def test_defaults_follow_each_ecosystem(monkeypatch: pytest.MonkeyPatch) -> None:
    openai, anthropic = ModelConfig(provider="openai"), ModelConfig(provider="anthropic")
    assert openai.resolved_base_url() == "https://api.openai.com/v1"
    assert anthropic.resolved_base_url() == "https://api.anthropic.com"
    assert openai.resolved_api_key_env() == "OPENAI_API_KEY"
    assert anthropic.resolved_api_key_env() == "ANTHROPIC_API_KEY"
    assert openai.api_key() is None and openai.max_retries == 4
    assert openai.stream_idle_timeout == 60.0 and openai.wire_dump is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9000")
    assert openai.resolved_base_url() == "http://localhost:11434/v1"
    assert openai.api_key() == "sk-x"
    assert anthropic.resolved_base_url() == "http://127.0.0.1:9000"


def test_create_model_builds_each_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - text: hi\n")
    openai = create_model(ModelConfig(provider="openai", model="gpt"))
    anthropic = create_model(ModelConfig(provider="anthropic", model="claude"))
    replay = create_model(ModelConfig(provider="replay", script=str(script)))
    assert isinstance(openai, OpenAIModel) and openai.name == "gpt"
    assert isinstance(anthropic, AnthropicModel) and anthropic.name == "claude"
    assert isinstance(replay, ReplayModel) and replay.remaining == 1
    assert all(isinstance(m, Model) for m in (openai, anthropic, replay))
    with pytest.raises(ConfigError, match=r"model\.script"):
        create_model(ModelConfig(provider="replay"))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_missing_key_or_model_name_is_refused_before_any_request(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: a first run without a key went to the public endpoint and
    retried; now nothing is built, and the error names what to set."""
    variable = f"{provider.upper()}_API_KEY"
    with pytest.raises(ConfigError) as both:
        create_model(ModelConfig(provider=provider))  # type: ignore[arg-type]
    text = str(both.value)
    assert variable in text and "rein.model.apiKeyEnv" in text and "rein.model.model" in text
    assert "No request was sent" in text and "docs/providers.md" in text
    with pytest.raises(ConfigError, match="MY_KEY is not set") as key_only:
        create_model(ModelConfig(provider=provider, model="m", api_key_env="MY_KEY"))  # type: ignore[arg-type]
    assert "rein.model.model" not in str(key_only.value)
    # A server that needs no key ("") only needs the model's name.
    keyless = ModelConfig(provider=provider, api_key_env="", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    assert [m.split(":")[0] for m in keyless.missing()] == ["the model's name"]
    monkeypatch.setenv("MY_KEY", "k")
    assert ModelConfig(provider=provider, model="m", api_key_env="MY_KEY").missing() == []  # type: ignore[arg-type]
    assert ModelConfig(provider="replay").missing() == []


def test_an_empty_api_key_env_sends_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-local-servers")
    assert ModelConfig().api_key() == "sk-not-for-local-servers"
    local = ModelConfig(base_url="http://localhost:11434/v1", api_key_env="")
    assert local.resolved_api_key_env() == "" and local.api_key() is None
    assert OpenAIModel(local).headers() == {}


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("127.0.0.1:8000/v1", id="no-scheme"),
        pytest.param("ftp://127.0.0.1/v1", id="ftp"),
        pytest.param("http:///v1", id="no-host"),
        pytest.param("http://127.0.0.1:99999/v1", id="bad-port"),
    ],
)
def test_a_base_url_that_cannot_be_used_is_invalid(url: str) -> None:
    with pytest.raises(ValidationError, match="baseUrl"):
        ModelConfig.model_validate({"baseUrl": url})


def test_an_empty_base_url_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert ModelConfig.model_validate({"baseUrl": "  "}).base_url is None
    assert ModelConfig(base_url="").resolved_base_url() == "https://api.openai.com/v1"
    assert ModelConfig(base_url=" https://llm.internal/v1 ").base_url == "https://llm.internal/v1"


def test_the_key_variable_leaves_children_from_the_configuration_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Defect: the variable was remembered at the first read of the key (the
    # first model request), so the analyzers, the tests gate and the hooks
    # that start before it got a key kept under a plain name (seen on
    # `rein run` with apiKeyEnv: E17PLAIN: ruff's and basedpyright's
    # /proc/<pid>/environ held it).
    from rein.process.environment import child_environment

    monkeypatch.setenv("E17PLAINKEYVAR", "sk-e17-0123456789abcdef")
    assert "E17PLAINKEYVAR" in child_environment()
    ModelConfig.model_validate({"provider": "openai", "apiKeyEnv": "E17PLAINKEYVAR"})
    assert "E17PLAINKEYVAR" not in child_environment()


@pytest.mark.parametrize("key", ["streamIdleTimeout", "streamProgressTimeout", "requestTimeout"])
def test_a_timeout_is_finite(key: str) -> None:
    # Defect: `.inf` (YAML) was taken: a wait without end.
    with pytest.raises(ValidationError, match="finite number"):
        ModelConfig.model_validate({key: float("inf")})
