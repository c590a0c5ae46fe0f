"""The pool navigator's own logic, without a server: which analyzers may
answer, hover texts, and a clear refusal when none can."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from rein.disk.analyzers import AnalyzerPool
from rein.disk.pool_navigator import PoolNavigator, _hover_text, navigates
from rein.harness.navigation_ports import NavigationUnavailable, Position


def test_only_servers_that_are_not_linters_navigate() -> None:
    assert not navigates(["ruff", "eslint", "biome", "bash"])
    assert navigates(["ruff", "basedpyright"])
    assert navigates(["gopls"])


def test_hover_contents_of_every_shape_become_text() -> None:
    markup = lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="**f**")
    assert _hover_text(markup) == "**f**"
    marked = lsp.MarkedStringWithLanguage(language="python", value="def f()")
    assert _hover_text([marked, "doc"]) == "```python\ndef f()\n```\n\ndoc"


async def test_a_file_no_running_server_owns_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    async with AnalyzerPool(tmp_path, []) as pool:
        navigator = PoolNavigator(pool, index_wait_s=0.1)
        assert navigator.source == "no language server"
        with pytest.raises(
            NavigationUnavailable, match=r"No language server here answers for \.py"
        ):
            await navigator.references("a.py", Position(0, 0))
        with pytest.raises(NavigationUnavailable, match="No language server is running"):
            await navigator.workspace_symbols("x")
