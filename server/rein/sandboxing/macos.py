"""A :class:`~rein.sandboxing.policy.SandboxPolicy` as a macOS
``sandbox-exec`` profile (SBPL).

Generated and unit-tested only: Rein does not run commands with it yet (it
cannot be run on the Linux machines the tests run on), so on macOS every
command asks (:mod:`rein.sandboxing.probe`). In SBPL the last rule that
matches an operation wins, so the profile goes from wide to narrow:
everything allowed but the network and writes; writes allowed under the
writable folders; then the read-only paths inside them denied again; then
the hidden paths denied for reading and writing alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from rein.sandboxing.policy import SandboxPolicy

__all__ = ["macos_argv", "seatbelt_profile"]


def _quoted(path: str) -> str:
    """``path`` as an SBPL string: backslashes and quotes escaped."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _rule(action: str, operations: str, paths: Sequence[tuple[str, str]]) -> list[str]:
    if not paths:
        return []
    lines = [f"({action} {operations}"]
    lines += [f"  ({matcher} {_quoted(path)})" for matcher, path in paths]
    lines[-1] += ")"
    return lines


def seatbelt_profile(policy: SandboxPolicy) -> str:
    """The profile text for ``policy``."""
    lines = [
        "(version 1)",
        ";; Rein's sandbox of the model's commands (rein.sandboxing.macos).",
        "(allow default)",
    ]
    if not policy.network:
        lines.append("(deny network*)")
    lines.append("(deny file-write*)")
    writable = [("subpath", p) for p in (policy.root, policy.temp_dir, *policy.writable)]
    writable += [("literal", "/dev/null"), ("literal", "/dev/tty"), ("regex", "^/dev/fd/")]
    lines += _rule("allow", "file-write*", writable)
    # A protected path that does not exist yet cannot be created either
    # (Seatbelt, unlike a mount, needs nothing to exist).
    protected = [("subpath", p) for p in (*policy.read_only, *policy.missing)]
    # A pinned folder cannot be moved or replaced: the folder itself is not
    # writable.
    protected += [("literal", p) for p in policy.pinned]
    lines += _rule("deny", "file-write*", protected)
    hidden = [("subpath", p) for p in policy.hidden_dirs]
    hidden += [("literal", p) for p in policy.hidden_files]
    lines += _rule("deny", "file-read* file-write*", hidden)
    # Signals reach only the sandbox's own processes.
    lines.append("(deny signal)")
    lines.append("(allow signal (target same-sandbox))")
    return "\n".join(lines) + "\n"


def macos_argv(policy: SandboxPolicy, command: Sequence[str]) -> list[str]:
    """``sandbox-exec -p PROFILE command``."""
    return ["sandbox-exec", "-p", seatbelt_profile(policy), *command]
