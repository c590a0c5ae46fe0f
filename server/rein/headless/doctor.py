"""``rein doctor``: the analyzer pool's servers (every preset and every
server ``gates.analyzer.servers`` adds), each found or not, where, its
version, whether this workspace uses it, and the one command that installs
what is missing; the model Rein would talk to (its provider, name,
endpoint, the variable its key is read from and whether it is set, never
the key) and what it misses; whether the OS sandbox of the model's commands works here,
and why not (:mod:`rein.sandboxing.probe`); then the person's setup (hooks,
skills, custom agents, commands, instruction files, MCP servers:
:mod:`rein.headless.setup_view`). It changes nothing and exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rein.bring.inventory import Inventory
from rein.config_file import build_config
from rein.disk.analyzer_discovery import fitted, locate, scan_workspace, tool_cache, wanted
from rein.disk.pool_status import languages
from rein.harness.analyzer_servers import AnalyzerServerConfig
from rein.harness.config import AnalyzerGateConfig
from rein.harness.errors import ConfigError
from rein.headless.setup_view import setup_view
from rein.providers.config import ModelConfig
from rein.sandboxing.probe import SandboxStatus, sandbox_status
from rein.sandboxing.settings import SandboxSettings
from rein.store import default_storage_path

__all__ = [
    "ServerCheck",
    "check_servers",
    "doctor",
    "doctor_command",
    "model_check",
    "model_line",
    "sandbox_line",
]

#: How long a server's ``--version`` may take.
VERSION_TIMEOUT_S = 10.0
#: Servers whose ``--version`` is not theirs: another executable next to
#: them (None: the server's own) and its arguments.
_VERSION_COMMANDS = {"gopls": (None, ["version"]), "basedpyright": ("basedpyright", ["--version"])}


@dataclass(frozen=True)
class ServerCheck:
    name: str
    languages: str
    found: bool
    path: str | None
    where: str | None
    version: str | None
    #: This workspace would run it (its language's files, its configuration).
    used_here: bool
    enabled: str
    install: str | None
    note: str | None


def _version(name: str, executable: str) -> str | None:
    other, args = _VERSION_COMMANDS.get(name, (None, ["--version"]))
    if other is not None:
        executable = str(Path(executable).with_name(other))
    try:
        done = subprocess.run(
            [executable, *args],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        if line.strip():
            return line.strip()[:120]
    return None


def check_servers(root: Path, config: AnalyzerGateConfig) -> list[ServerCheck]:
    """Each server of ``config`` (presets first) as found from ``root``."""
    files = scan_workspace(root)
    out: list[ServerCheck] = []
    for server in config.effective_servers():
        out.append(_check(server, root, wanted(server, files)))
    return out


def _check(server: AnalyzerServerConfig, root: Path, used: bool) -> ServerCheck:
    spec = fitted(server, root) if server.command and server.extensions else None
    place = locate(server.command[0], root) if server.command else None
    return ServerCheck(
        name=server.name,
        languages=languages(spec) if spec is not None else "",
        found=place is not None,
        path=place[0] if place else None,
        where=place[1] if place else None,
        version=_version(server.name, place[0]) if place else None,
        used_here=used and server.enabled is not False,
        enabled=str(server.enabled).lower(),
        install=server.install,
        note=spec.note if spec is not None else None,
    )


def model_check(model: ModelConfig) -> dict[str, object]:
    """The model's settings as ``rein doctor --json`` shows them (the key's
    variable and whether it is set; never the key) and ``problems``: why a
    run with them would fail before any request (empty: ready)."""
    http = model.provider in ("openai", "anthropic")
    problems: list[str] = []
    if model.unusable is not None:
        problems.append(model.unusable)
    elif http:
        problems.extend(model.missing())
    elif model.provider == "replay" and not model.script:
        problems.append("the replay provider needs rein.model.script (a YAML file)")
    elif model.provider == "vscode-lm":
        problems.append("the vscode-lm provider works only in the VS Code extension (rein serve)")
    key_env = model.resolved_api_key_env() if http else ""
    return {
        "provider": model.provider,
        "model": model.model,
        "baseUrl": model.resolved_base_url() if http and model.unusable is None else None,
        "apiKeyEnv": key_env or None,
        "apiKeySet": bool(os.environ.get(key_env)) if key_env else None,
        "problems": problems,
    }


def model_line(model: ModelConfig) -> str:
    """``rein doctor``'s model line: what ``rein run`` would talk to, and
    what it misses (each naming the setting or variable to set)."""
    check = model_check(model)
    line = f"model: {check['provider']} {check['model'] or '(no model name)'}"
    if check["baseUrl"]:
        line += f" at {check['baseUrl']}"
    if check["apiKeyEnv"]:
        state = "set" if check["apiKeySet"] else "not set"
        line += f"; API key from {check['apiKeyEnv']} ({state})"
    problems = check["problems"]
    assert isinstance(problems, list)
    if problems:
        return (
            line + "; a run fails before any request, missing or wrong: " + "; and ".join(problems)
        )
    return line


def sandbox_line(status: SandboxStatus, also: Sequence[str] = ()) -> str:
    """``rein doctor``'s sandbox line: works (with what), or why not; and
    what that means for the other commands ``also`` names (``sandbox.also``)."""
    kinds = ", ".join(also)
    if status.works:
        line = f"sandbox: works ({status.version or 'bubblewrap'} at {status.program})"
        return line + (f"; also for {kinds} (sandbox.also)" if also else "")
    line = (
        f"sandbox: does not work here: {status.why_not}; with approval.command "
        '"sandboxed" every command asks'
    )
    return line + (f"; {kinds} (sandbox.also) run unsandboxed" if also else "")


def doctor(
    root: Path,
    config: AnalyzerGateConfig,
    *,
    as_json: bool = False,
    sandbox: SandboxSettings | None = None,
    setup: Inventory | None = None,
    model: ModelConfig | None = None,
) -> int:
    """Print the table (or JSON) to stdout, the model line (``model``
    when given), the sandbox line, then the ``setup`` when given; exit
    status 0."""
    checks = check_servers(root, config)
    status = sandbox_status((sandbox or SandboxSettings()).bwrap)
    if as_json:
        data: dict[str, object] = {
            "toolCache": str(tool_cache()),
            "servers": [asdict(c) for c in checks],
            "sandbox": {
                "works": status.works,
                "program": status.program,
                "version": status.version,
                "whyNot": status.why_not,
                "also": list((sandbox or SandboxSettings()).also),
            },
        }
        if model is not None:
            data["model"] = model_check(model)
        if setup is not None:
            data["setup"] = setup.json()
        print(json.dumps(data))
        return 0
    print(f"analyzer servers for {root} (searched: PATH, node_modules/.bin, next to Rein's")
    print(f"Python, Rein's tool cache {tool_cache()}):")
    for check in checks:
        state = "found" if check.found else "not found"
        use = "used here" if check.used_here else "not used here"
        if check.enabled == "false":
            use = "off (enabled: false)"
        print(f"  {check.name} ({check.languages}): {state}; {use}")
        if check.found:
            print(f"      {check.path} ({check.where})")
            print(f"      version: {check.version or 'unknown'}")
            if check.note:
                print(f"      {check.note}")
        elif check.install:
            print(f"      install: {check.install}")
    if not config.enabled:
        print("the analyzer gate is off (gates.analyzer.enabled is false)")
    if model is not None:
        print(model_line(model))
    print(sandbox_line(status, (sandbox or SandboxSettings()).also))
    if setup is not None:
        print(f"\nyour setup for {root}:")
        for line in setup.lines():
            print(f"  {line}")
    sys.stdout.flush()
    return 0


def doctor_command(root: Path, config_file: str | None, *, as_json: bool) -> int:
    """``rein doctor``: :func:`doctor` for ``root`` with the configuration
    in ``config_file`` (or REIN_CONFIG) and the setup Rein finds there;
    exit 2 when ``root`` is not a folder or the configuration is invalid."""
    root = root.resolve()
    if not root.is_dir():
        print(f"rein doctor: {root} is not a folder", file=sys.stderr)
        return 2
    try:
        config = build_config(config_file, {})
    except ConfigError as exc:
        print(f"rein doctor: {exc}", file=sys.stderr)
        return 2
    storage = Path(config.storage_path or default_storage_path())
    setup = setup_view(root, config, storage)
    return doctor(
        root,
        config.gates.analyzer,
        as_json=as_json,
        sandbox=config.sandbox,
        setup=setup,
        model=config.model,
    )
