"""A setting an analyzer reads only when it starts (clangd's flags; it
watches no file) restarts it before the pool is next waited for
(rein.disk.pool_environment.SettingsRestarts); nothing else does."""

from __future__ import annotations

from types import SimpleNamespace

from rein.disk.pool_environment import SettingsRestarts


class Analyzer:
    def __init__(self, name: str, *, watches_files: bool = False) -> None:
        self.spec = SimpleNamespace(name=name)
        self.alive = True
        self.watches_files = watches_files
        self.restarted = 0

    async def restart(self) -> None:
        self.restarted += 1


async def test_a_changed_flags_file_restarts_clangd_once_and_nothing_else() -> None:
    clangd, gopls, pyright = (
        Analyzer("clangd"),
        Analyzer("gopls"),
        Analyzer("basedpyright", watches_files=True),
    )
    analyzers = [clangd, gopls, pyright]
    restarts = SettingsRestarts()
    restarts.changed(analyzers, ["main.c", "lib.py", "pyproject.toml", "notes/compile_flags.md"])  # type: ignore[arg-type]
    await restarts.apply(analyzers)  # type: ignore[arg-type]
    assert [a.restarted for a in analyzers] == [0, 0, 0]
    restarts.changed(analyzers, ["sub/compile_flags.txt"])  # type: ignore[arg-type]
    restarts.changed(analyzers, [".clangd"])  # type: ignore[arg-type]
    await restarts.apply(analyzers)  # type: ignore[arg-type]
    await restarts.apply(analyzers)  # type: ignore[arg-type]  # owed once
    assert [a.restarted for a in analyzers] == [1, 0, 0]
