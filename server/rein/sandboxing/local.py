"""The :class:`~rein.harness.process_ports.CommandSandbox` of a session:
bubblewrap around ``run_command``'s local commands, with the policy of the
workspace (:mod:`rein.sandboxing.policy`) and a temporary folder of its
own (made on the first command, removed when the sandbox is dropped)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import replace

from rein.sandboxing.bwrap import bwrap_argv
from rein.sandboxing.failures import failure_note
from rein.sandboxing.policy import SandboxPolicy, sandbox_policy
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.proxy import AllowlistProxy, allowed_hosts
from rein.sandboxing.settings import SandboxSettings

__all__ = ["FORWARDER", "BwrapSandbox", "command_sandbox"]

#: The forwarder the sandbox starts when it has an allowlist proxy.
FORWARDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forwarder.py")


def _close(proxy: AllowlistProxy, temp: str) -> None:
    proxy.close()
    shutil.rmtree(temp, ignore_errors=True)


class BwrapSandbox:
    """The sandbox of one session over ``root``."""

    def __init__(self, root: str, settings: SandboxSettings | None = None) -> None:
        self.root = root
        self.settings = settings or SandboxSettings()
        self._policy: SandboxPolicy | None = None
        self._hosts = allowed_hosts(self.settings.network)

    def unavailable(self) -> str | None:
        return sandbox_status(self.settings.bwrap).why_not

    def policy(self) -> SandboxPolicy:
        """The policy (its temporary folder made on first use)."""
        if self._policy is None:
            temp = tempfile.mkdtemp(prefix="rein-sandbox-")
            policy = sandbox_policy(self.root, temp, self.settings)
            if self._hosts:
                socket_path = os.path.join(temp, ".rein-proxy.sock")
                proxy = AllowlistProxy(socket_path, self._hosts)
                weakref.finalize(self, _close, proxy, temp)
                policy = replace(policy, proxy_socket=socket_path)
            else:
                weakref.finalize(self, shutil.rmtree, temp, True)
            self._policy = policy
        return self._policy

    def wrap(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        program = sandbox_status(self.settings.bwrap).program or self.settings.bwrap
        policy = self.policy()
        if policy.proxy_socket is not None:
            argv = [
                sys.executable,
                "-S",
                FORWARDER,
                policy.proxy_socket,
                str(policy.proxy_port),
                "--",
                *argv,
            ]
        return bwrap_argv(policy, argv, cwd=cwd, bwrap=program)

    def failure_note(self, output: str) -> str | None:
        policy = self.policy()
        writable = ", ".join(
            [f"the workspace ({policy.root})", f"$TMPDIR ({policy.temp_dir})", *policy.writable]
        )
        return failure_note(output, writable, ", ".join(sorted(self._hosts)))


def command_sandbox(root: str | None, settings: SandboxSettings | None) -> BwrapSandbox | None:
    """The sandbox of a session over ``root`` (None without a workspace)."""
    return None if root is None else BwrapSandbox(root, settings)
