"""``sandbox.also`` (issue 38): the gates' (the tests gate's too), hooks'
and MCP stdio servers' commands run in the real sandbox when the setting names them, through the
very runners Rein starts them with (the gates' :class:`SubprocessRunner`,
:func:`run_hook`, :class:`McpConnection`), and as before without it. The
folders outside and the person's home are the test's own, under
``/var/tmp`` (the sandbox's ``/tmp`` is private)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rein.bring.hook_runner import run_hook
from rein.config import load_config
from rein.harness.config import TestsGateConfig
from rein.harness.errors import ConfigError
from rein.mcp.client import McpConnection
from rein.mcp.config import McpServerSpec
from rein.process.kept import KeptProcessLauncher
from rein.process.preview import SubprocessPreviewFactory
from rein.process.runner import SubprocessRunner
from rein.sandboxing import SandboxSettings
from rein.sandboxing.others import OtherCommandsSandbox
from rein.sandboxing.probe import sandbox_status, unavailable_notice
from rein.sandboxing.proxy import PRESETS
from rein.session.builder import build_gates
from rein.testgate.gate import TestGate
from rein.testgate.pycache import mirror
from tests.fakes.commands import FakeCommandRunner
from tests.fakes.diagnostics import FakeDiagnostics
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import changed, project, verdict

READER = Path(__file__).with_name("secrets_reader.py")


@pytest.fixture
def outside() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="rein-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path)


def _sandbox(root: Path, kind: str, also: tuple[str, ...]) -> OtherCommandsSandbox:
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    settings = SandboxSettings(also=also)
    return OtherCommandsSandbox(str(root), lambda: settings, kind)


def test_the_setting_names_kinds_of_commands_only() -> None:
    config = load_config({"sandbox": {"also": ["gates", "mcp"]}})
    assert config.sandbox.also == ("gates", "mcp")
    with pytest.raises(ConfigError, match=r"rein.sandbox.also: .*'tests': each entry is one of"):
        load_config({"sandbox": {"also": ["tests"]}})
    with pytest.raises(ValueError, match="not one of"):
        OtherCommandsSandbox("/w", SandboxSettings, "linters")


def test_without_the_sandbox_the_other_commands_run_as_before_and_it_is_said() -> None:
    missing = "/nonexistent/bwrap"
    settings = SandboxSettings(also=("gates",), bwrap=missing)
    sandbox = OtherCommandsSandbox("/w", lambda: settings, "gates")
    assert sandbox.wrap(["bash", "-c", "true"], cwd="/w") == ["bash", "-c", "true"]
    notice = unavailable_notice("ask", missing, settings.also)
    assert notice is not None
    assert "the commands of gates (sandbox.also) run unsandboxed" in notice
    assert "every command asks" not in notice
    assert unavailable_notice("ask", missing) is None


def test_installs_reach_the_registries_and_the_preview_keeps_the_network(tmp_path: Path) -> None:
    also = ("install", "preview", "gates")
    install = _sandbox(tmp_path, "install", also).wrap(["true"], cwd=str(tmp_path))
    gates = _sandbox(tmp_path, "gates", also).wrap(["true"], cwd=str(tmp_path))
    preview = _sandbox(tmp_path, "preview", also).wrap(["true"], cwd=str(tmp_path))
    assert "HTTPS_PROXY" in install and "--share-net" not in install
    assert "HTTPS_PROXY" not in gates and "--share-net" not in gates
    assert "--share-net" in preview and "HTTPS_PROXY" not in preview
    registries = {h for p in ("pypi", "npm", "crates", "go") for h in PRESETS[p]}
    installs = _sandbox(tmp_path, "install", also).sandbox()
    assert installs is not None and registries <= installs.hosts
    assert _sandbox(tmp_path, "install", ("gates",)).sandbox() is None


@pytest.mark.parametrize("also", [("gates", "hooks"), ()], ids=["sandboxed", "not"])
async def test_a_gate_command_and_a_hook_write_outside_only_without_the_setting(
    tmp_path: Path, outside: Path, also: tuple[str, ...]
) -> None:
    runner = SubprocessRunner(str(tmp_path), sandbox=_sandbox(tmp_path, "gates", also))
    gate = await runner.run(f"echo gate > {outside}/gate.txt && echo gate > in-gate.txt")
    hook = await run_hook(
        f"cat > {outside}/hook.json && echo hook > in-hook.txt",
        {"hook_event_name": "PostToolUse"},
        tmp_path,
        30.0,
        sandbox=_sandbox(tmp_path, "hooks", also),
    )
    wrote = sorted(os.listdir(outside))
    if also:
        assert gate.exit_code != 0 and "Read-only file system" in gate.output
        assert hook.exit_code != 0 and "Read-only file system" in hook.stderr
        assert wrote == []
        assert not (tmp_path / "in-gate.txt").exists()  # && stopped at the refusal
    else:
        assert gate.exit_code == 0 and hook.exit_code == 0, (gate.output, hook.stderr)
        assert wrote == ["gate.txt", "hook.json"]
        assert (tmp_path / "in-gate.txt").read_text() == "gate\n"
        assert (tmp_path / "in-hook.txt").read_text() == "hook\n"


async def test_an_mcp_server_started_sandboxed_cannot_read_the_ssh_keys(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = outside / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(outside))
    # The server's script in the workspace: a checkout under /tmp (as CI's)
    # is not seen inside the sandbox (its /tmp is private).
    reader = tmp_path / READER.name
    shutil.copyfile(READER, reader)
    spec = McpServerSpec(
        name="reader",
        source="settings",
        transport="stdio",
        command=sys.executable,
        args=("-S", str(reader)),
        cwd=str(tmp_path),
        trusted=True,
    )
    connection = McpConnection(
        spec, on_tools_changed=lambda: None, sandbox=_sandbox(tmp_path, "mcp", ("mcp",))
    )
    await connection.start(60.0)
    try:
        result = await connection.call("read", {"path": str(key)}, 30.0)
    finally:
        await connection.stop()
    text = str(result["content"][0]["text"])
    assert text.startswith("cannot read:") and "No such file" in text, text
    assert key.read_text() == "PRIVATE KEY\n"  # there outside the sandbox


def test_the_installs_have_a_runner_of_their_own_and_the_gates_theirs(tmp_path: Path) -> None:
    gates_runner, install_runner = FakeCommandRunner(), FakeCommandRunner()
    config = load_config(
        {"gates": {"dependencies": {"commands": {"pyproject.toml": "pip install -e ."}}}}
    ).gates
    pipeline = build_gates(
        config, FakeDiagnostics(), gates_runner, [], tmp_path, install_runner=install_runner
    )
    assert pipeline.dependencies is not None
    assert pipeline.dependencies.runner is install_runner
    alone = build_gates(config, FakeDiagnostics(), gates_runner, [], tmp_path)
    assert alone.dependencies is not None and alone.dependencies.runner is gates_runner


async def test_the_tests_gate_runs_in_the_sandbox_and_its_tests_cannot_write_outside(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate's shadow tree (in the machine's temporary folder) stays
    reachable: the verdict is as without the sandbox, and a test that
    writes outside fails before the run and after it."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    tests = (
        "from pathlib import Path\nfrom mod import first_n\n\n\n"
        "def test_first_two():\n    assert first_n(2) == [1, 2]\n\n\n"
        # It names first_n: the gate's per-test selection runs it too.
        f"def test_writes_outside():\n    first_n(1)\n    Path({str(outside)!r}, 'x').write_text('x')\n"
    )
    good = "def first_n(n):\n    return list(range(1, n + 1))\n"
    root = project(tmp_path / "proj", {"mod.py": good, "tests/test_mod.py": tests})
    runner = SubprocessRunner(str(root), sandbox=_sandbox(root, "gates", ("gates",)))
    gate = TestGate(root, runner, TestsGateConfig(), python=sys.executable, sandboxed=lambda: True)
    workspace = FakeWorkspace({"mod.py": good}, root=str(root))
    await changed(gate, workspace, "mod.py", good.replace("n + 1", "n + 2"))
    try:
        outcome = await verdict(gate, workspace, "mod.py")
        # Its compiled modules went to the one folder it may write, the
        # tree's own, not the user's prefix that runs outside import.
        tree = gate.runs.trees["now"]
        own = mirror(tree.own_pycache, tree.root)
        assert {p.name.split(".")[0] for p in own.rglob("*.pyc")} == {"mod", "test_mod"}
        assert not mirror(tree.shared_pycache, tree.root).exists()
    finally:
        await gate.close()
    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ], outcome
    assert "tests/test_mod.py::test_writes_outside" in outcome.detail
    assert "failing before the run too" in outcome.detail
    assert os.listdir(outside) == []


async def test_a_warm_run_of_sandboxed_gates_is_forked_inside_their_sandbox(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``also: ["gates"]`` the warm pytest starts in the gates' sandbox
    (its socket folder and both shadow trees' bound): a run is forked warm
    and its tests cannot write outside (a folder of the host's, the host's
    ``/tmp``). Once the setting leaves the gates out, the kept process
    started in the sandbox no longer serves: a new one starts outside, as
    without the setting."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    host_tmp = os.path.join(tempfile.gettempdir(), f"rein-host-tmp-{os.getpid()}-{id(tmp_path)}")
    tests = (
        "from pathlib import Path\nfrom mod import first_n\n\n\n"
        f"def test_writes_outside():\n    first_n(1)\n    Path({str(outside)!r}, 'x').write_text('x')\n\n\n"
        f"def test_writes_the_hosts_tmp():\n    first_n(1)\n    Path({host_tmp!r}).write_text('x')\n"
    )
    good = "def first_n(n):\n    return list(range(1, n + 1))\n"
    root = project(tmp_path / "proj", {"mod.py": good, "tests/test_mod.py": tests})
    settings = [SandboxSettings(also=("gates",))]
    if not sandbox_status().works:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox_status().why_not}")
    sandbox = OtherCommandsSandbox(str(root), lambda: settings[0], "gates")
    gate = TestGate(
        root,
        SubprocessRunner(str(root), sandbox=sandbox),
        TestsGateConfig(),
        python=sys.executable,
        launcher=KeptProcessLauncher(str(root), sandbox),
        sandboxed=lambda: sandbox.sandbox() is not None,
    )
    workspace = FakeWorkspace({"mod.py": good}, root=str(root))
    try:
        await changed(gate, workspace, "mod.py", good + "\n")
        assert await gate.warm_ready(60.0)
        outcome = await verdict(gate, workspace, "mod.py")
        assert "first" in gate.warm_runs, outcome.detail
        assert outcome.detail.startswith("1 of 2 tests passed"), outcome
        assert "tests/test_mod.py::test_writes_outside" in outcome.detail
        assert os.listdir(outside) == []
        assert os.path.basename(host_tmp) not in os.listdir(tempfile.gettempdir())
        # A stranger (here outside the sandbox) reaches the socket, but
        # not with the token: refused, it runs pytest itself.
        assert gate.runs.warm is not None
        found = gate.runs.warm.client()
        assert found is not None
        report = tmp_path / "stranger"
        stranger = await asyncio.create_subprocess_exec(
            *[sys.executable, "-I", "-S", found.script, found.socket, "not-it", "--version"],
            env={**os.environ, "REIN_TESTS_REPORT": str(report)},
            stdout=asyncio.subprocess.DEVNULL,
        )
        assert await asyncio.wait_for(stranger.wait(), 60) == 0
        refusal = await asyncio.to_thread(report.with_name("stranger.cold").read_text)
        assert refusal.endswith("not the gate's own client (its token)"), refusal
        settings[0] = SandboxSettings(also=())  # the person took "gates" out of sandbox.also
        gate.on_validated(1)
        await changed(gate, workspace, "mod.py", good.replace("n + 1", "1 + n"))
        assert await gate.warm_ready(60.0)
        after = await verdict(gate, workspace, "mod.py")
        assert "first" in gate.warm_runs, after
        assert os.listdir(outside) == ["x"]  # as without the sandbox
        assert os.path.basename(host_tmp) in os.listdir(tempfile.gettempdir())
    finally:
        await gate.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(host_tmp)


async def test_a_gate_command_writes_only_the_scratch_folder_it_is_given(
    tmp_path: Path, outside: Path
) -> None:
    """Only the folder the caller names (the gate's own shadow) is bound
    writable: not another workspace's shadow in the same temporary folder,
    not a link planted there to a folder outside, not a folder elsewhere."""
    own = tempfile.mkdtemp(prefix="rein-tests-")
    other = tempfile.mkdtemp(prefix="rein-tests-")
    link = os.path.join(tempfile.gettempdir(), f"rein-tests-link-{os.getpid()}")
    os.symlink(outside, link)
    try:
        runner = SubprocessRunner(str(tmp_path), sandbox=_sandbox(tmp_path, "gates", ("gates",)))
        lines = [f"echo x > {p}/f || echo refused" for p in (own, other, link, outside)]
        result = await runner.run("; ".join(lines), writable=[own, link, str(outside)])
        assert result.output.count("refused") == 3, result.output
        assert os.listdir(own) == ["f"] and os.listdir(other) == [] and os.listdir(outside) == []
    finally:
        os.unlink(link)
        shutil.rmtree(own)
        shutil.rmtree(other)


def test_a_sandbox_lives_while_its_owner_may_run_commands_in_it(tmp_path: Path) -> None:
    """A settings change makes a new sandbox, and the old one's temporary
    folder stays (its commands may still run) however many follow; it
    goes with the owner that held it."""
    settings = [SandboxSettings(also=("mcp",))]
    owner = OtherCommandsSandbox(str(tmp_path), lambda: settings[-1], "mcp")
    first = owner.sandbox()
    assert first is not None
    temp = first.temp_dir()
    for n in range(20):
        settings.append(SandboxSettings(also=("mcp",), hidden=(f"/nonexistent/{n}",)))
        owner.wrap(["true"], cwd=str(tmp_path))
    del first
    gc.collect()
    assert os.path.isdir(temp)
    settings.append(settings[0])
    again = owner.sandbox()
    assert again is not None and again.temp_dir() == temp
    del owner, again
    gc.collect()
    assert not os.path.exists(temp)


async def test_an_install_runs_in_its_sandbox_with_the_caches_in_its_temporary_folder(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home folder is read-only inside: npm's cache is the sandbox's."""
    monkeypatch.setenv("HOME", str(outside))
    (tmp_path / "dep").mkdir()
    (tmp_path / "dep" / "package.json").write_text('{"name": "dep", "version": "1.0.0"}')
    (tmp_path / "package.json").write_text('{"name": "app", "version": "1.0.0"}')
    runner = SubprocessRunner(str(tmp_path), sandbox=_sandbox(tmp_path, "install", ("install",)))
    result = await runner.run("npm install --no-audit --no-fund --offline ./dep", timeout_s=120)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "node_modules" / "dep" / "package.json").exists()
    assert os.listdir(outside) == []


