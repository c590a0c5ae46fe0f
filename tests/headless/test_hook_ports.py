"""The terminal's answer to "may the workspace's hooks run?" (``rein run``):
``--allow-hooks`` allows them for this run only (nothing remembered); with
no terminal and no flag nobody can be asked, and the reason names the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.bring.hook_config import HOOKS_TRUST_FILE, HookEntry
from rein.bring.hook_trust import HookTrustError, HookTrustRequest
from rein.headless.hook_ports import TerminalHookPorts

_REQUEST = HookTrustRequest(
    Path("/ws"),
    (HookEntry("PreToolUse", "Bash", "no-rm.sh", None, ".claude/settings.json", "workspace"),),
)


async def test_allow_hooks_allows_for_this_run_and_remembers_nothing(tmp_path: Path) -> None:
    ports = TerminalHookPorts(tmp_path, allow_hooks=True)
    assert await ports.confirm_hooks(_REQUEST) is True
    ports.trust.remember("k")
    assert ports.trust.is_trusted("k")
    assert not (tmp_path / HOOKS_TRUST_FILE).exists()


async def test_without_a_terminal_nobody_is_asked_and_the_reason_names_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    ports = TerminalHookPorts(tmp_path)
    with pytest.raises(HookTrustError, match="--allow-hooks"):
        await ports.confirm_hooks(_REQUEST)
    ports.trust.remember("k")
    assert (tmp_path / HOOKS_TRUST_FILE).exists()  # a yes at a terminal is remembered
