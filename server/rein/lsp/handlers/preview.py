"""The preview (the project's dev server): ``rein/preview`` and the
``rein.preview.start``, ``.stop`` and ``.restart`` commands (one handler,
the action as its parameter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from rein.lsp.server import ReinServer

__all__ = ["preview", "preview_command"]


async def preview(server: ReinServer, params: Any) -> dict[str, Any]:
    await server.ready()
    from rein.lsp.params import PreviewParams, parse

    parsed = parse(PreviewParams, params, "rein/preview")
    return await server.preview.handle(parsed.action)


async def preview_command(
    server: ReinServer, args: tuple[Any, ...], action: Literal["start", "stop", "restart"]
) -> dict[str, Any]:
    await server.ready()
    return await server.preview.handle(action)
