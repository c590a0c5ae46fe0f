"""The sandbox around the other commands: the gates' (tests, runtime,
custom), the preview's, the dependency installs', the hooks' and the MCP
stdio servers', each when ``sandbox.also`` names its kind.

They run in the same sandbox as ``run_command``'s commands (the same
policy: the workspace writable, the rest read-only, the secrets hidden, the
network only through the allowlist proxy), one per workspace and settings
shared by every session, except the installs: theirs also reaches the
package registries (:data:`~rein.sandboxing.proxy.REGISTRY_PRESETS`), which
an install cannot do without, and the preview's: its server must be
reachable from the editor and the browser, so it keeps the machine's
network (its files are sandboxed all the same).

The gates' commands may also write Rein's own scratch folders of the
tests gate (its shadow trees, :data:`GATE_SCRATCH_PREFIXES` in the
machine's temporary folder), where it runs the tests; nothing else there.

The setting is read at every start, so a change applies to the next
command. Where the sandbox cannot start, the commands run as they would
without the setting; the session's start says so once
(:func:`rein.sandboxing.probe.unavailable_notice`), never silently.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Callable, Sequence
from functools import lru_cache

from rein.sandboxing.local import BwrapSandbox
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.proxy import REGISTRY_PRESETS
from rein.sandboxing.settings import ALSO_KINDS, SandboxSettings

__all__ = ["GATE_SCRATCH_PREFIXES", "OtherCommandsSandbox"]

#: The folders of the machine's temporary folder the gates' commands may
#: write: the tests gate's shadow trees (``rein.testgate.shadow``).
GATE_SCRATCH_PREFIXES: tuple[str, ...] = ("rein-tests-",)


def _gate_scratch() -> list[str]:
    temp = tempfile.gettempdir()
    found: list[str] = []
    for prefix in GATE_SCRATCH_PREFIXES:
        found += (
            p for p in glob.glob(os.path.join(temp, glob.escape(prefix) + "*")) if os.path.isdir(p)
        )
    return sorted(found)


@lru_cache(maxsize=16)
def _shared(root: str, settings: SandboxSettings, kind: str) -> BwrapSandbox:
    """One sandbox per workspace, settings and need of the registries (its
    temporary folder and proxy live as long as Rein)."""
    if kind == "install":
        hosts = tuple(p for p in REGISTRY_PRESETS if p not in settings.network)
        return BwrapSandbox(root, settings, hosts)
    if kind == "preview":
        return BwrapSandbox(root, settings, share_network=True)
    return BwrapSandbox(root, settings)


class OtherCommandsSandbox:
    """The :class:`~rein.harness.process_ports.ProcessSandbox` of one kind
    of command (:data:`~rein.sandboxing.settings.ALSO_KINDS`) in the
    workspace ``root``; ``settings`` gives ``rein.sandbox`` as it is now."""

    def __init__(self, root: str, settings: Callable[[], SandboxSettings], kind: str) -> None:
        if kind not in ALSO_KINDS:
            raise ValueError(f"{kind!r} is not one of {', '.join(ALSO_KINDS)}")
        self.root = root
        self.kind = kind
        self._settings = settings

    def sandbox(self) -> BwrapSandbox | None:
        """The sandbox this kind's commands start in now (None: not
        sandboxed, by the setting or because the sandbox cannot start)."""
        settings = self._settings()
        if self.kind not in settings.also or not sandbox_status(settings.bwrap).works:
            return None
        shared = self.kind if self.kind in ("install", "preview") else "other"
        return _shared(self.root, settings, shared)

    def wrap(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        sandbox = self.sandbox()
        if sandbox is None:
            return list(argv)
        scratch = _gate_scratch() if self.kind == "gates" else []
        return sandbox.wrap(argv, cwd=cwd, writable=scratch)
