"""``gates.analyzer.servers``: entries laid over the presets by name, new
servers added, validated with errors that name the field; the presets
found per workspace (issue 35 items 1 and 2)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from rein.config import load_config
from rein.disk.analyzer_discovery import (
    locate,
    not_analysed,
    scan_workspace,
    workspace_specs,
)
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS, AnalyzerSpec, spec_of
from rein.harness.analyzer_servers import PRESETS
from rein.harness.config import AnalyzerGateConfig

PRESET_NAMES = ["ruff", "basedpyright", "typescript", "eslint", "biome", "gopls", "clangd", "bash"]


def analyzer(servers: list[dict]) -> AnalyzerGateConfig:
    return AnalyzerGateConfig.model_validate({"servers": servers})


def fake_server(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\necho 9.9.9\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    """The workspace folder ``tmp_path/ws`` holding ``files`` (name: text)."""
    root = tmp_path / "ws"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    return root


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds one empty folder; the tool cache is an empty folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("REIN_TOOL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.executable", str(tmp_path / "py" / "python"))
    return bin_dir


def test_the_presets_are_named_as_documented() -> None:
    assert [p.name for p in PRESETS] == PRESET_NAMES
    assert [p.name for p in analyzer([]).effective_servers()] == PRESET_NAMES


def test_ruff_and_basedpyright_are_two_presets_and_the_default_analyzers() -> None:
    assert [s.name for s in DEFAULT_ANALYZERS] == ["ruff", "basedpyright"]
    ruff, pyright = DEFAULT_ANALYZERS
    assert ruff.command == ("ruff", "server") and ruff.pull
    assert ruff.initialization({}) is None  # no settings: no options, as before
    assert pyright.initialization(pyright.settings) == {"settings": pyright.settings}
    assert pyright.diagnostic_mode_setting == "basedpyright.analysis.diagnosticMode"


def test_an_entry_with_a_presets_name_changes_only_what_it_sets() -> None:
    servers = analyzer(
        [{"name": "gopls", "enabled": False}, {"name": "clangd", "command": ["clangd-17"]}]
    ).effective_servers()
    by_name = {s.name: s for s in servers}
    assert by_name["gopls"].enabled is False
    assert by_name["gopls"].command == ["gopls"]  # kept from the preset
    assert by_name["clangd"].command == ["clangd-17"]
    assert by_name["clangd"].extensions is not None and ".cpp" in by_name["clangd"].extensions
    assert [s.name for s in servers] == PRESET_NAMES


def test_a_new_server_is_added_with_its_language_ids_and_options() -> None:
    config = load_config(
        {
            "gates": {
                "analyzer": {
                    "servers": [
                        {
                            "name": "yaml",
                            "command": ["yaml-language-server", "--stdio"],
                            "extensions": {"*.yaml": "yaml", ".yml": "yaml"},
                            "initializationOptions": {"a": 1},
                            "settings": {"yaml": {"validate": True}},
                            "diagnostics": "publish",
                            "enabled": True,
                        }
                    ]
                }
            }
        },
        "test",
    )
    servers = config.gates.analyzer.effective_servers()
    assert servers[-1].name == "yaml"
    spec = spec_of(servers[-1])
    assert spec.extensions == frozenset({".yaml", ".yml"})
    assert spec.language_for("conf/a.yml") == "yaml"
    assert spec.initialization(spec.settings) == {"a": 1}
    assert spec.settings == {"yaml": {"validate": True}}
    assert not spec.pull


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"name": "yaml", "extensions": {".yaml": "yaml"}}, "command is required"),
        ({"name": "yaml", "command": ["y"]}, "extensions is required"),
        ({"name": "x", "command": [], "extensions": {".x": "x"}}, "command"),
        ({"name": "x", "command": ["x"], "extensions": {"src/*.x": "x"}}, "not a file extension"),
        ({"name": "gopls", "diagnostics": "both"}, "diagnostics"),
        ({"name": "gopls", "comand": ["g"]}, "comand"),
        ({"name": " ", "command": ["x"]}, "needs a name"),
    ],
)
def test_a_bad_entry_is_refused_naming_the_field(entry: dict, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        analyzer([entry])
    assert words in str(caught.value)
    assert "servers" in str(caught.value)


def test_presets_are_found_for_the_languages_the_workspace_has(
    tmp_path: Path, bare_path: Path
) -> None:
    root = workspace(tmp_path, dict.fromkeys(("a.ts", "b.go", "c.c", "d.sh", "e.rs", "f.rs"), "\n"))
    fake_server(bare_path, "gopls")
    fake_server(root / "node_modules" / ".bin", "typescript-language-server")
    fake_server(tmp_path / "cache" / "node_modules" / ".bin", "bash-language-server")
    specs = {s.name: s for s in workspace_specs(root, AnalyzerGateConfig())}
    # Every preset whose language is here, found or not (the pool says
    # "not found"); no Python, no ESLint or Biome configuration: not those.
    assert sorted(specs) == ["bash", "clangd", "gopls", "typescript"]
    assert specs["gopls"].command == (str(bare_path / "gopls"),)
    assert specs["typescript"].command[0] == str(
        root / "node_modules/.bin/typescript-language-server"
    )
    assert specs["bash"].command[0] == str(
        tmp_path / "cache/node_modules/.bin/bash-language-server"
    )
    assert specs["clangd"].command[0] == "clangd"  # not found: left as named
    assert specs["clangd"].note == "fallback flags: no compile_commands.json"
    assert locate("clangd", root) is None
    files = scan_workspace(root)
    assert not_analysed(files, [specs["gopls"]]) == {".c": 1, ".rs": 2, ".sh": 1, ".ts": 1}


def test_typescript_is_given_the_projects_own_tsserver(tmp_path: Path, bare_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "node_modules" / "typescript" / "lib").mkdir(parents=True)
    tsserver = root / "node_modules" / "typescript" / "lib" / "tsserver.js"
    tsserver.write_text("//\n")
    (tsserver.parent.parent / "package.json").write_text(
        '{"name": "typescript", "version": "5.4.2"}'
    )
    (root / "tsconfig.json").write_text("{}\n")
    fake_server(bare_path, "typescript-language-server")
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert spec.name == "typescript"
    assert spec.initialization_options is not None
    assert spec.initialization_options["tsserver"] == {"path": str(tsserver)}
    assert spec.note == "the project's TypeScript 5.4.2"  # the analyzers line names it
    assert spec.language_for("src/a.tsx") == "typescriptreact"


def test_a_fifo_for_typescripts_package_json_is_not_waited_on(
    tmp_path: Path, bare_path: Path
) -> None:
    """Its version was read with a bare read_text(): a FIFO there (a hostile
    checkout) hung discovery, and with it the workspace's start and rein
    doctor, without a bound."""
    root = tmp_path / "ws"
    (root / "node_modules" / "typescript" / "lib").mkdir(parents=True)
    (root / "node_modules" / "typescript" / "lib" / "tsserver.js").write_text("//\n")
    fifo = root / "node_modules" / "typescript" / "package.json"
    os.mkfifo(fifo)
    (root / "tsconfig.json").write_text("{}\n")
    fake_server(bare_path, "typescript-language-server")
    specs: list[AnalyzerSpec] = []
    worker = threading.Thread(
        target=lambda: specs.extend(workspace_specs(root, AnalyzerGateConfig())), daemon=True
    )
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # it waits for a writer: give it one (EOF), then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=10)
        pytest.fail("discovery waited on the FIFO")
    (spec,) = specs
    assert spec.note == "the project's TypeScript"  # no version: nothing read


def test_typescript_7_without_tsserver_falls_back_to_the_servers(
    tmp_path: Path, bare_path: Path
) -> None:
    root = tmp_path / "ws"
    (root / "node_modules" / "typescript" / "bin").mkdir(parents=True)  # no lib/tsserver.js
    (root / "a.ts").write_text("\n")
    prefix = tmp_path / "global" / "node_modules"
    server = fake_server(prefix / "typescript-language-server" / "lib", "cli.mjs")
    (prefix / "typescript" / "lib").mkdir(parents=True)
    (prefix / "typescript" / "lib" / "tsserver.js").write_text("//\n")
    os.symlink(server, bare_path / "typescript-language-server")
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert spec.initialization_options is not None
    assert spec.initialization_options["tsserver"] == {
        "fallbackPath": str(prefix / "typescript" / "lib" / "tsserver.js")
    }
    assert spec.note is not None and "TypeScript 7" in spec.note
    (root / "node_modules" / "typescript" / "bin").rmdir()
    (root / "node_modules" / "typescript").rmdir()
    (prefix / "typescript" / "package.json").write_text('{"version": "5.9.3"}')
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert spec.note == "TypeScript 5.9.3 next to the server (the project has none)"
    (prefix / "typescript" / "lib" / "tsserver.js").unlink()
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert spec.initialization_options is not None
    assert "tsserver" not in spec.initialization_options
    assert spec.note == "no TypeScript 5 found (npm i -g typescript@5; 7 has no tsserver.js)"


def test_clangd_uses_the_compile_commands_when_there_are_some(
    tmp_path: Path, bare_path: Path
) -> None:
    root = workspace(
        tmp_path,
        {"main.c": "int main(void) { return 0; }\n", "compile_commands.json": "[]\n"},
    )
    fake_server(bare_path, "clangd")
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert spec.command == (
        str(bare_path / "clangd"),
        "--background-index=false",
        f"--compile-commands-dir={root}",
    )
    # The fake says "9.9.9": no clangd version, so no --use-dirty-headers, said.
    assert (
        spec.note
        == "compile_commands.json; no --use-dirty-headers: clangd --version named no version"
    )


@pytest.mark.parametrize(
    ("says", "dirty"),
    [
        ("Debian clangd version 14.0.6 linux+grpc x86_64-pc-linux-gnu", True),
        ("clangd version 18.1.3 (https://github.com/llvm/llvm-project c13b7485)", True),
        ("clangd version 13.0.1", False),  # no --use-dirty-headers: it would not start
        ("something else", False),
    ],
)
def test_clangd_from_version_14_reads_the_headers_it_was_shown(
    tmp_path: Path, bare_path: Path, says: str, dirty: bool
) -> None:
    root = workspace(tmp_path, {"main.c": "int main(void) { return 0; }\n"})
    exe = fake_server(bare_path, "clangd")
    exe.write_text(f"#!/bin/sh\necho '{says}'\n")
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert ("--use-dirty-headers" in spec.command) is dirty
    assert spec.command[:2] == (str(exe), "--background-index=false")


def test_a_clangd_version_probe_that_failed_is_said_and_asked_again(
    tmp_path: Path, bare_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clangd that did not answer ``--version`` in time (under load) left
    --use-dirty-headers off for the process, silently: the failure was
    cached with the executable's answers."""
    root = workspace(tmp_path, {"main.c": "int main(void) { return 0; }\n"})
    monkeypatch.setattr("rein.disk.analyzer_discovery._VERSION_BOUND_S", 0.3)
    slow = tmp_path / "slow"
    slow.write_text("")
    exe = fake_server(bare_path, "clangd")
    exe.write_text(
        f"#!/bin/sh\nif [ -s {slow} ]; then exec /bin/sleep 10; fi\n"
        "echo 'Debian clangd version 14.0.6'\n"
    )
    slow.write_text("1")
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert "--use-dirty-headers" not in spec.command
    assert spec.note == (
        "fallback flags: no compile_commands.json; "
        "no --use-dirty-headers: clangd --version did not answer within 0.3 s"
    )
    slow.write_text("")  # it answers now; the executable is the same
    (spec,) = workspace_specs(root, AnalyzerGateConfig())
    assert "--use-dirty-headers" in spec.command
    assert spec.note == "fallback flags: no compile_commands.json"


