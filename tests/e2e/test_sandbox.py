"""The escape suite of the sandbox (issue 38 item 4), over ``rein run``
with a scripted model and the default settings (``approval.command:
"sandboxed"``, nobody to approve): one run makes every attempt, each its
own ``run_command``; each attempt is then its own test (its id names it),
checked on the host: the file outside is not there, the secret was not
read, the process outside lives, nothing is left running. Zero succeed.

To keep it cheap, attempts that cannot affect each other are one turn's
tool calls, which run side by side (the reads, the writes outside, the
network and sockets, the signals); those that touch the workspace's
``.git`` or protected paths, and the process left behind, are a turn each.

The workspace, the folder outside it and the person's (fake) home are
under /var/tmp, not /tmp: the sandbox's /tmp is private, so a file there
would be out of reach for a reason that is not the one tested.

The run allows ``pypi`` (``sandbox.network``): a host not on the list is
refused by Rein's proxy, and going around the proxy finds no network. Its
runtime gate and a ``UserPromptSubmit`` hook run in the sandbox too
(``sandbox.also``): each tries to write outside, then marks the workspace
that it ran.

A second run has no bubblewrap (``sandbox.bwrap`` names none): it says so
once on stderr, and the command asks (and is refused, nobody being there).
It runs while the first does.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rein.sandboxing import DEFAULT_HIDDEN_PATHS
from tests.forkserver import REIN

NO_ANALYZERS = {"gates": {"analyzer": {"enabled": False}}}

#: The default secret paths that are files (the others are folders).
SECRET_FILES = {
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".claude.json",
}
#: secret file (relative to the home folder) -> its content: every path of
#: the policy's list (a folder gets a file inside).
SECRETS = {
    (rel if rel in SECRET_FILES else f"{rel}/secret"): f"SECRET-{rel}"
    for rel in DEFAULT_HIDDEN_PATHS
}
#: Variables naming a daemon's socket, set for ``rein run``: none reaches
#: the sandbox.
AGENT_VARIABLES = ("SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "GPG_AGENT_INFO")


@dataclass
class Box:
    base: Path
    ws: Path
    outside: Path
    home: Path
    port: int
    sleeper: subprocess.Popen[bytes]
    ends: dict[str, dict[str, Any]]
    stderr: str
    #: The run without bubblewrap (its folder, what it did).
    bare: Path
    bare_run: subprocess.CompletedProcess[str]


def _attempts(box_outside: Path, port: int, sleeper: int) -> dict[str, str]:
    out = str(box_outside)
    attempts = {
        "write-absolute": f"echo pwned > {out}/absolute.txt",
        "write-dotdot": "echo pwned > ../outside/dotdot.txt",
        "write-symlink": f"ln -s {out} link && echo pwned > link/symlink.txt",
        "write-hardlink": f"ln {out}/target.txt hard.txt && echo pwned >> hard.txt",
        "write-proc-self-root": f"echo pwned > /proc/self/root{out}/proc.txt",
        "write-proc-1-root": f"echo pwned > /proc/1/root{out}/proc1.txt",
        "write-bind-mount": f"mkdir -p mnt && mount --bind {out} mnt && echo pwned > mnt/mount.txt",
        "write-home": "echo pwned > ~/home.txt",
        "git-hooks": "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
        "git-config": "git config core.hooksPath /var/tmp",
        "git-replace": "mv .git .git-old && mkdir .git",
        # commondir makes git read its config and hooks from elsewhere.
        "git-commondir": (
            "mkdir -p evil && printf '[core]\\n\\tfsmonitor = \"touch pwned; echo\"\\n' "
            "> evil/config && echo ../evil > .git/commondir"
        ),
        "git-modules-config": (
            "mkdir -p .git/modules/sub && printf '[core]\\n\\thooksPath = /var/tmp\\n' "
            "> .git/modules/sub/config"
        ),
        "git-commit": "git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x",
        # Protected paths that did not exist: created, then moved aside by Rein.
        "create-protected": (
            "echo '{}' > .mcp.json && mkdir -p .vscode && echo '{}' > .vscode/settings.json"
        ),
        # No daemon's socket: /run is private, the variables are unset.
        "socket-run": "find /run/ /var/run/ -mindepth 1 | grep .",
        "socket-agent": (
            "env | grep -E '^(SSH_AUTH_SOCK|DBUS_SESSION_BUS_ADDRESS|XDG_RUNTIME_DIR|"
            "GPG_AGENT_INFO)=' || python3 -c \"import os, socket; "
            "socket.socket(socket.AF_UNIX).connect(os.environ['SSH_AUTH_SOCK'])\""
        ),
        "network-loopback": (
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\""
        ),
        "network-outside": (
            "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 3)\""
        ),
        "network-dns": "python3 -c \"import socket; socket.getaddrinfo('example.com', 80)\"",
        # The allowlist (``pypi``) through Rein's proxy, and around it.
        "network-proxy-not-listed": f"curl -sSf -m 5 http://127.0.0.1:{port}/",
        "network-around-the-proxy": f"curl -sS -m 5 --noproxy '*' http://127.0.0.1:{port}/",
        "network-raw-socket": (
            'python3 -c "import socket; '
            'socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"'
        ),
        "signal-outside": f"kill -9 {sleeper}",
        "see-outside": f"test -e /proc/{sleeper}",
        # Holds a lock on a workspace file for as long as it lives: the test
        # checks the lock is free (and kills that exact holder if not).
        # The lock file exists before the command ends whatever the timing;
        # a holder of it after the run is a process the sandbox left behind.
        "left-behind": "touch left.lock && { setsid flock left.lock sleep 600 </dev/null "
        ">/dev/null 2>&1 & } && echo started",
        "read-etc-shadow": "cat /etc/shadow",
        # Rein's own store (``--storage``, not the default folder): the
        # session's transcript holds the task, "try to escape".
        "read-storage": f"cat {box_outside.parent}/store/sessions.db* | grep -a -o 'try to esc[a]pe'",
    }
    for rel in SECRETS:
        attempts[f"read-{rel.lstrip('.').replace('/', '-')}"] = f"cat ~/{rel}"
    return attempts


def _lock_holders(path: Path) -> list[int]:
    """The pids (host's) holding a lock on ``path``, from /proc/locks."""
    inode = path.stat().st_ino
    holders = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        pid, where = fields[4], fields[5]
        if where.rsplit(":", 1)[-1] == str(inode):
            holders.append(int(pid))
    return holders


ATTEMPTS = list(_attempts(Path("/x"), 1, 1))


#: The attempts (by the start of their name) that run side by side, one
#: turn each group; every other attempt is a turn of its own.
SIDE_BY_SIDE = ("read-", "write-", "network-", "socket-", "signal-", "see-")


def _turns(attempts: dict[str, str]) -> list[dict[str, Any]]:
    """One turn per group of :data:`SIDE_BY_SIDE`, one per other attempt."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for name, command in attempts.items():
        group = next((g for g in SIDE_BY_SIDE if name.startswith(g)), name)
        if group in ("signal-", "see-"):
            group = "signal-"
        call = {"name": "run_command", "arguments": {"command": command}, "id": name}
        groups.setdefault(group, []).append(call)
    return [{"tool_calls": calls} for calls in groups.values()]


def _start_rein_run(
    box_ws: Path, base: Path, home: Path, turns: list[dict[str, Any]], config: dict[str, Any]
) -> subprocess.Popen[str]:
    script = base / f"script-{len(list(base.glob('script-*')))}.json"
    script.write_text(json.dumps({"turns": turns}))
    config_file = script.with_suffix(".config.json")
    config_file.write_text(json.dumps(config))
    env = {**os.environ, "HOME": str(home)}
    env.update({name: str(base / "agent.sock") for name in AGENT_VARIABLES})
    env.pop("REIN_CONFIG", None)
    args = [*REIN, "run", "try to escape", "-w", str(box_ws), "--provider", "replay"]
    args += ["--script", str(script), "--config", str(config_file)]
    args += ["--storage", str(base / "store"), "--json"]
    return subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def _finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _tool_ends(stdout: str) -> dict[str, dict[str, Any]]:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return {e["tool_call_id"]: e for e in events if e.get("type") == "tool_call_end"}


@pytest.fixture(scope="module")
def box() -> Iterator[Box]:
    base = Path(tempfile.mkdtemp(prefix="rein-escape-", dir="/var/tmp"))
    ws, outside, home = base / "ws", base / "outside", base / "home"
    for folder in (ws, outside, home):
        folder.mkdir()
    (outside / "target.txt").write_text("original\n")
    for rel, content in SECRETS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(content + "\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(base / "agent.sock"))
    agent.listen(8)
    sleeper = subprocess.Popen(["sleep", "300"])
    attempts = _attempts(outside, port, sleeper.pid)
    turns = _turns(attempts)
    turns.append(
        {
            "tool_calls": [
                {
                    "name": "run_command",
                    "arguments": {
                        "command": "touch asked.txt",
                        "unsandboxed": True,
                        "reason": "to see that it asks",
                    },
                    "id": "unsandboxed",
                }
            ]
        }
    )
    turns.append({"text": "done"})
    bare = base / "bare"
    (bare / "ws").mkdir(parents=True)
    bare_turns = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": f"touch {n}"}}]}
        for n in ("a", "b")
    ]
    bare_config = {**NO_ANALYZERS, "sandbox": {"bwrap": str(bare / "no-bwrap")}}
    without: subprocess.Popen[str] | None = None
    try:
        escape = f"echo pwned > {outside}/{{0}}.txt 2>/dev/null; echo ran > {{0}}-ran.txt"
        config = {
            "gates": {
                "analyzer": {"enabled": False},
                "runtime": {"command": escape.format("gate")},
            },
            "hooks": {
                "UserPromptSubmit": [
                    {"hooks": [{"type": "command", "command": escape.format("hook")}]}
                ]
            },
            "sandbox": {"network": ["pypi"], "also": ["gates", "hooks"]},
        }
        without = _start_rein_run(
            bare / "ws", bare, bare, [*bare_turns, {"text": "done"}], bare_config
        )
        done = _finish(_start_rein_run(ws, base, home, turns, config))
        bare_run = _finish(without)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        try:
            accepted = listener.accept()
            accepted[0].close()
            reached = True
        except BlockingIOError:
            reached = False
        ends = _tool_ends(done.stdout)
        for name in ("network-loopback", "network-proxy-not-listed", "network-around-the-proxy"):
            ends[name]["reached"] = reached
        yield Box(base, ws, outside, home, port, sleeper, ends, done.stderr, bare, bare_run)
    finally:
        if without is not None and without.poll() is None:  # the first run failed
            without.kill()
            without.wait()
        listener.close()
        agent.close()
        sleeper.kill()
        sleeper.wait()
        if os.path.ismount(ws / "mnt"):  # the bind mount escaped: undo it first
            subprocess.run(["umount", str(ws / "mnt")], check=False)
        shutil.rmtree(base, ignore_errors=True)


def _outcome(box: Box, name: str) -> str:
    end = box.ends[name]
    return f"{name}: {end['content']}"


@pytest.mark.parametrize("name", ATTEMPTS)
def test_the_attempt_ran_sandboxed_and_failed(
    box: Box, name: str, record_property: pytest.RecordProperty
) -> None:
    end = box.ends[name]
    # The attempt's outcome, in the test's report (-rA, the JUnit XML).
    print(_outcome(box, name))
    record_property("outcome", end["content"])
    assert end["details"].get("sandboxed") is True, end
    outside = sorted(p.name for p in box.outside.iterdir())
    assert outside == ["target.txt"], outside
    assert (box.outside / "target.txt").read_text() == "original\n"
    assert not (box.home / "home.txt").exists()
    code = end["details"]["exit_code"]
    if name.startswith("read-"):
        # Hidden: a folder is empty (no such file), a file is empty.
        assert "SECRET-" not in end["content"] and "root:" not in end["content"]
        assert "try to escape" not in end["content"]
    elif name.startswith("git-"):
        git = box.ws / ".git"
        assert not (git / "hooks" / "pre-commit").exists()
        assert not (git / "commondir").exists() and not (git / "modules").exists()
        config = subprocess.run(
            ["git", "-C", str(box.ws), "config", "--get", "core.hooksPath"],
            capture_output=True,
            text=True,
        )
        assert config.stdout == ""
        assert (git / "HEAD").is_file() and not (box.ws / ".git-old").exists()
        assert not (box.ws / "pwned").exists()
        assert code != 0 and "`unsandboxed: true` and a `reason`" in end["content"]
        assert "Read-only file system" in end["content"] or "busy" in end["content"]
    elif name == "create-protected":
        assert code == 0 and "Rein moved it aside" in end["content"], end["content"]
        assert not (box.ws / ".mcp.json").exists()
        assert not (box.ws / ".vscode" / "settings.json").exists()
    elif name.startswith("socket-"):
        assert code != 0 and "agent.sock" not in end["content"]
    elif name in ("network-loopback", "network-proxy-not-listed", "network-around-the-proxy"):
        assert end["reached"] is False and code != 0
    elif name == "network-outside":
        assert code != 0 and "Network is unreachable" in end["content"]
    elif name == "network-dns":
        assert code != 0 and "name resolution" in end["content"]
    elif name.startswith("network-") or name.startswith("write-"):
        assert code != 0
    elif name.startswith("signal-") or name == "see-outside":
        assert box.sleeper.poll() is None  # still alive
        assert code != 0
    elif name == "left-behind":
        holders = _lock_holders(box.ws / "left.lock")
        for pid in holders:  # escaped: end that exact process
            os.kill(pid, 9)
        assert holders == []
    else:
        pytest.fail(f"no check for {name}")


def test_a_failure_in_the_sandbox_tells_the_model_how_to_leave_it(box: Box) -> None:
    for name in ("write-absolute", "network-outside", "network-proxy-not-listed"):
        assert "`unsandboxed: true` and a `reason`" in box.ends[name]["content"]
    refused = box.ends["network-proxy-not-listed"]["content"]
    assert "The requested URL returned error: 403" in refused
    assert "it reaches only files.pythonhosted.org, pypi.org, through Rein's proxy" in refused


def test_the_runtime_gate_and_the_hook_ran_in_the_sandbox(box: Box) -> None:
    assert (box.ws / "gate-ran.txt").read_text() == "ran\n"
    assert (box.ws / "hook-ran.txt").read_text() == "ran\n"
    assert sorted(p.name for p in box.outside.iterdir()) == ["target.txt"]


def test_leaving_the_sandbox_asks_and_nobody_is_there(box: Box) -> None:
    end = box.ends["unsandboxed"]
    assert end["is_error"] is True
    assert end["details"] == {"denied": True, "reason": "approver_unavailable"}
    assert not (box.ws / "asked.txt").exists()
    assert "sandbox:" not in box.stderr  # it works: nothing to say at the start


def test_without_bubblewrap_the_run_says_so_once_and_every_command_asks(box: Box) -> None:
    done, ws = box.bare_run, box.bare / "ws"
    assert done.returncode == 0, done.stderr[-3000:]
    notices = [line for line in done.stderr.splitlines() if "sandbox:" in line]
    assert notices == [
        f"! sandbox: commands cannot run sandboxed here (bubblewrap ({box.bare}/no-bwrap) is "
        "not installed: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; "
        "Fedora: dnf install bubblewrap)); every command asks; the commands of gates, "
        "preview, install (sandbox.also) run unsandboxed"
    ]
    ends = list(_tool_ends(done.stdout).values())
    assert [e["details"].get("reason") for e in ends] == ["approver_unavailable"] * 2
    assert not (ws / "a").exists() and not (ws / "b").exists()
