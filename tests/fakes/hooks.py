"""The person's answer to "may the workspace's hooks run?" (a
:class:`~rein.bring.hook_trust.HookTrustPorts` without a person)."""

from __future__ import annotations

from pathlib import Path

from rein.bring.hook_trust import HookTrustError, HookTrustRequest
from rein.mcp.trust import MemoryTrustStore


class FakeHookTrust:
    """Answers ``answer`` (None: nobody can be asked) and records each
    question; transcripts go to ``transcripts`` (None: not written)."""

    def __init__(self, answer: bool | None = True, transcripts: Path | None = None) -> None:
        self.answer = answer
        self.transcript_folder = transcripts
        self.trust = MemoryTrustStore()
        self.asked: list[HookTrustRequest] = []

    async def confirm_hooks(self, request: HookTrustRequest) -> bool:
        self.asked.append(request)
        if self.answer is None:
            raise HookTrustError("nobody to ask")
        return self.answer
