"""Whether the workspace's hooks may run, asked in the editor.

A ``rein/confirm`` (``tool: "hooks"``) names every command the workspace's
``.claude/settings.json`` and ``.claude/settings.local.json`` would run; a
yes is remembered in Rein's storage folder (``hooks-trust.json``, by the
hooks' content hash: a changed hook or script asks again). An editor without the
method, or no answer within ``approval.timeoutMs``, refuses: the hooks do not
run and a ``hook`` event says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from rein.bring.hook_config import HOOKS_TRUST_FILE
from rein.bring.hook_trust import HookTrustError, HookTrustRequest
from rein.lsp.channel import method_not_found
from rein.lsp.client_timeout import ClientTimeout
from rein.mcp.trust import FileTrustStore

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = ["EditorHookPorts", "hooks_request"]

log = logging.getLogger(__name__)


def hooks_request(request: HookTrustRequest) -> dict[str, Any]:
    """The ``rein/confirm`` params of the question."""
    return {"tool": "hooks", "title": request.title, "detail": request.detail}


class EditorHookPorts:
    """:class:`~rein.bring.hook_trust.HookTrustPorts` over ``rein/confirm``."""

    def __init__(self, client: ClientChannel, storage: Callable[[], Path]) -> None:
        self.client = client
        self._storage = storage

    @property
    def trust(self) -> FileTrustStore:
        """In the storage folder configured now (``storagePath``)."""
        return FileTrustStore(self._storage(), file_name=HOOKS_TRUST_FILE)

    @property
    def transcript_folder(self) -> Path:
        """The sessions' transcripts for the hooks, in the storage folder."""
        return self._storage()

    async def confirm_hooks(self, request: HookTrustRequest) -> bool:
        method = "rein/confirm"
        if not self.client.supports(method):
            raise HookTrustError(f"this editor cannot ask ({method} is not supported)")
        try:
            result = await self.client.request(method, hooks_request(request))
        except ClientTimeout as exc:
            raise HookTrustError(str(exc)) from None
        except JsonRpcException as exc:
            if method_not_found(exc):
                raise HookTrustError(
                    f"this editor cannot ask ({method} is not supported)"
                ) from None
            log.info("%s failed: %s", method, exc)
            raise HookTrustError(f"{method} failed: {exc}") from None
        return bool(isinstance(result, dict) and result.get("approved") is True)
