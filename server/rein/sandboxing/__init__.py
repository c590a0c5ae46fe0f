"""The OS sandbox around the model's commands (``run_command``).

Not to be confused with :mod:`rein.tools.sandbox`, the path rules of the
file tools. Here a command runs in a sandbox the operating system enforces:

- :mod:`~rein.sandboxing.settings`: ``rein.sandbox``, the person's settings.
- :mod:`~rein.sandboxing.policy`: what is writable, read-only and hidden
  (pure: paths in, a :class:`~rein.sandboxing.policy.SandboxPolicy` out).
- :mod:`~rein.sandboxing.bwrap`: the policy as a bubblewrap command line
  (Linux).
- :mod:`~rein.sandboxing.macos`: the policy as a ``sandbox-exec`` profile
  (macOS; generated and unit-tested, not run: Rein runs commands sandboxed
  on Linux only for now).
- :mod:`~rein.sandboxing.probe`: whether the sandbox can start here, and
  why not (checked once per process).
- :mod:`~rein.sandboxing.failures`: the note a failed command gets when the
  sandbox may be the cause.
- :mod:`~rein.sandboxing.local`: :class:`~rein.sandboxing.local.BwrapSandbox`,
  the :class:`~rein.harness.process_ports.CommandSandbox` the sessions use
  (with a proxy of its own per session: its allowed hosts are its own).
- :mod:`~rein.sandboxing.others`: the same sandbox around the other
  commands (gates, preview, installs, hooks, MCP stdio servers) that
  ``sandbox.also`` names (:class:`~rein.harness.process_ports.ProcessSandbox`).
"""

from __future__ import annotations

from rein.sandboxing.local import BwrapSandbox, command_sandbox
from rein.sandboxing.policy import SandboxPolicy, sandbox_policy
from rein.sandboxing.probe import SandboxStatus, sandbox_status
from rein.sandboxing.settings import DEFAULT_HIDDEN_PATHS, SandboxSettings

__all__ = [
    "DEFAULT_HIDDEN_PATHS",
    "BwrapSandbox",
    "SandboxPolicy",
    "SandboxSettings",
    "SandboxStatus",
    "command_sandbox",
    "sandbox_policy",
    "sandbox_status",
]
