"""The hosts a sandboxed command was refused, and the person's answer.

When the sandbox's allowlist proxy refused a host during a command
(:meth:`~rein.harness.process_ports.CommandSandbox.refused_hosts`), the
command's result names it, and the person is asked "Allow <host> for this
session" (every time: no rule keeps the answer). Allowed, the session's
proxy lets it through from the next command on; no other session sees it,
and nothing is remembered after the session (``sandbox.network`` is the
lasting setting)."""

from __future__ import annotations

from rein.harness.ports import CommandSandbox
from rein.harness.tools import ToolContext, ToolResult
from rein.sandboxing.proxy import host_name
from rein.sandboxing.settings import check_hosts
from rein.tools.approval import check_approval

__all__ = ["MAX_HOSTS_ASKED", "offer_refused_hosts"]

#: At most this many refused hosts are asked about after one command.
MAX_HOSTS_ASKED = 3


async def offer_refused_hosts(
    ctx: ToolContext, sandbox: CommandSandbox, result: ToolResult
) -> None:
    """Name the hosts ``sandbox`` refused during the command in ``result``
    and ask the person about each (up to :data:`MAX_HOSTS_ASKED`)."""
    refused = [h for h in sandbox.refused_hosts() if _offerable(h)]
    if not refused:
        return
    allowed: list[str] = []
    for host in refused[:MAX_HOSTS_ASKED]:
        denial = await check_approval(
            ctx,
            "command",
            title=f"Allow {host} for this session",
            detail=(
                f"A sandboxed command tried to reach {host} (the sandbox's proxy refused "
                "it, or, with no proxy, the command's output says it could not be resolved); "
                "it is not in sandbox.network. Allowed, this session's run_command commands reach it (on "
                "ports 80 and 443 unless a port is named) until the session ends; no other "
                "session does. To allow it for good, add it to sandbox.network in your "
                "settings."
            ),
            action=f"reach {host} from the sandbox",
            force_ask=True,
            why_ask=f"the sandbox refused {host}",
            about=host,
            exact_only=True,
        )
        if denial is None:
            sandbox.allow_host(host)
            allowed.append(host)
    result.details["sandbox_refused_hosts"] = refused
    note = f"[Rein's sandbox refused {', '.join(refused)} (not in sandbox.network)."
    if len(refused) > MAX_HOSTS_ASKED:
        note += f" The person was not asked about {', '.join(refused[MAX_HOSTS_ASKED:])}."
    if allowed:
        result.details["sandbox_allowed_hosts"] = allowed
        note += (
            f" The person allowed {', '.join(allowed)} for this session: run the command "
            "again to reach it.]"
        )
    else:
        note += (
            " It was not allowed for this session (declined, or no one to ask); change the "
            "command, or call "
            "run_command again with `unsandboxed: true` and a `reason` (the person is asked).]"
        )
    result.content += "\n" + note


def _offerable(entry: str) -> bool:
    """Whether ``entry`` is a host name the person may be asked about
    (never an IP address, in any spelling, nor anything but a host)."""
    try:
        check_hosts([entry])
    except ValueError:
        return False
    return host_name(entry.partition(":")[0])
