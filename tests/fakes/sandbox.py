"""The CommandSandbox port: a sandbox that works or says why not, and
records what it wrapped (the real one is rein.sandboxing.BwrapSandbox)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence


class FakeSandbox:
    """``why_not`` None: it works, and ``start`` runs the command with
    ``FAKE_SANDBOX=1`` in its environment (so a test sees it was wrapped);
    ``note`` is the failure note it gives every failed command, ``removed``
    the note of :meth:`ended` after every wrapped command, ``temp`` its
    temporary folder (``TMPDIR``)."""

    def __init__(
        self,
        why_not: str | None = None,
        note: str | None = None,
        temp: str | None = None,
        removed: str | None = None,
    ) -> None:
        self.why_not = why_not
        self.note = note
        self.temp = temp if temp is not None else tempfile.gettempdir()
        self.removed = removed
        self.wrapped: list[list[str]] = []
        self.outputs: list[str] = []
        #: What :meth:`refused_hosts` answers next (then nothing).
        self.refused: list[str] = []
        self.allowed: list[str] = []

    def unavailable(self) -> str | None:
        return self.why_not

    async def start(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        self.wrapped.append(list(argv))
        return ["env", "FAKE_SANDBOX=1", *argv]

    def failure_note(self, output: str) -> str | None:
        self.outputs.append(output)
        return self.note

    async def ended(self) -> str | None:
        return self.removed

    def temp_dir(self) -> str:
        return self.temp

    def refused_hosts(self) -> list[str]:
        refused, self.refused = self.refused, []
        return refused

    def allow_host(self, host: str) -> None:
        self.allowed.append(host)
