"""Whether the workspace's hooks may run, asked in the editor.

A ``rein/confirm`` (``tool: "hooks"``) names every command the workspace's
``.claude/settings.json`` and ``.claude/settings.local.json`` would run; a
yes is remembered in Rein's storage folder (``hooks-trust.json``, by the
hooks' content hash: a changed hook or script asks again). An editor without the
method, or no answer within ``approval.timeoutMs``, refuses: the hooks do not
run and a ``hook`` event says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rein.bring.hook_config import HOOKS_TRUST_FILE
from rein.bring.hook_trust import HookTrustError, HookTrustRequest
from rein.lsp.editor_ask import approved, ask_editor
from rein.mcp.trust import FileTrustStore

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = ["EditorHookPorts", "hooks_request"]


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
        answer = await ask_editor(
            self.client, "rein/confirm", hooks_request(request), HookTrustError
        )
        return approved(answer)