def test_eslint_and_biome_only_where_configured_and_off_when_disabled(
    tmp_path: Path, bare_path: Path
) -> None:
    root = workspace(tmp_path, {"a.js": "\n", "eslint.config.js": "export default [];\n"})
    names = [s.name for s in workspace_specs(root, AnalyzerGateConfig())]
    assert names == ["typescript", "eslint"]
    off = analyzer([{"name": "typescript", "enabled": False}])
    assert [s.name for s in workspace_specs(root, off)] == ["eslint"]
    forced = analyzer([{"name": "ruff", "enabled": True}])
    assert [s.name for s in workspace_specs(root, forced)] == ["ruff", "typescript", "eslint"]


def test_a_python_project_gets_ruff_and_basedpyright_as_before(
    tmp_path: Path, bare_path: Path
) -> None:
    root = workspace(tmp_path, {"app.py": "x = 1\n"})
    specs = workspace_specs(root, AnalyzerGateConfig())
    assert [s.name for s in specs] == ["ruff", "basedpyright"]
    assert [(s.command, s.settings) for s in specs] == [
        (d.command, d.settings) for d in DEFAULT_ANALYZERS
    ]


def test_the_scan_is_bounded_and_skips_what_the_filter_skips(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "a.ts").write_text("\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "b.go").write_text("\n")
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text("\n")
    files = scan_workspace(tmp_path)
    assert dict(files.counts) == {".py": 5} and not files.truncated
    files = scan_workspace(tmp_path, limit=3)
    assert dict(files.counts) == {".py": 3} and files.truncated
