"""rein.mcp.config: the three sources, their fields, substitution,
precedence, inputs and trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from rein.config import ReinConfig
from rein.harness.redaction import REDACTOR, redact
from rein.lsp.mcp_ports import trust_request
from rein.mcp._entries import parse_entry, read_sources
from rein.mcp._jsonc import JsoncError, loads_jsonc
from rein.mcp.config import McpServers, load_servers
from rein.mcp.trust import FileTrustStore
from tests.fakes.mcp import FakeMcpPorts


def _write(root: Path, rel: str, data: Any) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def _config(servers: dict[str, Any] | None = None, config_files: bool = True) -> ReinConfig:
    return ReinConfig.model_validate(
        {"mcp": {"servers": servers or {}, "configFiles": config_files}}
    )


async def _load(
    root: Path, config: ReinConfig | None = None, ports: FakeMcpPorts | None = None
) -> McpServers:
    return await load_servers(root, config or _config(), ports or FakeMcpPorts())


def _reasons(result: McpServers) -> dict[str, str]:
    return {s.name: s.reason for s in result.skipped}


@pytest.fixture(autouse=True)
def _forget_secrets() -> Any:
    yield
    REDACTOR.forget_all()


# -- JSON with comments -------------------------------------------------------


def test_jsonc_allows_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "a": "x // not a comment", /* b */\n  "b": [1, 2,],\n}\n'
    assert loads_jsonc(text) == {"a": "x // not a comment", "b": [1, 2]}


def test_jsonc_error_names_the_line_of_the_file() -> None:
    text = '{\n  // one\n  /* two\n  three */\n  "a": ,\n}'
    with pytest.raises(JsoncError) as info:
        loads_jsonc(text)
    assert info.value.line == 5
    assert "line 5" in str(info.value)


# -- the three formats ----------------------------------------------------------


@pytest.mark.anyio
async def test_vscode_file_stdio_and_http(tmp_path: Path) -> None:
    _write(
        tmp_path,
        ".vscode/mcp.json",
        '{ // VS Code allows comments\n "servers": {\n'
        '  "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"],'
        ' "env": {"TZ": "UTC"}, "cwd": "sub", "timeout": 5,'
        ' "includeTools": ["get_current_time"], "excludeTools": ["x"]},\n'
        '  "web": {"type": "http", "url": "https://example.com/mcp",'
        ' "headers": {"X-Team": "a"}},\n }\n}',
    )
    result = await _load(tmp_path)
    assert result.errors == [] and result.skipped == []
    time, web = result.servers
    assert (time.name, time.source, time.transport) == ("time", "vscode", "stdio")
    assert time.command == "uvx" and time.args == ("mcp-server-time",)
    assert dict(time.env) == {"TZ": "UTC"}
    assert time.cwd == str((tmp_path / "sub").resolve())
    assert time.timeout_s == 5.0
    assert time.include_tools == ("get_current_time",) and time.exclude_tools == ("x",)
    assert time.trusted and time.command_line() == "uvx mcp-server-time"
    assert (web.transport, web.url, dict(web.headers)) == (
        "http",
        "https://example.com/mcp",
        {"X-Team": "a"},
    )
    assert web.command_line() == "https://example.com/mcp" and web.include_tools is None


@pytest.mark.anyio
async def test_mcp_json_claude_format(tmp_path: Path) -> None:
    _write(
        tmp_path,
        ".mcp.json",
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server-fs", "."], "env": {"A": "1"}},
                "api": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
            }
        },
    )
    result = await _load(tmp_path)
    assert [(s.name, s.source, s.transport) for s in result.servers] == [
        ("api", "mcp.json", "http"),
        ("files", "mcp.json", "stdio"),
    ]
    assert result.servers[1].command_line() == "npx -y server-fs ."


@pytest.mark.anyio
async def test_settings_servers_are_trusted_without_asking(tmp_path: Path) -> None:
    ports = FakeMcpPorts(trust_answer=False)
    config = _config({"mine": {"command": "my-server", "args": ["--x"]}})
    result = await _load(tmp_path, config, ports)
    assert [(s.name, s.source, s.trusted) for s in result.servers] == [("mine", "settings", True)]
    assert ports.asked_trust == []


@pytest.mark.anyio
async def test_config_files_false_reads_neither_file(tmp_path: Path) -> None:
    _write(tmp_path, ".mcp.json", {"mcpServers": {"a": {"command": "a"}}})
    _write(tmp_path, ".vscode/mcp.json", {"servers": {"b": {"command": "b"}}})
    result = await _load(tmp_path, _config(config_files=False))
    assert result.servers == [] and result.skipped == []


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        pytest.param(
            {"type": "websocket", "command": "x"},
            "type",
            "must be stdio or http",
            id="unknown-type",
        ),
        pytest.param({"type": "sse", "url": "http://h/sse"}, "type", "does not support", id="sse"),
        pytest.param({"type": "stdio"}, "command", "is missing", id="missing-command"),
        pytest.param({"args": ["a"]}, "command", "is missing", id="no-command-no-url"),
        # It was said to be missing: it is there, of the wrong type.
        pytest.param(
            {"command": 5},
            "command",
            "must be a string (the program); got 5",
            id="command-not-a-string",
        ),
        pytest.param(
            {"type": "http", "url": "ftp://x"}, "url", "http:// or https://", id="bad-url"
        ),
        pytest.param(
            {"command": "x", "includeTools": "a"},
            "includeTools",
            "list of strings",
            id="include-str",
        ),
        pytest.param(
            {"command": "x", "excludeTools": [1]},
            "excludeTools",
            "list of strings",
            id="exclude-int",
        ),
        pytest.param({"command": "x", "args": "a b"}, "args", "list of strings", id="args-str"),
        pytest.param({"command": "x", "env": {"A": 1}}, "env", "string values", id="env-int"),
        pytest.param({"command": "x", "timeout": 0}, "timeout", "above 0", id="timeout-zero"),
        pytest.param(
            {"command": "x", "disabled": "yes"}, "disabled", "true or false", id="disabled-str"
        ),
        pytest.param({"command": "x", "comand": "y"}, "comand", "not a server field", id="typo"),
        pytest.param(
            {"command": "x", "envFile": "missing.env"}, "envFile", "cannot be read", id="env-file"
        ),
    ],
)
@pytest.mark.anyio
async def test_an_invalid_entry_is_skipped_naming_file_server_and_field(
    tmp_path: Path, entry: dict[str, Any], field: str, words: str
) -> None:
    _write(tmp_path, ".mcp.json", {"mcpServers": {"bad": entry, "good": {"command": "ok"}}})
    result = await _load(tmp_path)
    assert [s.name for s in result.servers] == ["good"]
    reason = _reasons(result)["bad"]
    assert reason.startswith(f".mcp.json: server 'bad': '{field}'")
    assert words in reason


@pytest.mark.anyio
async def test_invalid_json_is_reported_with_its_line_and_no_server_starts(
    tmp_path: Path,
) -> None:
    _write(tmp_path, ".vscode/mcp.json", '{\n "servers": {\n  "a": {"command": "x"\n }\n')
    _write(tmp_path, ".mcp.json", {"mcpServers": {"b": {"command": "b"}}})
    result = await _load(tmp_path)
    assert [s.name for s in result.servers] == ["b"]
    assert len(result.errors) == 1
    assert result.errors[0].startswith(".vscode/mcp.json: not valid JSON: line 5")


@pytest.mark.anyio
async def test_servers_that_is_not_an_object_is_a_file_error(tmp_path: Path) -> None:
    _write(tmp_path, ".mcp.json", {"mcpServers": ["a"]})
    result = await _load(tmp_path)
    assert result.servers == []
    assert result.errors == [".mcp.json: 'mcpServers' must be an object of servers by name"]


@pytest.mark.anyio
async def test_disabled_is_skipped(tmp_path: Path) -> None:
    _write(tmp_path, ".mcp.json", {"mcpServers": {"off": {"command": "x", "disabled": True}}})
    ports = FakeMcpPorts()
    result = await _load(tmp_path, ports=ports)
    assert result.servers == [] and _reasons(result) == {"off": "disabled"}
    assert ports.asked_trust == []  # nothing asked for a server that does not start


# -- precedence -------------------------------------------------------------------


@pytest.mark.anyio
async def test_settings_win_over_vscode_which_wins_over_mcp_json(tmp_path: Path) -> None:
    _write(
        tmp_path, ".vscode/mcp.json", {"servers": {"a": {"command": "vs"}, "b": {"command": "vs"}}}
    )
    _write(
        tmp_path,
        ".mcp.json",
        {"mcpServers": {"a": {"command": "cc"}, "b": {"command": "cc"}, "c": {"command": "cc"}}},
    )
    config = _config({"a": {"command": "settings"}})
    result = await _load(tmp_path, config)
    assert [(s.name, s.source, s.command) for s in result.servers] == [
        ("a", "settings", "settings"),
        ("b", "vscode", "vs"),
        ("c", "mcp.json", "cc"),
    ]
    skipped = sorted((s.name, s.source, s.reason) for s in result.skipped)
    assert skipped == [
        ("a", "mcp.json", "overridden by the server of the same name in settings rein.mcp.servers"),
        ("a", "vscode", "overridden by the server of the same name in settings rein.mcp.servers"),
        ("b", "mcp.json", "overridden by the server of the same name in .vscode/mcp.json"),
    ]


# -- substitution and inputs ------------------------------------------------------


@pytest.mark.anyio
async def test_workspace_folder_env_and_input_are_substituted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_TEST_HOME", "/home/test")
    _write(
        tmp_path,
        ".vscode/mcp.json",
        {
            "inputs": [
                {"type": "promptString", "id": "key", "description": "API key", "password": True}
            ],
            "servers": {
                "s": {
                    "command": "${workspaceFolder}/bin/server",
                    "args": ["--home=${env:REIN_TEST_HOME}", "--key", "${input:key}"],
                    "env": {"TOKEN": "${input:key}"},
                    "cwd": "${workspaceFolder}/sub",
                },
                "h": {
                    "type": "http",
                    "url": "https://x/mcp",
                    "headers": {"Authorization": "Bearer ${input:key}"},
                },
            },
        },
    )
    ports = FakeMcpPorts({"key": "secret-value-123456"})
    result = await _load(tmp_path, ports=ports)
    h, s = result.servers
    assert s.command == f"{tmp_path}/bin/server"
    assert s.args == ("--home=/home/test", "--key", "secret-value-123456")
    assert dict(s.env) == {"TOKEN": "secret-value-123456"}
    assert s.cwd == f"{tmp_path}/sub"
    assert dict(h.headers) == {"Authorization": "Bearer secret-value-123456"}
    assert ports.asked_inputs == ["key"]  # asked once for both servers
    # The trust question showed the input as written, never its value.
    assert all("secret-value" not in line for line in ports.asked_trust)
    assert "${input:key}" in ports.asked_trust[1]
    # The value is a secret now: redacted wherever Rein logs or emits text.
    assert redact("token secret-value-123456") == "token [redacted]"


@pytest.mark.anyio
async def test_an_input_not_given_skips_its_servers(tmp_path: Path) -> None:
    _write(
        tmp_path,
        ".vscode/mcp.json",
        {
            "inputs": [{"type": "pickString", "id": "region", "options": ["eu", "us"]}],
            "servers": {"a": {"command": "a", "args": ["${input:region}"]}, "b": {"command": "b"}},
        },
    )
    ports = FakeMcpPorts({})
    result = await _load(tmp_path, ports=ports)
    assert [s.name for s in result.servers] == ["b"]
    assert _reasons(result) == {"a": ".vscode/mcp.json: input 'region' was not given"}


@pytest.mark.parametrize(
    ("file", "data", "reason"),
    [
        pytest.param(
            ".vscode/mcp.json",
            {"servers": {"a": {"command": "a", "args": ["${input:nope}"]}}},
            ".vscode/mcp.json: ${input:nope}: no input with that id in 'inputs'",
            id="undefined-input",
        ),
        pytest.param(
            ".mcp.json",
            {"mcpServers": {"a": {"command": "a", "args": ["${input:k}"]}}},
            ".mcp.json: ${input:k}: inputs are defined only in .vscode/mcp.json",
            id="input-outside-vscode",
        ),
        pytest.param(
            ".mcp.json",
            {"mcpServers": {"a": {"command": "a", "env": {"K": "${env:REIN_TEST_UNSET_VAR}"}}}},
            ".mcp.json: the environment variable REIN_TEST_UNSET_VAR is not set "
            "(${env:REIN_TEST_UNSET_VAR})",
            id="unset-env",
        ),
    ],
)
@pytest.mark.anyio
async def test_an_unresolved_variable_skips_the_server(
    tmp_path: Path, file: str, data: Any, reason: str
) -> None:
    _write(tmp_path, file, data)
    result = await _load(tmp_path)
    assert result.servers == [] and _reasons(result) == {"a": reason}


@pytest.mark.anyio
async def test_bad_inputs_are_file_errors(tmp_path: Path) -> None:
    _write(
        tmp_path,
        ".vscode/mcp.json",
        {"inputs": [{"type": "command", "id": "c"}, {"type": "pickString", "id": "p"}, {}]},
    )
    result = await _load(tmp_path)
    assert result.errors == [
        ".vscode/mcp.json: inputs[0] 'c': type \"command\" is not supported "
        "(promptString or pickString)",
        ".vscode/mcp.json: inputs[1] 'p': options must be a list of strings",
        ".vscode/mcp.json: inputs[2]: needs an 'id' string",
    ]


@pytest.mark.anyio
async def test_env_file_values_are_read_and_env_wins(tmp_path: Path) -> None:
    _write(tmp_path, "x.env", "# comment\nA=from-file\nexport B='quoted value'\n")
    _write(
        tmp_path,
        ".mcp.json",
        {"mcpServers": {"s": {"command": "s", "envFile": "x.env", "env": {"A": "from-env"}}}},
    )
    result = await _load(tmp_path)
    assert dict(result.servers[0].env) == {"A": "from-env", "B": "quoted value"}


# -- trust ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_workspace_server_not_trusted_is_skipped_with_its_command_line(
    tmp_path: Path,
) -> None:
    _write(
        tmp_path,
        ".mcp.json",
        {"mcpServers": {"evil": {"command": "sh", "args": ["-c", "rm -rf ~"]}}},
    )
    ports = FakeMcpPorts(trust_answer=False)
    result = await _load(tmp_path, ports=ports)
    assert result.servers == []
    assert ports.asked_trust == ["sh -c 'rm -rf ~'"]
    assert _reasons(result) == {"evil": "not trusted: .mcp.json defines it to run sh -c 'rm -rf ~'"}


@pytest.mark.anyio
async def test_trust_is_remembered_and_a_changed_command_asks_again(tmp_path: Path) -> None:
    store = FileTrustStore(tmp_path / "storage")
    ports = FakeMcpPorts()
    ports.trust = store
    _write(tmp_path / "ws", ".mcp.json", {"mcpServers": {"s": {"command": "srv", "args": ["1"]}}})
    assert [s.name for s in (await _load(tmp_path / "ws", ports=ports)).servers] == ["s"]
    assert ports.asked_trust == ["srv 1"]
    # Another load (another process: a new store on the same folder) asks nothing.
    ports.trust = FileTrustStore(tmp_path / "storage")
    assert [s.name for s in (await _load(tmp_path / "ws", ports=ports)).servers] == ["s"]
    assert ports.asked_trust == ["srv 1"]
    # A changed argument, env value or cwd asks again; a refusal skips it.
    ports.trust_answer = False
    for changed in (
        {"args": ["2"]},
        {"args": ["1"], "env": {"NODE_OPTIONS": "-r x"}},
        {"args": ["1"], "cwd": "/"},
    ):
        entry = {"command": "srv", **changed}
        _write(tmp_path / "ws", ".mcp.json", {"mcpServers": {"s": entry}})
        result = await _load(tmp_path / "ws", ports=ports)
        assert result.servers == [], changed
    assert len(ports.asked_trust) == 4
    # Trust is per workspace: the same file in another folder asks again.
    _write(
        tmp_path / "other", ".mcp.json", {"mcpServers": {"s": {"command": "srv", "args": ["1"]}}}
    )
    await _load(tmp_path / "other", ports=ports)
    assert len(ports.asked_trust) == 5
    # The file holds hashes only, no command line.
    assert "srv" not in (tmp_path / "storage" / "mcp-trust.json").read_text()


@pytest.mark.anyio
async def test_a_corrupt_trust_file_trusts_nothing(tmp_path: Path) -> None:
    (tmp_path / "storage").mkdir()
    (tmp_path / "storage" / "mcp-trust.json").write_text("{not json")
    ports = FakeMcpPorts(trust_answer=False)
    ports.trust = FileTrustStore(tmp_path / "storage")
    _write(tmp_path / "ws", ".mcp.json", {"mcpServers": {"s": {"command": "srv"}}})
    result = await _load(tmp_path / "ws", ports=ports)
    assert result.servers == [] and ports.asked_trust == ["srv"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"a": ,}', id="colon-comma"),
        pytest.param("[,]", id="only-comma"),
        pytest.param("[1,,]", id="double-comma"),
        pytest.param('{"a": 1,' + " " * 100 + "\n" * 100 + ",}", id="far-double-comma"),
    ],
)
def test_jsonc_keeps_commas_that_follow_no_value_errors(text: str) -> None:
    with pytest.raises(JsoncError):
        loads_jsonc(text)


_DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


@pytest.mark.anyio
async def test_the_documented_examples_load(tmp_path: Path) -> None:
    """docs/configuration.md's three examples are valid, as written."""
    section = _DOCS.read_text(encoding="utf-8").split("\n## mcp\n", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("\n", 1)[1] for b in section.split("```")[1::2]]
    vscode, claude, settings = blocks[:3]
    _write(tmp_path, ".vscode/mcp.json", vscode)
    _write(tmp_path, ".mcp.json", claude)
    servers = json.loads("{" + settings + "}")["rein.mcp.servers"]
    ports = FakeMcpPorts({"tz": "UTC", "github-token": "ghp_" + "x" * 36})
    result = await _load(tmp_path, _config(servers), ports)
    assert result.errors == []
    assert sorted((s.name, s.source) for s in result.servers) == [
        ("docs", "mcp.json"),
        ("git", "settings"),
        ("github", "vscode"),
        ("time", "vscode"),
    ]
    assert sorted((s.name, s.reason.split(" by ")[0]) for s in result.skipped) == [
        ("files", "disabled"),
        ("files", "overridden"),
    ]


