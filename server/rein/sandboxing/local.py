"""The :class:`~rein.harness.process_ports.CommandSandbox` of a session:
bubblewrap around ``run_command``'s local commands, with the policy of the
workspace (:mod:`rein.sandboxing.policy`) and a temporary folder of its
own (made on the first command, removed when the sandbox is dropped).

The policy is computed again for every command, so paths created since
the last one are protected or hidden too. A protected path that does not
exist cannot be mounted over; what a command creates there (``git init``'s
``.git``, a ``.vscode/settings.json``) is moved aside when it ends
(``<path>.rein-quarantine``), and the result says so
(:meth:`BwrapSandbox.ended`). The looks for the git repositories below the
root (:mod:`rein.sandboxing.nested_git`) that a command's start and end
make run in a worker thread (:meth:`BwrapSandbox.start`,
:meth:`BwrapSandbox.ended`); :meth:`BwrapSandbox.wrap` and
:meth:`BwrapSandbox.after_run` block for them (the bench, tests)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import replace

from rein.sandboxing.bwrap import bwrap_argv
from rein.sandboxing.caches import PNPM_VARIABLES, cache_environment, remove_if_unused, uses_pnpm
from rein.sandboxing.failures import failure_note, unresolved_hosts
from rein.sandboxing.nested_git import NestedRepositories, off_loop
from rein.sandboxing.policy import SandboxPolicy, sandbox_policy
from rein.sandboxing.probe import sandbox_status
from rein.sandboxing.proxy import AllowlistProxy, allowed_hosts, host_name
from rein.sandboxing.settings import SandboxSettings

__all__ = ["FORWARDER", "BwrapSandbox", "command_sandbox", "move_aside"]

#: The forwarder the sandbox starts when it has an allowlist proxy.
FORWARDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "forwarder.py")
#: Rein's own Python and its package: bound again inside when they lie under
#: a folder the sandbox makes private (a checkout in ``/tmp``), so the
#: forwarder, and a command that runs Rein's Python, still find them.
RUNTIME = tuple(
    dict.fromkeys(
        os.path.abspath(p)
        for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(FORWARDER)))
    )
)


def _close(proxies: list[AllowlistProxy], temp: str) -> None:
    for proxy in proxies:
        proxy.close()
    shutil.rmtree(temp, ignore_errors=True)


class BwrapSandbox:
    """The sandbox of one session over ``root``. ``hosts``: more hosts than
    ``sandbox.network`` this session's commands may reach (``rein run
    --allow-host``, ``rein/newSession``'s ``allowHosts``); :meth:`allow_host`
    adds one later. The session's proxy is its own: no other session's
    commands reach what this one allows. ``share_network``: the machine's
    network as it is, no proxy (the preview's server, which the editor must
    reach; its files are sandboxed all the same). ``in_temp``: variables
    set to a folder in the sandbox's temporary folder (``(name, relative
    path)``: the installs' package caches, :mod:`rein.sandboxing.others`).
    ``build_caches``: the build tools' caches pointed at the workspace's own
    writable ones (:mod:`rein.sandboxing.caches`; not for the installs,
    which keep theirs in ``in_temp``)."""

    def __init__(
        self,
        root: str,
        settings: SandboxSettings | None = None,
        hosts: Sequence[str] = (),
        *,
        share_network: bool = False,
        in_temp: Sequence[tuple[str, str]] = (),
        build_caches: bool = True,
    ) -> None:
        self.root = root
        self.build_caches = build_caches
        #: The workspace's build caches' folder, once a command used it.
        self._caches: str | None = None
        self.share_network = share_network
        self.in_temp = tuple(in_temp)
        self.settings = settings or SandboxSettings()
        self._temp: str | None = None
        #: The session's proxy, at most one (a list: the finalizer made with
        #: the temporary folder closes one started later, with a first host).
        self._proxies: list[AllowlistProxy] = []
        self._missing: set[str] = set()
        #: The git repositories below the workspace (read-only; one a
        #: command makes is moved aside).
        self._nested = NestedRepositories(root)
        #: The folders outside the workspace a command was let write (its
        #: temporary folder, the build caches, ``sandbox.writable``, scratch
        #: folders): a link to a repository made there is planted.
        #: (A tuple, replaced whole: a look in a worker thread reads it.)
        self._wrote: tuple[str, ...] = ()
        #: The hosts of the setting and the session's start (reached as they are).
        self._configured = allowed_hosts([*self.settings.network, *hosts])
        self._hosts = self._configured
        #: Without a proxy: the hosts the last failed command could not resolve.
        self._unresolved: list[str] = []

    @property
    def hosts(self) -> frozenset[str]:
        """The hosts this session's commands may reach now."""
        return self._hosts

    def unavailable(self) -> str | None:
        return sandbox_status(self.settings.bwrap).why_not

    def temp_dir(self) -> str:
        """The session's temporary folder (and the proxy in it), made on
        first use and removed when the sandbox is dropped."""
        if self._temp is None:
            temp = tempfile.mkdtemp(prefix="rein-sandbox-")
            weakref.finalize(self, _close, self._proxies, temp)
            self._temp = temp
        return self._temp

    def _proxy(self) -> AllowlistProxy | None:
        """The session's allowlist proxy, started with the first host."""
        if not self._hosts:
            return None
        if not self._proxies:
            socket_path = os.path.join(self.temp_dir(), ".rein-proxy.sock")
            proxy = AllowlistProxy(socket_path, self._configured)
            for host in self._hosts - self._configured:
                proxy.allow(host)
            self._proxies.append(proxy)
        return self._proxies[0]

    def allow_host(self, host: str) -> None:
        """Let this session's commands reach ``host`` (``name`` or
        ``name:port``) from their next start on (never at an address of this
        machine or its local network: :meth:`AllowlistProxy.allow`)."""
        started = bool(self._proxies)
        self._hosts = self._hosts | allowed_hosts([host])
        proxy = self._proxy()
        if proxy is not None and started:
            proxy.allow(host)

    def refused_hosts(self) -> list[str]:
        """The hosts the proxy refused since the last call (in order); with
        no proxy (no network at all), the hosts the last failed command's
        output said it could not resolve (:meth:`failure_note` reads it; host
        names only, never an IP address)."""
        unresolved = [h for h in self._unresolved if host_name(h.partition(":")[0])]
        self._unresolved = []
        return self._proxies[0].take_refused() if self._proxies else unresolved

    def policy(self, nested_git: Sequence[str] = ()) -> SandboxPolicy:
        """The policy as the workspace is now (computed for every command);
        ``nested_git``: the repositories below the root, read-only."""
        policy = sandbox_policy(self.root, self.temp_dir(), self.settings, nested_git=nested_git)
        if self.share_network:
            return replace(policy, network=True)
        proxy = self._proxy()
        return replace(policy, proxy_socket=proxy.path if proxy is not None else None)

    async def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        writable: Sequence[str] = (),
        ends: bool = True,
    ) -> list[str]:
        """:meth:`wrap`, its look for the nested repositories in a worker
        thread (:func:`~rein.sandboxing.nested_git.off_loop`): the event
        loop answers meanwhile. ``ends``: :meth:`ended` (or :meth:`done`
        and :meth:`planted`) will be called when the command ends; until
        then, what another start finds new is not taken for there."""
        nested = await off_loop(self._nested.before)
        if ends:
            self._nested.running()
        return self._wrapped(argv, cwd, writable, nested)

    async def ended(self) -> str | None:
        """:meth:`after_run`, its look in a worker thread."""
        missing = self._take_missing()
        self.done()
        return move_aside(self.root, [*missing, *await off_loop(self.planted)])

    def done(self) -> None:
        """A command :meth:`start` ed with ``ends`` ended (before its look)."""
        self._nested.ended()

    def wrap(self, argv: Sequence[str], *, cwd: str, writable: Sequence[str] = ()) -> list[str]:
        """``writable``: more folders this command may write (Rein's own
        scratch folders, :mod:`rein.sandboxing.others`). Blocks for the
        look (seconds in a large workspace): on an event loop, :meth:`start`."""
        return self._wrapped(argv, cwd, writable, self._nested.before())

    def _wrapped(
        self, argv: Sequence[str], cwd: str, writable: Sequence[str], nested: Sequence[str]
    ) -> list[str]:
        program = sandbox_status(self.settings.bwrap).program or self.settings.bwrap
        policy = self.policy(nested)
        if writable:
            policy = replace(policy, writable=(*policy.writable, *writable))
        self._missing.update(policy.missing)
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
        pnpm = uses_pnpm(self.root)
        environment = [
            (name, os.path.join(policy.temp_dir, rel))
            for name, rel in self.in_temp
            if pnpm or name not in PNPM_VARIABLES
        ]
        unset: list[str] = []
        if self.build_caches:
            writable = (policy.root, policy.temp_dir, *policy.writable)
            folder, caches, unset = cache_environment(self.root, writable)
            if folder is not None:
                policy = replace(policy, writable=(*policy.writable, folder))
                environment = caches + environment
                if self._caches is None:
                    weakref.finalize(self, remove_if_unused, folder)
                    self._caches = folder
        self._wrote = tuple(dict.fromkeys((*self._wrote, policy.temp_dir, *policy.writable)))
        return bwrap_argv(
            policy,
            argv,
            cwd=cwd,
            bwrap=program,
            runtime=RUNTIME,
            environment=environment,
            unset=unset,
        )

    def failure_note(self, output: str, leave: str | None = None) -> str | None:
        """``leave``: how the command can run outside, when it is not
        run_command's (:data:`rein.sandboxing.failures.OTHER_LEAVE`)."""
        policy = self.policy()
        caches = [f"the build caches ({self._caches})"] if self._caches is not None else []
        writable = ", ".join(
            [
                f"the workspace ({policy.root})",
                f"$TMPDIR ({policy.temp_dir})",
                *caches,
                *policy.writable,
            ]
        )
        if not self._proxies and not self.share_network:
            self._unresolved = [h for h in unresolved_hosts(output) if h not in self._hosts]
        hosts = ", ".join(sorted(self._hosts))
        if leave is not None:
            return failure_note(output, writable, hosts, leave)
        return failure_note(output, writable, hosts)

    def planted(self) -> list[str]:
        """The git repositories below the workspace that no command's
        start saw (a command made them), and the links to one a command
        made outside it: to be moved aside."""
        return self._nested.planted(self._wrote)

    def after_run(self) -> str | None:
        """After a command ended: what it made where a protected path was
        missing, and the repositories it planted, moved aside; a note
        saying so, else None. Blocks for the look: on an event loop,
        :meth:`ended`."""
        missing = self._take_missing()
        return move_aside(self.root, [*missing, *self.planted()])

    def _take_missing(self) -> list[str]:
        """The protected paths missing at the starts since the last end."""
        missing = sorted(self._missing)
        self._missing.clear()
        return missing


