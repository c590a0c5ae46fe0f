"""Whether the workspace's hooks may run, asked at a terminal (``rein run``).

The workspace's hooks (``.claude/settings.json``, ``.claude/settings.local.json``)
run after a yes at the terminal, remembered in the storage folder
(``hooks-trust.json``, by the hooks' content hash: a changed hook asks
again). With no terminal (CI, a pipe) nothing is asked and they do not run,
unless ``--allow-hooks`` allows them for this run (nothing remembered).
``--yes`` (approve tool calls) does not allow them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rein.bring.hook_config import HOOKS_TRUST_FILE
from rein.bring.hook_trust import HookTrustError, HookTrustRequest
from rein.headless.mcp_ports import read_line
from rein.mcp.trust import FileTrustStore

__all__ = ["NO_TERMINAL_HOOKS", "TerminalHookPorts"]

NO_TERMINAL_HOOKS = (
    "no terminal to ask whether they may run; run once in a terminal, or pass --allow-hooks"
)


class TerminalHookPorts:
    """:class:`~rein.bring.hook_trust.HookTrustPorts` at a terminal."""

    def __init__(self, storage: Path, allow_hooks: bool = False, timeout_s: float = 600.0) -> None:
        # --allow-hooks allows for this process only: nothing is remembered.
        self.trust = FileTrustStore(storage, persist=not allow_hooks, file_name=HOOKS_TRUST_FILE)
        self.allow_hooks = allow_hooks
        self.timeout_s = timeout_s
        #: The sessions' transcripts for the hooks (``transcript_path``).
        self.transcript_folder: Path | None = storage

    async def confirm_hooks(self, request: HookTrustRequest) -> bool:
        if self.allow_hooks:
            return True
        if not sys.stdin.isatty():
            raise HookTrustError(NO_TERMINAL_HOOKS)
        answer = await read_line(f"\n{request.detail}\n{request.title} [y/N] ", self.timeout_s)
        return answer is not None and answer.strip().lower() in ("y", "yes")
