"""Whether a workspace's hooks may run: what the person is asked
(:class:`HookTrustRequest`), the host's side of asking and remembering
(:class:`HookTrustPorts`: the editor's ``rein/confirm``, the terminal or
``--allow-hooks``, the ACP client's permission request), the error when
nobody can be asked, and one session's asking (:class:`HookPermission`:
once per content, a refusal reported). Used by
:mod:`rein.bring.hooks_adapter`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rein.bring.hook_config import HookEntry, TrustStore, hook_files, workspace_hooks_key
from rein.harness.errors import ReinError
from rein.harness.events import Emit, HookActivity

__all__ = [
    "HookPermission",
    "HookTrustError",
    "HookTrustPorts",
    "HookTrustRequest",
    "TrustStore",
]


class HookTrustError(ReinError):
    """Nobody can be asked whether the workspace's hooks may run (no
    terminal, an editor without the request): its message is why (the hooks
    are then not run, and a ``hook`` event says why)."""


@dataclass(frozen=True, slots=True)
class HookTrustRequest:
    """What the person is asked: may these commands of the workspace run?"""

    root: Path
    hooks: tuple[HookEntry, ...]

    @property
    def title(self) -> str:
        return "Allow the workspace's hooks to run?"

    @property
    def detail(self) -> str:
        lines = [
            f"{h.source}: {h.event} [{h.matcher or '*'}]"
            + (f" (time limit {h.timeout_s:g} s)" if h.timeout_s is not None else "")
            + f" runs: {h.command}"
            for h in self.hooks
        ]
        root = self.root.resolve()
        files = [str(p.relative_to(root)) for p in hook_files(root, list(self.hooks))]
        ran = f"\nThey run these files of the workspace: {', '.join(files)}" if files else ""
        return (
            "The workspace defines hooks (Claude Code's format) that Rein would run:\n"
            + "\n".join(lines)
            + ran
            + "\n\nAllow only if you trust this workspace; a changed hook or file asks again."
        )


class HookTrustPorts(Protocol):
    """What the host gives: where the permission is remembered, and how the
    person is asked (the editor's prompt, the terminal, the ACP client)."""

    @property
    def trust(self) -> TrustStore: ...

    @property
    def transcript_folder(self) -> Path | None:
        """Where the sessions' transcripts are written (in Rein's storage
        folder); None: nowhere (the hooks' ``transcript_path`` is empty)."""
        ...

    async def confirm_hooks(self, request: HookTrustRequest) -> bool:
        """Whether the person allows these hooks. HookTrustError: nobody can
        be asked (its message is the reason)."""
        ...


class HookPermission:
    """Whether one session may run the workspace's hooks: remembered by
    their content key, asked at most once per key in the session (a
    refusal is a ``hook`` event per source, and is not asked again)."""

    def __init__(self, root: Path, ports: HookTrustPorts, report: Emit) -> None:
        self.root = root
        self.ports = ports
        self.report = report
        self._refused_key: str | None = None
        #: The key the workspace's hooks were last allowed by (their entries
        #: and the bytes of the files they run).
        self._allowed_key: str | None = None

    async def still_allowed(self, workspace: list[HookEntry]) -> bool:
        """Just before a workspace hook runs: are its entries and the files
        they run still what the person allowed? A changed one asks again."""
        if self._allowed_key == workspace_hooks_key(self.root, workspace):
            return True
        return await self.allowed(workspace)

    async def allowed(self, workspace: list[HookEntry]) -> bool:
        key = workspace_hooks_key(self.root, workspace)
        if self.ports.trust.is_trusted(key):
            self._allowed_key = key
            return True
        if self._refused_key == key:
            return False  # asked in this session already: not again for the same hooks
        why = "the person did not allow them"
        try:
            allowed = await self.ports.confirm_hooks(HookTrustRequest(self.root, tuple(workspace)))
        except HookTrustError as exc:
            allowed, why = False, str(exc)
        if allowed:
            self.ports.trust.remember(key)
            self._allowed_key = key
            return True
        self._refused_key = key
        for source in dict.fromkeys(h.source for h in workspace):
            self.report(
                HookActivity(
                    event="(trust)",
                    outcome="skipped",
                    command="",
                    source=source,
                    message=f"the workspace's hooks are not run: {why}",
                )
            )
        return False
