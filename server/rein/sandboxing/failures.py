"""The note a failed sandboxed command gets when the sandbox may be why:
the output says a write was refused (a read-only file system, permission
denied, an operation not permitted) or the network could not be reached
(no route, no name resolution). The model reads it and may ask to run the
command outside the sandbox (``unsandboxed: true`` with a ``reason``)."""

from __future__ import annotations

import re

__all__ = ["OTHER_LEAVE", "failure_note", "unresolved_hosts"]

#: What the sandbox's refusals look like (its mounts are read-only, it
#: forbids mounts and signals outside, its mount points cannot be moved);
#: "permission denied" is not among
#: them, it is too common in ordinary output.
_WRITE = re.compile(
    r"read-only file system|EROFS|operation not permitted|device or resource busy", re.IGNORECASE
)
#: Bubblewrap's own failure to start (a path it mounts went away, ...).
_START = re.compile(r"bwrap: (.*)")
_NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve|"
    r"name or service not known|name resolution|no address associated|getaddrinfo|"
    r"failed to establish a new connection|ENETUNREACH|EAI_AGAIN|"
    r"nodename nor servname|not in sandbox\.network|403 Forbidden|error: 403|tunnel failed|"
    r"ProxyError",
    re.IGNORECASE,
)

#: How programs name the host they could not resolve (curl and git, Python's
#: urllib3, Node, wget): a sandbox without a proxy has no name resolution.
_UNRESOLVED = (
    re.compile(r"Could not resolve host: ([A-Za-z0-9.-]+)"),
    re.compile(r"HTTPS?ConnectionPool\(host='([A-Za-z0-9.-]+)', port=(\d+)\)"),
    re.compile(r"getaddrinfo (?:EAI_AGAIN|ENOTFOUND) ([A-Za-z0-9.-]+)"),
    re.compile(r"unable to resolve host address [\u2018'`]([A-Za-z0-9.-]+)[\u2019'`]"),
)


def unresolved_hosts(output: str) -> list[str]:
    """The hosts ``output`` says could not be resolved (``name``, or
    ``name:port`` off ports 80 and 443), in order, each once."""
    found: dict[str, None] = {}
    for pattern in _UNRESOLVED:
        for match in pattern.finditer(output):
            host = match.group(1).lower().rstrip(".")
            port = match.group(2) if pattern.groups > 1 else None
            if "." not in host:
                continue  # not a host name a registry or a forge has
            found[host if port in (None, "80", "443") else f"{host}:{port}"] = None
    return list(found)


_LEAVE = (
    "If the command needs that, call run_command again with `unsandboxed: true` and a "
    "`reason` (the person is asked, every time); otherwise change the command."
)


#: The way out for the other commands (gates, installs): the model cannot
#: take them out of the sandbox, the person's settings can.
OTHER_LEAVE = (
    "The model cannot change that; the person can let these commands write a folder "
    "(`sandbox.writable`), reach a host (`sandbox.network`) or run outside the sandbox "
    "(`sandbox.also`)."
)


def failure_note(output: str, writable: str, hosts: str = "", leave: str = _LEAVE) -> str | None:
    """The note for a failed command's ``output`` (None: the sandbox is not
    a likely cause). ``writable`` lists the writable folders, ``hosts`` the
    hosts of ``sandbox.network`` (empty: no network); ``leave`` says how the
    command can run outside (run_command's ``unsandboxed``; the other
    commands': :data:`OTHER_LEAVE`)."""
    started = _START.match(output.lstrip())
    if started is not None:
        return (
            f"[Rein's sandbox could not start ({started.group(1).strip()}); the command did "
            "not run. If it keeps failing, call run_command again with `unsandboxed: true` "
            "and a `reason` (the person is asked, every time).]"
        )
    causes = []
    if _WRITE.search(output):
        causes.append(
            f"it may write only in {writable}; everything else is read-only, and git's "
            "hooks and configuration and Rein's configuration are read-only even there"
        )
    if _NETWORK.search(output):
        if hosts:
            causes.append(
                f"it reaches only {hosts}, through Rein's proxy (HTTP_PROXY), and not the "
                "machine's loopback"
            )
        else:
            causes.append("it has no network (not even the loopback of the machine)")
    if not causes:
        return None
    return f"[The command ran in Rein's sandbox: {'; '.join(causes)}. {leave}]"
