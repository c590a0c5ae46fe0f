"""The sandbox's policy (pure), its bubblewrap command line, its macOS
profile text, the failure notes, the settings and the probe's answers."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from rein.config import load_config
from rein.harness.errors import ConfigError
from rein.headless.doctor import sandbox_line
from rein.sandboxing import BwrapSandbox, SandboxSettings, SandboxStatus, proxy, sandbox_policy
from rein.sandboxing.bwrap import bwrap_argv
from rein.sandboxing.failures import failure_note
from rein.sandboxing.macos import macos_argv, seatbelt_profile
from rein.sandboxing.probe import forget_probes, sandbox_status, unavailable_notice
from rein.sandboxing.proxy import allowed_hosts, host_allowed
from tests.sandboxing.hello_host import hello_host

HOME = "/home/p"
DIRS = {"/ws", "/ws/.git", "/ws/.git/hooks", "/ws/.git/info", f"{HOME}/.ssh", f"{HOME}/.aws"}
FILES = {
    "/ws/.git/config",
    f"{HOME}/.netrc",
    f"{HOME}/.cargo/credentials.toml",
    "/ws/.rein",
    "/opt/cache",
    "/etc/extra",
}


def _policy(settings: SandboxSettings | None = None, links: dict[str, str] | None = None):
    links = links or {}
    return sandbox_policy(
        "/ws/",
        "/tmp/rein-sandbox-x",
        settings,
        home=HOME,
        is_dir=lambda p: p in DIRS,
        exists=lambda p: p in DIRS | FILES | set(links),
        resolve=lambda p: links.get(p, p),
    )


def test_the_policy_hides_secrets_and_keeps_gits_and_reins_files_read_only() -> None:
    policy = _policy(SandboxSettings(hidden=["/etc/extra"], writable=["/opt/cache", "/nope"]))
    assert policy.root == "/ws" and policy.temp_dir == "/tmp/rein-sandbox-x"
    assert policy.hidden_dirs == (f"{HOME}/.ssh", f"{HOME}/.aws")
    # cargo's registry token: the install sandbox reaches crates.io
    assert policy.hidden_files == (
        f"{HOME}/.netrc",
        f"{HOME}/.cargo/credentials.toml",
        "/etc/extra",
    )
    assert policy.read_only == ("/ws/.git", "/ws/.rein")  # .git as a whole
    assert policy.pinned == ()
    assert policy.missing == (
        "/ws/.gitmodules",
        "/ws/.vscode/settings.json",
        "/ws/.vscode/mcp.json",
        "/ws/.vscode/tasks.json",  # a folderOpen task runs when the folder opens
        "/ws/.mcp.json",
    )
    assert policy.writable == ("/opt/cache",)  # a folder that is not there is left out
    assert policy.network is False


def test_a_hidden_symlink_hides_where_it_points_too() -> None:
    policy = _policy(links={f"{HOME}/.gnupg": "/vault/gnupg", "/vault/gnupg": "/vault/gnupg"})
    assert f"{HOME}/.gnupg" in policy.hidden_files and "/vault/gnupg" in policy.hidden_files


def test_a_dangling_symlink_is_neither_hidden_nor_writable() -> None:
    # bubblewrap cannot mount over it: it would fail every command.
    links = {f"{HOME}/.gnupg": "/vault/gone", "/opt/link": "/opt/gone"}
    policy = sandbox_policy(
        "/ws",
        "/t",
        SandboxSettings(writable=["/opt/link"]),
        home=HOME,
        is_dir=lambda p: False,
        exists=lambda p: p in links,
        resolve=lambda p: links.get(p, p),
    )
    assert policy.hidden_files == () and policy.writable == ()


def test_the_bwrap_line_isolates_first_then_opens_then_protects_then_hides() -> None:
    argv = bwrap_argv(_policy(), ["bash", "-c", "make"], cwd="/ws/sub", bwrap="/usr/bin/bwrap")
    text = " ".join(argv)
    assert text.startswith(
        "/usr/bin/bwrap --unshare-all --cap-drop ALL --die-with-parent --new-session "
        "--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run "
        "--unsetenv SSH_AUTH_SOCK --unsetenv SSH_AGENT_PID --unsetenv GPG_AGENT_INFO "
        "--unsetenv DBUS_SESSION_BUS_ADDRESS"
    )
    assert (
        "--bind /ws /ws --bind /tmp/rein-sandbox-x /tmp/rein-sandbox-x --ro-bind /ws/.git /ws/.git "
        "--ro-bind /ws/.rein /ws/.rein"
    ) in text
    assert "--unsetenv XDG_RUNTIME_DIR" in text
    assert "--share-net" not in argv
    assert f"--tmpfs {HOME}/.ssh --remount-ro {HOME}/.ssh" in text
    assert f"--ro-bind /dev/null {HOME}/.netrc" in text
    assert text.endswith(
        "--setenv TMPDIR /tmp/rein-sandbox-x --setenv REIN_SANDBOX 1 --chdir /ws/sub "
        '-- bash -c ulimit -u 4096 && exec "$@" rein-sandbox bash -c make'
    )


def test_the_macos_profile_goes_from_wide_to_narrow_and_escapes_paths() -> None:
    policy = sandbox_policy(
        '/w"s', "/t", SandboxSettings(hidden=["/x\\y"]), home=HOME, exists=lambda p: p == "/x\\y"
    )
    profile = seatbelt_profile(policy)
    lines = profile.splitlines()
    assert lines[:4] == [
        "(version 1)",
        ";; Rein's sandbox of the model's commands (rein.sandboxing.macos).",
        "(allow default)",
        "(deny network*)",
    ]
    assert '(allow file-write*\n  (subpath "/w\\"s")\n  (subpath "/t")' in profile
    assert '(deny file-read* file-write*\n  (literal "/x\\\\y"))' in profile
    assert '(subpath "/w\\"s/.git")\n  (subpath "/w\\"s/.gitmodules")' in profile
    order = [
        profile.index(s) for s in ("(deny file-write*)", "(allow file-write*", "(deny file-read*")
    ]
    assert order == sorted(order)
    assert profile.endswith("(deny signal)\n(allow signal (target same-sandbox))\n")
    assert macos_argv(policy, ["true"])[:2] == ["sandbox-exec", "-p"]


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("touch: cannot touch '/x': Read-only file system", "may write only in W"),
        ("mount: /ws/mnt: permission denied. Operation not permitted", "may write only in W"),
        ("bwrap: Can't find source path /ws/.git/info: No such file", "could not start"),
        ("curl: (6) Could not resolve host: pypi.org", "it has no network"),
        ("OSError: [Errno 101] Network is unreachable", "it has no network"),
    ],
)
def test_a_failure_the_sandbox_may_cause_gets_a_note(output: str, says: str) -> None:
    note = failure_note(output, "W")
    assert note is not None and says in note
    assert "`unsandboxed: true` and a `reason`" in note


@pytest.mark.parametrize(
    "output",
    [
        "FAILED tests/test_x.py::test_y - assert 1 == 2",
        "E   PermissionError: [Errno 13] Permission denied: 'x'",
        "E   ConnectionRefusedError: [Errno 111] Connection refused",
    ],
)
def test_an_ordinary_failure_gets_no_note(output: str) -> None:
    assert failure_note(output, "W") is None


def test_root_only_files_are_hidden_and_a_folder_holding_the_workspace_but_the_way() -> None:
    """A hidden folder that holds the workspace is hidden around it: what
    lies beside the way down to the workspace (a symlink is left out)."""
    dirs = {"/root", "/root/.claude", "/root/src", "/root/src/ws", "/root/src/other"}
    entries = {"/root": ["src", ".claude", "notes", "link"], "/root/src": ["ws", "other"]}
    policy = sandbox_policy(
        "/root/src/ws",
        "/t",
        SandboxSettings(hidden=["/root"]),
        home="/root",
        is_dir=lambda p: p in dirs,
        exists=lambda p: p in dirs | {"/root/notes", "/etc/shadow", "/etc/gshadow"},
        listdir=lambda p: entries[p],
        is_link=lambda p: p == "/root/link",
    )
    assert policy.hidden_dirs == ("/root/.claude", "/root/src/other")
    assert policy.hidden_files == ("/etc/shadow", "/etc/gshadow", "/root/notes")


def test_an_isolated_runs_sandbox_sees_none_of_reins_storage_but_its_copy(tmp_path: Path) -> None:
    """An isolated run's copy lives in Rein's storage folder (hidden: every
    session's transcript and file contents are there): the real sandbox
    hides the sessions, the other copies and their records, and the copy
    stays writable. The home is under /var/tmp (the sandbox's /tmp is
    private)."""
    forget_probes()
    home = Path(tempfile.mkdtemp(prefix="rein-home-", dir="/var/tmp"))
    try:
        storage = home / ".local/share/rein"
        tree = storage / "isolated/ses_1/tree"
        (storage / "isolated/ses_2/tree").mkdir(parents=True)
        tree.mkdir(parents=True)
        (storage / "sessions.db").write_text("TRANSCRIPT\n")
        (storage / "isolated/ses_2/tree/b.py").write_text("OTHER RUN\n")
        (storage / "isolated/ses_2.json").write_text("RECORD\n")
        policy = sandbox_policy(str(tree), str(tmp_path), home=str(home))
        argv = bwrap_argv(
            policy,
            [
                "bash",
                "-c",
                "cat ../../../sessions.db ../../ses_2/tree/b.py ../../ses_2.json; "
                "ls ../..; echo mine > a.py",
            ],
            cwd=str(tree),
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        assert (tree / "a.py").read_text() == "mine\n", done.stderr
        assert done.stdout == "ses_1\nses_2\nses_2.json\n", done.stderr
    finally:
        shutil.rmtree(home)


def test_the_settings_name_a_bad_path() -> None:
    with pytest.raises(ConfigError, match=r"rein.sandbox.hidden: .*'secrets': a path is absolute"):
        load_config({"sandbox": {"hidden": ["secrets"]}})
    with pytest.raises(ConfigError, match=r"rein.sandbox.writable: .*must be a list of paths"):
        load_config({"sandbox": {"writable": "/opt"}})
    with pytest.raises(ConfigError, match=r"rein.approval.command: .*'sandboxed'"):
        load_config({"approval": {"command": "sandbox"}})


def test_a_missing_bubblewrap_says_so_and_how_to_install_it() -> None:
    forget_probes()
    status = sandbox_status("/nonexistent/bwrap")
    assert not status.works and status.program is None
    assert status.why_not is not None and "apt-get install bubblewrap" in status.why_not
    notice = unavailable_notice("sandboxed", "/nonexistent/bwrap")
    assert notice is not None and notice.endswith("; every command asks")
    assert unavailable_notice("ask", "/nonexistent/bwrap") is None


def test_a_bubblewrap_that_cannot_start_a_sandbox_says_why(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    forget_probes()
    status = sandbox_status(str(fake))
    assert status.program == str(fake)
    assert status.why_not is not None
    assert "(bwrap: No permissions to creating new namespace)" in status.why_not
    assert "user namespaces may be off" in status.why_not


def test_the_real_sandbox_runs_a_command_in_the_workspace(tmp_path: Path) -> None:
    """One real bubblewrap start (the escapes are tests/e2e/test_sandbox.py).
    The folder outside is the test's own, under /var/tmp (the sandbox's
    /tmp is private)."""
    forget_probes()
    sandbox = BwrapSandbox(str(tmp_path))
    if sandbox.unavailable() is not None:
        pytest.fail(f"bubblewrap must work on the test machines: {sandbox.unavailable()}")
    outside = Path(tempfile.mkdtemp(prefix="rein-outside-", dir="/var/tmp"))
    try:
        argv = sandbox.wrap(
            ["bash", "-c", f'echo "$REIN_SANDBOX" > in.txt; touch {outside}/x'], cwd=str(tmp_path)
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        assert list(outside.iterdir()) == []
    finally:
        shutil.rmtree(outside)
    assert (tmp_path / "in.txt").read_text() == "1\n"
    assert "Read-only file system" in done.stderr
    note = sandbox.failure_note(done.stderr)
    assert note is not None and str(tmp_path) in note


def test_the_network_setting_takes_presets_and_host_names_only() -> None:
    assert load_config({"sandbox": {"network": ["pypi", "example.com"]}}).sandbox.network == (
        "pypi",
        "example.com",
    )
    with pytest.raises(ConfigError, match=r"rein.sandbox.network: .*'http://x': each entry is"):
        load_config({"sandbox": {"network": ["http://x"]}})


def test_a_listed_host_is_reached_through_the_proxy_and_only_through_it(tmp_path: Path) -> None:
    """A real sandbox and proxy: 127.0.0.1 listed (the host's loopback, for
    the test), ``localhost`` not; going around the proxy finds no network."""

    with hello_host() as port:
        sandbox = BwrapSandbox(str(tmp_path), SandboxSettings(network=[f"127.0.0.1:{port}"]))
        lines = [
            f"curl -sS -m 5 http://127.0.0.1:{port}/",
            f"curl -sSf -m 5 http://localhost:{port}/ || echo refused=$?",
            f"curl -sS -m 5 --noproxy '*' http://127.0.0.1:{port}/ || echo around=$?",
        ]
        argv = sandbox.wrap(["bash", "-c", "; ".join(lines)], cwd=str(tmp_path))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == "hello from the host\nrefused=22\naround=7\n", done.stderr
    assert "The requested URL returned error: 403" in done.stderr


def test_the_doctor_line_says_what_works_with_what() -> None:
    works = SandboxStatus("/usr/bin/bwrap", None, "bubblewrap 0.8.0")
    assert sandbox_line(works) == "sandbox: works (bubblewrap 0.8.0 at /usr/bin/bwrap)"
    broken = SandboxStatus("/usr/bin/bwrap", "bubblewrap cannot create a sandbox here (x)")
    assert sandbox_line(broken) == (
        "sandbox: does not work here: bubblewrap cannot create a sandbox here (x); with "
        'approval.command "sandboxed" every command asks'
    )
    also = ("gates", "preview")
    assert sandbox_line(works, also) == (
        "sandbox: works (bubblewrap 0.8.0 at /usr/bin/bwrap); also for gates, preview "
        "(sandbox.also)"
    )
    assert sandbox_line(broken, also).endswith("; gates, preview (sandbox.also) run unsandboxed")


def test_a_listed_host_is_allowed_on_80_and_443_or_the_port_its_entry_names() -> None:
    hosts = allowed_hosts(["pypi", "Example.com.", "127.0.0.1:8080"])
    assert host_allowed(hosts, "pypi.org", 443) and host_allowed(hosts, "pypi.org.", 80)
    assert host_allowed(hosts, "example.com", 443)
    assert not host_allowed(hosts, "pypi.org", 22) and not host_allowed(hosts, "127.0.0.1", 443)
    assert host_allowed(hosts, "127.0.0.1", 8080)
    assert load_config({"sandbox": {"network": ["example.com:8443"]}}).sandbox.network == (
        "example.com:8443",
    )
    with pytest.raises(ConfigError, match=r"'example.com:0': each entry is"):
        load_config({"sandbox": {"network": ["example.com:0"]}})


def test_the_proxy_refuses_connections_over_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxy, "MAX_CONNECTIONS", 1)
    path = str(tmp_path / "p.sock")
    server = proxy.AllowlistProxy(path, frozenset({"pypi.org"}))
    first, second = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
    try:
        first.connect(path)  # says nothing: its handler holds the one slot
        second.connect(path)
        second.settimeout(10)
        assert second.recv(100).startswith(b"HTTP/1.1 503 Service Unavailable")
    finally:
        first.close()
        second.close()
        server.close()


def test_the_real_sandbox_follows_the_workspace_from_one_command_to_the_next(
    tmp_path: Path,
) -> None:
    """The policy is computed for every command: a protected path deleted
    since does not break the start, a secret created since is hidden, and
    a protected path a command creates (``git init``'s ``.git``) is
    moved aside after it, with a note."""
    forget_probes()
    ws = tmp_path / "ws"
    (ws / ".rein").mkdir(parents=True)
    sandbox = BwrapSandbox(str(ws), SandboxSettings(hidden=[str(ws / "later.key")]))

    def run(command: str) -> subprocess.CompletedProcess[str]:
        argv = sandbox.wrap(["bash", "-c", command], cwd=str(ws))
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)

    assert run("true").returncode == 0 and sandbox.after_run() is None
    (ws / ".rein").rmdir()
    (ws / "later.key").write_text("SECRET\n")
    later = run("cat later.key; git init -q . && echo '{}' > .mcp.json && echo made")
    assert later.returncode == 0, later.stderr
    assert later.stdout == "made\n"
    note = sandbox.after_run()
    assert note is not None and "Rein moved it aside" in note
    assert ".git (now .git.rein-quarantine), .mcp.json (now .mcp.json.rein-quarantine)" in note
    assert not (ws / ".git").exists() and not (ws / ".mcp.json").exists()
    assert (ws / ".mcp.json.rein-quarantine").read_text() == "{}\n"
    assert sandbox.after_run() is None


def test_reins_own_python_under_a_private_folder_is_bound_again() -> None:
    # A checkout (and its virtualenv) in /tmp: the sandbox's private /tmp
    # would hide the Python the forwarder and Rein's own commands run.
    venv = Path(tempfile.mkdtemp(prefix="rein-venv-", dir="/tmp"))
    try:
        argv = bwrap_argv(
            _policy(), ["true"], cwd="/ws", bwrap="bwrap", runtime=[str(venv), "/usr", "/tmp/gone"]
        )
        text = " ".join(argv)
        bound = f"--ro-bind {venv} {venv}"
        assert bound in text and text.index(bound) < text.index("--bind /ws /ws")
        assert "--ro-bind /usr /usr" not in text  # not under a private folder
        assert "/tmp/gone" not in text  # not there: nothing to bind
    finally:
        venv.rmdir()


def test_the_sandboxes_hide_reins_storage_folder_wherever_it_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``storagePath``/``--storage``, else the default folder, which
    ``XDG_DATA_HOME`` moves out of the hidden ``~/.local/share/rein``."""
    from rein.config import ReinConfig

    configured = ReinConfig(storage_path="/srv/rein", sandbox=SandboxSettings(hidden=["/a"]))
    assert configured.sandbox_settings().hidden == ("/a", "/srv/rein")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert ReinConfig().sandbox_settings().hidden == (str(tmp_path / "rein"),)
    from rein.store import default_storage_path

    assert ReinConfig().sandbox_settings().hidden == (str(default_storage_path()),)
