"""Whether the workspace's hooks may run, asked through the ACP client.

A ``session/request_permission`` for the session whose run is starting
names every command the workspace's ``.claude/settings.json`` and
``.claude/settings.local.json`` would run (in its title, and in its content
where a client shows it), with the options "Allow" (kept:
remembered in Rein's storage folder, ``hooks-trust.json``, by the hooks'
content hash; a changed hook or script asks again) and "Reject" (the hooks do not run
in this session; a ``hook`` event says so). No answer within
``approval.timeoutMs``, a cancelled request or an error refuses.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from acp import helpers
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from rein.acp._client_calls import ClientCallError, ask_client
from rein.acp.context import ClientLink, current_session
from rein.bring.hook_config import HOOKS_TRUST_FILE
from rein.bring.hook_trust import HookTrustError, HookTrustRequest, TrustStore
from rein.mcp.trust import FileTrustStore, MemoryTrustStore

__all__ = ["ALLOW_HOOKS", "REJECT_HOOKS", "AcpHookPorts"]

ALLOW_HOOKS = "allow_hooks"
REJECT_HOOKS = "reject_hooks"


class AcpHookPorts:
    """:class:`~rein.bring.hook_trust.HookTrustPorts` over the client's
    permission request. ``storage`` None: remembered in memory only."""

    def __init__(self, link: ClientLink, storage: str | Path | None, timeout_s: float) -> None:
        self.link = link
        self.timeout_s = timeout_s
        self.trust: TrustStore = (
            FileTrustStore(Path(storage), file_name=HOOKS_TRUST_FILE)
            if storage is not None
            else MemoryTrustStore()
        )
        #: The sessions' transcripts for the hooks (None: the hooks'
        #: ``transcript_path`` is empty, as nothing is stored).
        self.transcript_folder: Path | None = Path(storage) if storage is not None else None

    async def confirm_hooks(self, request: HookTrustRequest) -> bool:
        session_id = current_session.get()
        if session_id is None:
            raise HookTrustError("no ACP session to ask in")
        options = [
            PermissionOption(option_id=ALLOW_HOOKS, name="Allow the hooks", kind="allow_always"),
            PermissionOption(option_id=REJECT_HOOKS, name="Reject", kind="reject_once"),
        ]
        tool_call = ToolCallUpdate(
            tool_call_id=f"rein-hooks-{uuid.uuid4().hex[:12]}",
            title=request.title,
            kind="execute",
            status="pending",
            raw_input={"tool": "hooks", "detail": request.detail},
            # The commands themselves, where a client shows a request's content.
            content=[helpers.tool_content(helpers.text_block(request.detail))],
        )
        try:
            answer = await ask_client(
                "session/request_permission",
                lambda: self.link.conn.request_permission(
                    session_id=session_id, tool_call=tool_call, options=options
                ),
                bound_s=self.timeout_s,
            )
        except ClientCallError as exc:
            raise HookTrustError(str(exc)) from exc
        outcome = answer.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW_HOOKS