def move_aside(root: str, missing: Sequence[str], leave: str | None = None) -> str | None:
    """Move aside those of the protected paths ``missing`` (absolute, in the
    workspace ``root``) that exist now: a sandboxed command created them. A
    note saying so (``leave``: how the command can do that instead; by
    default run_command's ``unsandboxed``), else None."""
    created = [p for p in missing if os.path.lexists(p)]
    moved = [_quarantine(path) for path in created]
    if not moved:
        return None
    names = ", ".join(
        f"{os.path.relpath(p, root)} (now {os.path.relpath(m, root)})"
        for p, m in zip(created, moved, strict=True)
        if m is not None
    )
    return (
        f"[The command created {names or ', '.join(created)}, which the sandbox "
        "protects (git's repository and Rein's and the editor's configuration cannot "
        "be made in it); Rein moved it aside, where nothing reads it. "
        + (
            leave
            or "If the command needs that, call run_command again with `unsandboxed: true` "
            "and a `reason` (the person is asked, every time)."
        )
        + "]"
    )


def _quarantine(path: str) -> str | None:
    """Move ``path`` aside (``<path>.rein-quarantine``, then ``.1``, ...),
    where git, the editor and Rein do not look, rather than delete what
    may be someone's work; None when it could not be moved (then it is
    removed)."""
    for n in range(100):
        target = f"{path}.rein-quarantine" + (f".{n}" if n else "")
        if os.path.lexists(target):
            continue
        try:
            os.rename(path, target)
        except OSError:
            break
        _unmake_repository(target)
        return target
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return None


def _unmake_repository(folder: str) -> None:
    """A moved-aside git folder is still a repository to a git run inside
    it (git takes a folder holding ``HEAD``, ``objects`` and ``refs`` for a
    bare one and reads its ``config``: a planted ``core.pager`` would run);
    without a ``HEAD`` git does not take it for one. Renamed, not deleted:
    ``mv HEAD.rein-quarantine HEAD`` brings it back."""
    head = os.path.join(folder, "HEAD")
    if os.path.isdir(folder) and not os.path.islink(folder) and os.path.lexists(head):
        with contextlib.suppress(OSError):
            os.rename(head, head + ".rein-quarantine")


def command_sandbox(
    root: str | None, settings: SandboxSettings | None, hosts: Sequence[str] = ()
) -> BwrapSandbox | None:
    """The sandbox of a session over ``root`` (None without a workspace);
    ``hosts``: the session's own hosts besides ``sandbox.network``."""
    return None if root is None else BwrapSandbox(root, settings, hosts)
