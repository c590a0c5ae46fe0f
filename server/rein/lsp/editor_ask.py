"""One question to the editor on behalf of a setup's trust (the
workspace's hooks, an MCP server and its inputs): the request, and the
reason the person was not asked when the editor cannot answer.

The editor without the method, no answer within ``approval.timeoutMs``
(:class:`~rein.lsp.client_timeout.ClientTimeout`) or an error answer is a
refusal: ``refused(reason)`` is raised, the caller's own error type, so
the hook or server is not used and the reason says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from rein.lsp.channel import method_not_found
from rein.lsp.client_timeout import ClientTimeout

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = ["approved", "ask_editor"]

log = logging.getLogger(__name__)


async def ask_editor(
    client: ClientChannel,
    method: str,
    params: dict[str, Any],
    refused: Callable[[str], Exception],
) -> Any:
    """The editor's answer to ``method``; raises ``refused(reason)`` when
    it gives none."""
    cannot = f"this editor cannot ask ({method} is not supported)"
    if not client.supports(method):
        raise refused(cannot)
    try:
        return await client.request(method, params)
    except ClientTimeout as exc:
        raise refused(str(exc)) from None
    except JsonRpcException as exc:
        if method_not_found(exc):
            raise refused(cannot) from None
        log.info("%s failed: %s", method, exc)
        raise refused(f"{method} failed: {exc}") from None


def approved(answer: Any) -> bool:
    """Whether a ``rein/confirm`` answer is a yes."""
    return bool(isinstance(answer, dict) and answer.get("approved") is True)
