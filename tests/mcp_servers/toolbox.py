"""A stdio MCP server whose tools misbehave on request: the tests' real server.

Run as ``python -m tests.mcp_servers.toolbox`` (or by path). Tools:

* ``echo(text)``: returns the text;
* ``crash()``: the process exits mid-call (status 3);
* ``hang()``: never returns (until cancelled); ``hang_started()`` returns
  once one runs, ``wait_cancelled()`` once one was cancelled (the client's
  ``notifications/cancelled`` arrived);
* ``image()``: returns a tiny PNG;
* ``fail(reason)``: the tool fails (``isError``);
* ``grow()``: adds the tool ``late_tool`` and sends ``notifications/tools/list_changed``;
* ``garble()``: prints one line that is not UTF-8 on stdout, then returns;
* ``pid()``: returns the server's process id (a test kills it while idle);
* ``env(name)``: returns the variable's value in the server's environment
  (``<unset>`` when it has none).
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# A 1x1 transparent PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

server = MCPServer("toolbox")


@server.tool()
def echo(text: str) -> str:
    """Return the text as it is."""
    return f"echo: {text}"


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


_hanging = anyio.Event()
_cancelled = anyio.Event()


@server.tool()
async def hang() -> str:
    """Never return (until cancelled)."""
    _hanging.set()
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        _cancelled.set()
        raise
    return "unreachable"


@server.tool()
async def hang_started() -> str:
    """Return once a hang() call is running (within 10 s)."""
    with anyio.fail_after(10):
        await _hanging.wait()
    return "hanging"


@server.tool()
async def wait_cancelled() -> str:
    """Return once a hang() call was cancelled by the client (within 10 s)."""
    with anyio.fail_after(10):
        await _cancelled.wait()
    return "cancelled"


@server.tool()
def image() -> Image:
    """Return a tiny PNG image."""
    return Image(data=PNG, format="png")


@server.tool()
def fail(reason: str) -> str:
    """Fail with the reason."""
    raise ToolError(f"failed on purpose: {reason}")


def late_tool() -> str:
    """A tool that exists only after grow()."""
    return "late"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool late_tool and tell the client the tool list changed."""
    server.add_tool(late_tool)
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool()
def garble() -> str:
    """Print one line of bytes that are not UTF-8 between two messages."""
    # The SDK moves the wire off fd 1 (print goes to stderr): write to its
    # private copy, between two messages (nothing else is being sent now).
    from mcp.server import stdio

    wire = stdio._claims[1].private_fd
    os.write(wire if wire is not None else 1, b"\xff\xfe not utf-8 \xc3\x28\n")
    return "garbled"


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable in the server's environment."""
    return os.environ.get(name, "<unset>")


if __name__ == "__main__":
    server.run()