@pytest.mark.anyio
async def test_servers_from_the_workspace_settings_are_asked_about_like_the_files(
    tmp_path: Path,
) -> None:
    config = ReinConfig.model_validate(
        {
            "mcp": {
                "servers": {"ws": {"command": "team-server"}, "mine": {"command": "my-server"}},
                "workspaceServers": ["ws"],
            }
        }
    )
    ports = FakeMcpPorts(trust_answer=False)
    result = await _load(tmp_path, config, ports)
    assert [s.name for s in result.servers] == ["mine"]
    assert ports.asked_trust == ["team-server"]
    assert _reasons(result) == {
        "ws": "not trusted: workspace settings rein.mcp.servers defines it to run team-server"
    }
    ports.trust_answer = True
    result = await _load(tmp_path, config, ports)
    assert [(s.name, s.source, s.trusted) for s in result.servers] == [
        ("mine", "settings", True),
        ("ws", "settings", True),
    ]


# -- Claude Code's variables in .mcp.json ---------------------------------------


@pytest.mark.anyio
async def test_mcp_json_puts_in_claude_codes_variables_and_their_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defect: ${VAR} and ${VAR:-default} (Claude Code's .mcp.json forms)
    # reached the server as written: its token was the text "${SHOP_API_KEY}".
    monkeypatch.setenv("REIN_T_SHOP_API_KEY", "shop-key-0123456789")
    monkeypatch.setenv("REIN_T_BIN", "/opt/shop")
    monkeypatch.delenv("REIN_T_REGION", raising=False)
    monkeypatch.delenv("REIN_T_UNSET", raising=False)
    _write(
        tmp_path,
        ".mcp.json",
        {
            "mcpServers": {
                "s": {
                    "command": "${REIN_T_BIN}/server",
                    "args": ["--region=${REIN_T_REGION:-eu-west-1}", "--empty=${REIN_T_REGION:-}"],
                    "env": {"TOKEN": "${REIN_T_SHOP_API_KEY}", "KEEP": "$REIN_T_BIN"},
                },
                "h": {
                    "type": "http",
                    "url": "https://${REIN_T_REGION:-eu}.shop.example/mcp",
                    "headers": {"Authorization": "Bearer ${REIN_T_SHOP_API_KEY}"},
                },
                "u": {"command": "u", "args": ["${REIN_T_UNSET}"]},
            }
        },
    )
    _write(tmp_path, ".vscode/mcp.json", {"servers": {"v": {"command": "v", "args": ["${X}"]}}})
    ports = FakeMcpPorts()
    result = await _load(tmp_path, ports=ports)
    h, s, v = result.servers
    assert (s.command, s.args) == ("/opt/shop/server", ("--region=eu-west-1", "--empty="))
    # A bare $VAR is not a placeholder, as in Claude Code.
    assert dict(s.env) == {"TOKEN": "shop-key-0123456789", "KEEP": "$REIN_T_BIN"}
    assert h.url == "https://eu.shop.example/mcp"
    assert dict(h.headers) == {"Authorization": "Bearer shop-key-0123456789"}
    assert v.args == ("${X}",)  # VS Code's file has only ${env:X}
    assert _reasons(result) == {
        "u": ".mcp.json: the environment variable REIN_T_UNSET is not set (${REIN_T_UNSET})"
    }
    # The trust question showed the variables, never their values: the
    # whole spec it was given (env, headers), not only its command line.
    asked = {spec.name: spec for spec in ports.asked_specs}
    assert dict(asked["s"].env) == {"TOKEN": "${REIN_T_SHOP_API_KEY}", "KEEP": "$REIN_T_BIN"}
    assert dict(asked["h"].headers) == {"Authorization": "Bearer ${REIN_T_SHOP_API_KEY}"}
    assert all("shop-key" not in repr(spec) for spec in ports.asked_specs)
    # A variable named like a secret is redacted wherever Rein writes text.
    assert redact("got shop-key-0123456789") == "got [redacted]"


@pytest.mark.anyio
async def test_the_providers_key_is_never_given_to_a_workspace_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rein.process.environment import remember_secret_name

    remember_secret_name("REIN_T_PROVIDER_KEY")
    monkeypatch.setenv("REIN_T_PROVIDER_KEY", "provider-key-0123456789")
    _write(
        tmp_path,
        ".mcp.json",
        {"mcpServers": {"a": {"command": "a", "env": {"K": "${REIN_T_PROVIDER_KEY}"}}}},
    )
    _write(
        tmp_path,
        ".vscode/mcp.json",
        {"servers": {"b": {"type": "http", "url": "https://x/${env:REIN_T_PROVIDER_KEY}"}}},
    )
    mine = {"c": {"command": "c", "args": ["${env:REIN_T_PROVIDER_KEY}"]}}
    result = await _load(tmp_path, _config(mine))
    [c] = result.servers  # the person's own setting may give it
    assert c.args == ("provider-key-0123456789",)
    never = (
        "the variable a model provider reads its key from, which is never given to a "
        "server the workspace defines"
    )
    assert _reasons(result) == {
        "a": f".mcp.json: it names REIN_T_PROVIDER_KEY, {never}",
        "b": f".vscode/mcp.json: it names REIN_T_PROVIDER_KEY, {never}",
    }


@pytest.mark.anyio
async def test_every_known_providers_key_is_kept_before_trust_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defect: only the configured provider's variable was kept (OPENAI_API_KEY
    # by default), so ANTHROPIC_API_KEY went to a workspace's server; and
    # the trust question was asked and remembered before the skip.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-0123456789")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-0123456789")
    servers = {
        "a": {"command": "a", "args": ["${ANTHROPIC_API_KEY}"]},
        "g": {"command": "g", "env": {"K": "${GEMINI_API_KEY:-x}"}},
    }
    _write(tmp_path, ".mcp.json", {"mcpServers": servers})
    ports = FakeMcpPorts()
    result = await _load(tmp_path, ports=ports)
    assert result.servers == []
    assert sorted(_reasons(result)) == ["a", "g"]
    assert "it names ANTHROPIC_API_KEY" in _reasons(result)["a"]
    assert ports.asked_trust == []  # nothing asked, so nothing remembered


@pytest.mark.anyio
async def test_a_trust_given_before_variables_were_put_in_asks_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defect: the trust key hashed the spec as written; a trust given when
    # ${VAR} reached the server as text now handed over the value unasked.
    from rein.mcp.trust import MemoryTrustStore, trust_key

    monkeypatch.setenv("REIN_T_GH_TOKEN", "gh-token-0123456789")
    _write(
        tmp_path,
        ".mcp.json",
        {"mcpServers": {"gh": {"command": "echo", "args": ["--token=${REIN_T_GH_TOKEN}"]}}},
    )
    old = MemoryTrustStore()
    old.remember(
        trust_key(
            tmp_path, "gh", "mcp.json", ["stdio", "echo", "--token=${REIN_T_GH_TOKEN}", "", ""]
        )
    )
    ports = FakeMcpPorts(trust_answer=False)
    ports.trust = old
    result = await _load(tmp_path, ports=ports)
    assert result.servers == [] and ports.asked_trust == ["echo '--token=${REIN_T_GH_TOKEN}'"]
    ports.trust_answer = True
    [gh] = (await _load(tmp_path, ports=ports)).servers
    assert gh.args == ("--token=gh-token-0123456789",)
    await _load(tmp_path, ports=ports)  # remembered with the variables
    assert len(ports.asked_trust) == 2


def test_the_trust_question_shows_the_env_and_header_names_as_written() -> None:
    # Defect: only the command line and the variables were shown; a
    # literal NODE_OPTIONS (what runs) or a header was not.
    from rein.headless.mcp_ports import _note
    from rein.mcp.spec import McpServerSpec

    spec = McpServerSpec(
        name="s",
        source="mcp.json",
        transport="stdio",
        command="node",
        env={"NODE_OPTIONS": "--require=/tmp/x.js", "TOKEN": "${REIN_T_GH_TOKEN}"},
        headers={"X-Api-Key": "literal-secret-value"},
        trusted=False,
    )
    detail = trust_request(spec)["detail"]
    for shown in (detail, _note(spec)):
        assert "NODE_OPTIONS=--require=/tmp/x.js" in shown
        assert "TOKEN=${REIN_T_GH_TOKEN}" in shown
        assert "Its headers: X-Api-Key" in shown
        assert "literal-secret-value" not in shown
        assert "It is given your environment variables REIN_T_GH_TOKEN." in shown


@pytest.mark.anyio
async def test_the_trust_question_names_the_variables_and_a_changed_header_asks_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REIN_T_GH_TOKEN", "gh-token-0123456789")
    entry: dict[str, Any] = {"type": "http", "url": "https://api.example/mcp"}
    _write(tmp_path, ".mcp.json", {"mcpServers": {"gh": entry}})
    ports = FakeMcpPorts()
    assert [s.name for s in (await _load(tmp_path, ports=ports)).servers] == ["gh"]
    # Defect: the headers were not part of what is trusted, so a token
    # added to a trusted server's headers was sent without asking again.
    entry["headers"] = {"Authorization": "Bearer ${REIN_T_GH_TOKEN}"}
    _write(tmp_path, ".mcp.json", {"mcpServers": {"gh": entry}})
    ports.trust_answer = False
    result = await _load(tmp_path, ports=ports)
    assert result.servers == [] and len(ports.asked_trust) == 2
    assert _reasons(result) == {
        "gh": "not trusted: .mcp.json defines it to run https://api.example/mcp; "
        "it is given your environment variables REIN_T_GH_TOKEN"
    }
    [raw], _, _ = read_sources(tmp_path, {}, True, ())
    detail = trust_request(parse_entry(raw, tmp_path))["detail"]
    assert "It is given your environment variables REIN_T_GH_TOKEN." in detail
    assert "gh-token" not in detail


@pytest.mark.anyio
async def test_listings_show_the_command_line_as_written_never_a_value_put_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Defect: rein mcp list (text and --json) and rein doctor printed the
    # substituted command line: a DSN, an AWS key (names that do not look
    # secret, so never redacted) in clear.
    import io

    from rein.headless.mcp_list import _print_text, listing_json
    from rein.headless.setup_view import setup_view

    monkeypatch.setenv("REIN_T_DSN", "postgres://u:hunter2@h/db")
    mine = {"db": {"command": "echo", "args": ["--dsn=${env:REIN_T_DSN}"]}}
    config = ReinConfig.model_validate({"mcp": {"servers": mine}, "setup": {"userFolders": False}})
    result = await _load(tmp_path, config)
    [db] = result.servers
    assert db.args == ("--dsn=postgres://u:hunter2@h/db",)  # the server gets it
    out = io.StringIO()
    _print_text(result, {}, out)
    assert out.getvalue() == "db  [settings, stdio]  echo '--dsn=${env:REIN_T_DSN}'\n"
    assert listing_json(result, {})["servers"][0]["commandLine"] == "echo '--dsn=${env:REIN_T_DSN}'"
    doctor = await anyio.to_thread.run_sync(setup_view, tmp_path, config, tmp_path / "storage")
    assert "hunter2" not in repr(doctor) and "--dsn=${env:REIN_T_DSN}" in repr(doctor)
