"""What one sandboxed command may hold: its processes are bounded
(``RLIMIT_NPROC`` set inside the sandbox's user namespace), so a fork bomb
stops at the bound instead of filling the machine's process table. Real
bubblewrap."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from rein.sandboxing import BwrapSandbox, sandbox_policy
from rein.sandboxing.bwrap import MAX_PROCESSES, bwrap_argv
from rein.sandboxing.probe import forget_probes

#: Forks until it is refused or has 64 children, then prints how many.
FORKER = """
import os, time
children = []
for _ in range(64):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    children.append(pid)
print(len(children))
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""

#: The kernel does not bound root's processes: as root, the bound is
#: shown with an ordinary user (nobody).
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_a_sandboxed_command_runs_under_the_process_bound(tmp_path: Path) -> None:
    forget_probes()
    sandbox = BwrapSandbox(str(tmp_path))
    argv = sandbox.wrap(
        ["bash", "-c", "ulimit -u; ulimit -Hu; ulimit -Hu 99999"], cwd=str(tmp_path)
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout == f"{MAX_PROCESSES}\n{MAX_PROCESSES}\n", done.stderr
    assert done.returncode != 0  # the command cannot raise it


def test_a_fork_bomb_stops_at_the_bound_and_the_persons_processes_do_not_count() -> None:
    """The bound (32 here) counts the sandbox's processes only: 40 of the
    same user's processes outside do not take from it."""
    prefix = AS_NOBODY if os.geteuid() == 0 else []
    ws = Path(tempfile.mkdtemp(prefix="rein-bound-", dir="/var/tmp"))
    ws.chmod(0o777)
    outside = [
        subprocess.Popen([*prefix, "sleep", "60"], stdin=subprocess.DEVNULL) for _ in range(40)
    ]
    try:
        policy = sandbox_policy(str(ws), str(ws))
        argv = bwrap_argv(policy, ["python3", "-c", FORKER], cwd=str(ws), max_processes=32)
        done = subprocess.run(
            [*prefix, *argv], capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        for process in outside:
            process.kill()
            process.wait()
        shutil.rmtree(ws)
    assert done.returncode == 0, done.stderr
    assert 20 < int(done.stdout) < 32, done.stdout
