"""The :class:`~rein.harness.process_ports.CommandSandbox` of a session:
bubblewrap around ``run_command``'s local commands, with the policy of the
workspace (:mod:`rein.sandboxing.policy`) and a temporary folder of its
own (made on the first command, removed when the sandbox is dropped)."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Sequence

from rein.sandboxing.bwrap import bwrap_argv
from rein.sandboxing.failures import failure_note
from rein.sandboxing.policy import SandboxPolicy, sandbox_policy
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.settings import SandboxSettings

__all__ = ["BwrapSandbox", "command_sandbox"]


class BwrapSandbox:
    """The sandbox of one session over ``root``."""

    def __init__(self, root: str, settings: SandboxSettings | None = None) -> None:
        self.root = root
        self.settings = settings or SandboxSettings()
        self._policy: SandboxPolicy | None = None

    def unavailable(self) -> str | None:
        return sandbox_status(self.settings.bwrap).why_not

    def policy(self) -> SandboxPolicy:
        """The policy (its temporary folder made on first use)."""
        if self._policy is None:
            temp = tempfile.mkdtemp(prefix="rein-sandbox-")
            weakref.finalize(self, shutil.rmtree, temp, True)
            self._policy = sandbox_policy(self.root, temp, self.settings)
        return self._policy

    def wrap(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        program = sandbox_status(self.settings.bwrap).program or self.settings.bwrap
        return bwrap_argv(self.policy(), argv, cwd=cwd, bwrap=program)

    def failure_note(self, output: str) -> str | None:
        policy = self.policy()
        writable = ", ".join(
            [f"the workspace ({policy.root})", f"$TMPDIR ({policy.temp_dir})", *policy.writable]
        )
        return failure_note(output, writable)


def command_sandbox(root: str | None, settings: SandboxSettings | None) -> BwrapSandbox | None:
    """The sandbox of a session over ``root`` (None without a workspace)."""
    return None if root is None else BwrapSandbox(root, settings)
