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

A command may also write the folders its caller names for it
(``writable``: the tests gate's own shadow tree, where pytest runs); each
must be a real folder (not a link) of this user's, directly in the
machine's temporary folder, else it is not bound (and a warning logged).
Nothing else there: no other workspace's shadow, no one else's folder.

The installs' package managers keep their caches in the sandbox's
temporary folder (:data:`INSTALL_CACHES`), since the home folder is
read-only inside. Cargo's is its home (``CARGO_HOME``), which also holds
its configuration: the person's ``~/.cargo/config.toml`` (or ``config``)
is linked into the one in the temporary folder, so the installs still
read it (its registries, mirrors and network settings);
``credentials.toml`` is not (an install publishes nothing).

Each :class:`OtherCommandsSandbox` holds every sandbox it handed out for
as long as it lives (a settings change makes a new one; the old one's
processes may still run in it), so no sandbox's temporary folder and
proxy go while its commands may run; a sandbox is shared by the owners
of the same workspace, settings and kind, and dropped with the last.

The setting is read at every start, so a change applies to the next
command. Where the sandbox cannot start, the commands run as they would
without the setting; the session's start says so once
(:func:`rein.sandboxing.probe.unavailable_notice`), never silently.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rein.sandboxing.failures import OTHER_LEAVE
from rein.sandboxing.local import BwrapSandbox, move_aside
from rein.sandboxing.nested_git import off_loop
from rein.sandboxing.policy import READ_ONLY_IN_WORKSPACE
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.proxy import REGISTRY_PRESETS
from rein.sandboxing.settings import ALSO_KINDS, SandboxSettings

__all__ = ["CARGO_CONFIG_FILES", "INSTALL_CACHES", "OtherCommandsSandbox", "OtherStart"]

log = logging.getLogger(__name__)

#: The package managers' cache variables, pointed at ``caches/<name>`` in
#: the install sandbox's temporary folder (pnpm's store only in a workspace
#: that uses pnpm: :func:`rein.sandboxing.caches.uses_pnpm`).
INSTALL_CACHES: tuple[tuple[str, str], ...] = (
    ("npm_config_cache", "npm"),
    ("npm_config_store_dir", "pnpm-store"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("PIP_CACHE_DIR", "pip"),
    ("UV_CACHE_DIR", "uv"),
    ("GOMODCACHE", "go-mod"),
    ("GOCACHE", "go-build"),
    ("CARGO_HOME", "cargo"),
)
#: Cargo's configuration files in the person's ``~/.cargo``, linked into
#: the install sandbox's ``CARGO_HOME``.
CARGO_CONFIG_FILES = ("config.toml", "config")

#: The sandboxes in use, by workspace, settings and kind: shared while an
#: :class:`OtherCommandsSandbox` holds them.
_SHARED: weakref.WeakValueDictionary[tuple[str, SandboxSettings, str], BwrapSandbox] = (
    weakref.WeakValueDictionary()
)
_LOCK = threading.Lock()


def _make(root: str, settings: SandboxSettings, kind: str) -> BwrapSandbox:
    if kind == "install":
        hosts = tuple(p for p in REGISTRY_PRESETS if p not in settings.network)
        caches = tuple((name, os.path.join("caches", folder)) for name, folder in INSTALL_CACHES)
        sandbox = BwrapSandbox(root, settings, hosts, in_temp=caches, build_caches=False)
        _link_cargo_config(os.path.join(sandbox.temp_dir(), "caches", "cargo"))
        return sandbox
    if kind == "preview":
        return BwrapSandbox(root, settings, share_network=True)
    return BwrapSandbox(root, settings)


def _link_cargo_config(cargo_home: str) -> None:
    """The person's cargo configuration, linked into ``cargo_home``."""
    person = os.path.join(os.path.expanduser("~"), ".cargo")
    os.makedirs(cargo_home, exist_ok=True)
    for name in CARGO_CONFIG_FILES:
        source = os.path.join(person, name)
        if os.path.isfile(source):
            os.symlink(source, os.path.join(cargo_home, name))


def _shared(root: str, settings: SandboxSettings, kind: str) -> BwrapSandbox:
    """One sandbox per workspace, settings and need of the registries."""
    with _LOCK:
        sandbox = _SHARED.get((root, settings, kind))
        if sandbox is None:
            sandbox = _SHARED[(root, settings, kind)] = _make(root, settings, kind)
        return sandbox


def own_scratch(path: str) -> str | None:
    """``path``, resolved, when it is a scratch folder a command may be
    given: a real folder (not a link) of this user's, directly in the
    temporary folder; else None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    real = os.path.realpath(path)
    if (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and os.path.dirname(real) == os.path.realpath(tempfile.gettempdir())
    ):
        return real
    return None


@dataclass
class OtherStart:
    """One command of :class:`OtherCommandsSandbox` as it started: its
    command line (``argv``), the sandbox it started in (None: not
    sandboxed) and the protected paths then missing. Its end looks in that
    sandbox, whose look at the start it compares with: a settings change
    while it ran (``sandbox.also`` edited, the sandbox turned off or on)
    makes another sandbox for the next commands, never for its end (a
    review: the end asked for the sandbox anew, which then missed a
    repository the command planted, or took the person's for planted)."""

    kind: str
    root: str
    argv: list[str]
    sandbox: BwrapSandbox | None
    missing: list[str]
    #: Ended already (a second end looks at nothing).
    over: bool = False

    async def ended(self) -> str | None:
        """After the command ended: those of ``missing`` that exist now are
        moved aside, as after ``run_command``'s, and so is a git repository
        below the workspace that no start in its sandbox saw
        (:mod:`rein.sandboxing.nested_git`; the look in a worker thread); a
        note saying so (and logged), else None."""
        if self.sandbox is None or self.over:
            return None
        self.over = True
        self.sandbox.done()
        return self._moved(await off_loop(self.sandbox.planted))

    def ended_now(self) -> str | None:
        """:meth:`ended`, blocking (where nothing else waits: a shutdown)."""
        if self.sandbox is None or self.over:
            return None
        self.over = True
        self.sandbox.done()
        return self._moved(self.sandbox.planted())

    def _moved(self, planted: Sequence[str]) -> str | None:
        note = move_aside(self.root, [*self.missing, *planted], OTHER_LEAVE)
        if note is not None:
            log.warning("sandbox (%s): %s", self.kind, note)
        return note

    def failure_note(self, output: str) -> str | None:
        """For the command, failed with ``output``: a note when it ran in
        the sandbox and the sandbox may be why, else None."""
        if self.sandbox is None:
            return None
        return self.sandbox.failure_note(output, OTHER_LEAVE)


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
        #: Every sandbox handed out, by settings (see the module docstring).
        self._held: dict[SandboxSettings, BwrapSandbox] = {}

    def sandbox(self) -> BwrapSandbox | None:
        """The sandbox this kind's commands start in now (None: not
        sandboxed, by the setting or because the sandbox cannot start)."""
        settings = self._settings()
        if self.kind not in settings.also or not sandbox_status(settings.bwrap).works:
            return None
        shared = self.kind if self.kind in ("install", "preview") else "other"
        held = self._held.get(settings)
        if held is None:
            held = self._held[settings] = _shared(self.root, settings, shared)
        return held

    def wrap(self, argv: Sequence[str], *, cwd: str, writable: Sequence[str] = ()) -> list[str]:
        """``argv`` in this kind's sandbox now (unchanged when not
        sandboxed). Blocks for the look: on an event loop, :meth:`start`."""
        sandbox = self.sandbox()
        if sandbox is None:
            return list(argv)
        return sandbox.wrap(argv, cwd=cwd, writable=self._scratch(writable))

    @staticmethod
    def _scratch(writable: Sequence[str]) -> list[str]:
        scratch: list[str] = []
        for path in writable:
            real = own_scratch(path)
            if real is None:
                log.warning("sandbox: %s is not a scratch folder of Rein's: not writable", path)
            else:
                scratch.append(real)
        return scratch

    async def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        writable: Sequence[str] = (),
        ends: bool = True,
    ) -> OtherStart:
        """One command's start: its command line (:meth:`wrap`, the look for
        the nested repositories in a worker thread) and what to do when it
        ends, in the same sandbox (:class:`OtherStart`), whatever the
        settings are by then. ``ends``: its :meth:`OtherStart.ended` will
        be called (not a kept process's, a hook's, an MCP server's)."""
        sandbox = self.sandbox()
        if sandbox is None:
            return OtherStart(self.kind, self.root, list(argv), None, [])
        missing = self._protected_missing()
        scratch = self._scratch(writable)
        wrapped = await sandbox.start(argv, cwd=cwd, writable=scratch, ends=ends)
        return OtherStart(self.kind, self.root, wrapped, sandbox, missing)

    def _protected_missing(self) -> list[str]:
        """The protected paths of the workspace (``.git``,
        ``.vscode/settings.json``, ...) that do not exist now (a few
        ``lstat``): the sandbox cannot mount over them, so what a command
        creates there is moved aside when it ends."""
        paths = (os.path.join(self.root, p) for p in READ_ONLY_IN_WORKSPACE)
        return [p for p in paths if not os.path.lexists(p)]
