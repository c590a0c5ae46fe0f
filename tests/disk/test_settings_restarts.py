"""A changed setting an analyzer reads but is not shown as a document
(rein.disk.pool_environment.SettingChanges): a didChangeWatchedFiles event
to the analyzers whose registered watchers want it (ruff's, basedpyright's,
gopls's globs), a restart before the pool is next waited for to one that
reads it only at start (clangd's flags, typescript's tsconfig.json);
nothing to the others."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lsprotocol import types as lsp

from rein.disk.analyzer_notices import Registrations
from rein.disk.pool_environment import SettingChanges
from rein.disk.watch_globs import glob_regex

ROOT = Path("/w")


class Client:
    def __init__(self) -> None:
        self.watched: list[list[tuple[str, lsp.FileChangeType]]] = []

    def workspace_did_change_watched_files(self, params: lsp.DidChangeWatchedFilesParams) -> None:
        self.watched.append([(c.uri.removeprefix("file:///w/"), c.type) for c in params.changes])


class Analyzer:
    def __init__(self, name: str, suffix: str, *globs: str) -> None:
        self.spec = SimpleNamespace(name=name)
        self.alive = True
        self.client = Client()
        self.pool = SimpleNamespace(root=ROOT)
        self.registrations = Registrations()
        watchers: list[dict[str, Any]] = [{"globPattern": g} for g in globs]
        self.registrations.register(
            lsp.RegistrationParams(
                [
                    lsp.Registration(
                        "w", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"watchers": watchers}
                    )
                ]
            )
        )
        self.suffix = suffix
        self.restarted = 0
        self.refreshed = 0

    def owns(self, path: str) -> bool:
        return path.endswith(self.suffix)

    def refresh(self) -> None:
        self.refreshed += 1

    async def restart(self) -> None:
        self.restarted += 1


async def test_each_setting_reaches_the_analyzer_the_way_it_takes_it() -> None:
    ruff = Analyzer("ruff", ".py", "**/.ruff.toml", "**/ruff.toml", "**/pyproject.toml")
    pyright = Analyzer("basedpyright", ".py", "**/pyrightconfig.json", "**")
    gopls = Analyzer("gopls", ".go", "**/*.{go,mod,sum,work}")
    clangd, ts = Analyzer("clangd", ".c"), Analyzer("typescript", ".ts")
    analyzers = [ruff, pyright, gopls, clangd, ts]
    changes = SettingChanges()
    # Documents, prose and a name no setting has: nothing.
    changes.changed(analyzers, ["main.c", "lib.py", "a.go", "notes/compile_flags.md"])  # type: ignore[arg-type]
    await changes.apply(analyzers)  # type: ignore[arg-type]
    assert [(a.client.watched, a.restarted) for a in analyzers] == [([], 0)] * 5
    changes.changed(analyzers, ["sub/pyproject.toml", "pyrightconfig.json", "go.mod"])  # type: ignore[arg-type]
    changed = lsp.FileChangeType.Deleted  # no such files under /w
    assert ruff.client.watched == [[("sub/pyproject.toml", changed)]]
    assert pyright.client.watched == [
        [("sub/pyproject.toml", changed), ("pyrightconfig.json", changed), ("go.mod", changed)]
    ]
    assert gopls.client.watched == [[("go.mod", changed)]]
    assert [a.refreshed for a in analyzers] == [1, 1, 1, 0, 0]
    changes.changed(analyzers, ["sub/compile_flags.txt", "tsconfig.json"])  # type: ignore[arg-type]
    changes.changed(analyzers, [".clangd"])  # type: ignore[arg-type]
    await changes.apply(analyzers)  # type: ignore[arg-type]
    await changes.apply(analyzers)  # type: ignore[arg-type]  # owed once
    assert [a.restarted for a in analyzers] == [0, 0, 0, 1, 1]


async def test_a_commands_temporary_file_is_no_setting() -> None:
    # sed -i writes sedXXXXXX beside the file it edits: basedpyright's "**"
    # watcher would have every open file re-pulled at each sed (seen on
    # sympy: 14 re-pulls past requestTimeoutMs during one command edit).
    pyright = Analyzer("basedpyright", ".py", "**/pyrightconfig.json", "**")
    changes = SettingChanges()
    changes.changed([pyright], ["sympy/stats/sedAb3x9Q", "pkg"])  # type: ignore[arg-type]
    assert (pyright.client.watched, pyright.refreshed) == ([], 0)
    changes.changed([pyright], ["pyrightconfig.json"])  # type: ignore[arg-type]
    assert pyright.refreshed == 1


def test_lsp_globs() -> None:
    cases = {
        "**/pyproject.toml": (["pyproject.toml", "a/b/pyproject.toml"], ["xpyproject.toml"]),
        "**/*.{go,mod,sum,work}": (["go.mod", "x/y.go", "go.work"], ["go.modx", "a.py"]),
        "*.py": (["a.py"], ["d/a.py"]),
        "src/**": (["src/a", "src/a/b.py"], ["srcx/a"]),
        "a?[0-9].[!x]": (["ab1.y"], ["ab1.x", "abc.y"]),
        "**": (["a", "a/b/c"], []),
    }
    for pattern, (matching, other) in cases.items():
        regex = glob_regex(pattern)
        assert [p for p in matching + other if regex.match(p)] == matching, pattern


def test_a_relative_pattern_and_the_kinds_a_watcher_wants() -> None:
    registrations = Registrations()
    relative = {"baseUri": "file:///w/sub", "pattern": "*.toml"}
    watchers = [{"globPattern": relative, "kind": lsp.WatchKind.Change.value}]
    registrations.register(
        lsp.RegistrationParams(
            [lsp.Registration("r", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"watchers": watchers})]
        )
    )
    changed, deleted = lsp.FileChangeType.Changed, lsp.FileChangeType.Deleted
    assert registrations.watches(ROOT, "sub/ruff.toml", changed)
    assert not registrations.watches(ROOT, "sub/ruff.toml", deleted)
    assert not registrations.watches(ROOT, "ruff.toml", changed)
    registrations.unregister(lsp.UnregistrationParams([lsp.Unregistration("r", "")]))
    assert not registrations.watches(ROOT, "sub/ruff.toml", changed)


def test_registration_options_as_lsprotocol_objects() -> None:
    registrations = Registrations()
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        [
            lsp.FileSystemWatcher("**/ruff.toml"),
            lsp.FileSystemWatcher(
                lsp.RelativePattern("file:///w/sub", "*.json"), lsp.WatchKind.Delete
            ),
        ]
    )
    registrations.register(
        lsp.RegistrationParams(
            [lsp.Registration("o", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)]
        )
    )
    changed, deleted = lsp.FileChangeType.Changed, lsp.FileChangeType.Deleted
    assert registrations.watches(ROOT, "a/ruff.toml", changed)
    assert registrations.watches(ROOT, "sub/x.json", deleted)
    assert not registrations.watches(ROOT, "sub/x.json", changed)
