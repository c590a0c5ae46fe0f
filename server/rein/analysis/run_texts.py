"""The changed files' texts as the analyzer gate reads them: now (from the
workspace: "" for a file that does not exist, None when it cannot be
read), and before the run (from their baselines)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping

from rein.analysis.baselines import FileBaseline
from rein.harness.errors import ReinError
from rein.harness.ports import Workspace

__all__ = ["before_and_now", "exists", "reader", "text_now"]


async def exists(workspace: Workspace, path: str) -> bool:
    try:
        return await workspace.exists(path)
    except (ReinError, OSError):
        return False


async def text_now(workspace: Workspace | None, path: str) -> str | None:
    """``path``'s text now ("" when it does not exist, None when unknown)."""
    if workspace is None:
        return None
    try:
        return (await workspace.read_text(path)).text
    except (ReinError, OSError):
        return "" if not await exists(workspace, path) else None


def reader(workspace: Workspace | None) -> Callable[[str], Awaitable[str | None]]:
    """:func:`text_now` of ``workspace``."""

    async def now(path: str) -> str | None:
        return await text_now(workspace, path)

    return now


async def before_and_now(
    touched: Collection[str], files: Mapping[str, FileBaseline], workspace: Workspace | None
) -> tuple[dict[str, str], dict[str, str]] | None:
    """Each changed file's text before the run (``files``: their baselines)
    and now ("" for a file that does not exist); None when one of them is
    not known."""
    before: dict[str, str] = {}
    now: dict[str, str] = {}
    for path in sorted(touched):
        baseline = files.get(path)
        was = baseline.text_before_the_run if baseline is not None else None
        text = await text_now(workspace, path)
        if was is None or text is None:
            return None
        before[path], now[path] = was, text
    return before, now