async def test_an_installs_cargo_home_is_its_own_with_the_persons_configuration(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cargo's cache is its home (read-only inside): the install sandbox's
    ``CARGO_HOME`` is in its temporary folder, where the person's
    configuration is linked (not their credentials)."""
    rustup = os.environ.get("RUSTUP_HOME") or str(Path.home() / ".rustup")
    monkeypatch.setenv("RUSTUP_HOME", rustup)  # the toolchains stay where they are
    monkeypatch.setenv("HOME", str(outside))
    (outside / ".cargo").mkdir()
    (outside / ".cargo" / "config.toml").write_text("[net]\noffline = true\n")
    (outside / ".cargo" / "credentials.toml").write_text('[registry]\ntoken = "x"\n')
    install = _sandbox(tmp_path, "install", ("install",))
    argv = install.wrap(["true"], cwd=str(tmp_path))
    sandbox = install.sandbox()
    assert sandbox is not None
    cargo_home = Path(sandbox.temp_dir()) / "caches" / "cargo"
    at = argv.index("CARGO_HOME")
    assert argv[at - 1 : at + 2] == ["--setenv", "CARGO_HOME", str(cargo_home)]
    assert os.readlink(cargo_home / "config.toml") == str(outside / ".cargo" / "config.toml")
    assert sorted(os.listdir(cargo_home)) == ["config.toml"]
    gates = _sandbox(tmp_path, "gates", ("gates",)).wrap(["true"], cwd=str(tmp_path))
    assert "CARGO_HOME" not in gates  # the installs' only
    cargo = shutil.which("cargo")
    if cargo is None:
        return  # the rest is cargo itself reading them
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nitoa = "1"\n'
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("")
    runner = SubprocessRunner(str(tmp_path), sandbox=install)
    result = await runner.run(f"{cargo} fetch", timeout_s=60)
    # The person's configuration was read (offline), its cache is the sandbox's.
    assert "you're using offline mode" in result.output, result.output
    assert (cargo_home / ".package-cache").exists()
    assert sorted(os.listdir(outside / ".cargo")) == ["config.toml", "credentials.toml"]


async def test_a_gate_command_the_sandbox_stopped_says_so(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by ``npm test`` as the runtime gate: nyc wrote a folder in the
    home (read-only inside) and the gate's blocker was a bare EROFS, which
    the model took for its own bug. The note says it was the sandbox, and
    which settings the person can change (the model cannot)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(outside / "xdg"))
    root = tmp_path / "ws"
    root.mkdir()
    runner = SubprocessRunner(str(root), sandbox=_sandbox(root, "gates", ("gates",)))
    target = outside / ".node-spawn-wrap"
    failed = await runner.run(f"mkdir {target}", timeout_s=60)
    assert failed.exit_code != 0 and not target.exists()
    assert "Read-only file system" in failed.output
    note = failed.output.rstrip().splitlines()[-1]
    assert note.startswith("[The command ran in Rein's sandbox: it may write only in ")
    assert "`sandbox.writable`" in note and "`sandbox.also`" in note
    assert f"the build caches ({outside / 'xdg' / 'rein' / 'sandbox'}/ws-" in note
    assert "unsandboxed: true" not in note  # run_command's way out, not a gate's
    plain = await runner.run("exit 3", timeout_s=60)
    assert plain.exit_code == 3 and plain.output == ""
    outside_runner = SubprocessRunner(str(root), sandbox=_sandbox(root, "gates", ()))
    unsandboxed = await outside_runner.run(f"ls {outside}/missing", timeout_s=60)
    assert unsandboxed.exit_code != 0 and "Rein's sandbox" not in unsandboxed.output


async def test_what_a_gate_or_the_preview_creates_in_a_protected_path_is_moved_aside(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by use: under the default, a conftest the model wrote made
    ``.git/config`` (a ``core.fsmonitor`` the person's git runs) and
    ``.vscode/settings.json`` in a workspace that had neither, from the tests
    gate's sandbox, and they stayed (only run_command's were moved aside)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(outside / "xdg"))
    root = tmp_path / "ws"
    root.mkdir()
    runner = SubprocessRunner(str(root), sandbox=_sandbox(root, "gates", ("gates",)))
    plant = (
        "mkdir -p .git .vscode && printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config"
        " && echo '{}' > .vscode/settings.json"
    )
    result = await runner.run(plant, timeout_s=60)
    assert result.exit_code == 0, result.output
    assert not (root / ".git").exists() and not (root / ".vscode" / "settings.json").exists()
    assert (root / ".git.rein-quarantine" / "config").read_text().endswith("evil\n")
    assert ".git (now .git.rein-quarantine)" in result.output
    assert "`sandbox.also`" in result.output and "unsandboxed" not in result.output
    # The person's own .git, made after that command, stays at the next one.
    (root / ".git").mkdir()
    again = await runner.run("true", timeout_s=60)
    assert (root / ".git").is_dir() and "moved it aside" not in again.output
    # The preview: what it made goes when it ends.
    factory = SubprocessPreviewFactory(
        str(root), sandbox=_sandbox(root, "preview", ("gates", "preview"))
    )
    preview = await factory.start("echo '{}' > .mcp.json && echo made && sleep 30")
    assert await preview.read_line() == "made"
    assert (root / ".mcp.json").exists()
    await preview.stop(2.0)
    assert not (root / ".mcp.json").exists() and (root / ".mcp.json.rein-quarantine").exists()
