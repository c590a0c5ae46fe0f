"""``gates.analyzer.servers``: the language servers the headless analyzer
pool may run, as configuration entries, and the built-in presets (entries
of the same shape).

An entry whose ``name`` is a preset's overrides the fields it sets and
keeps the preset's others (``{name: "gopls", enabled: false}``); an entry
with a new name adds a server and must give its ``command`` and
``extensions``. :func:`merge_servers` turns the presets and the configured
entries into the list the pool is built from (:mod:`rein.disk.analyzer_discovery`
decides which of them the workspace needs and finds their executables).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "PRESETS",
    "AnalyzerServerConfig",
    "ServerEnabled",
    "check_new_servers",
    "merge_servers",
]

#: "auto": used when the workspace has files of its language (its
#: ``extensions``, or one of its ``projectFiles`` at the root) and, when it
#: names ``configFiles``, one of those; True: always (reported "not found"
#: when missing); False: never.
ServerEnabled = bool | Literal["auto"]


class AnalyzerServerConfig(BaseModel):
    """One language server of the analyzer pool. Every field but ``name`` is
    optional so that an entry can change one field of a preset."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    name: str
    enabled: ServerEnabled | None = None
    #: The command line: the executable (found on PATH, in the project's
    #: ``node_modules/.bin``, next to Rein's Python or in Rein's tool cache)
    #: and its arguments.
    command: list[str] | None = None
    #: File extension -> LSP languageId (``{".ts": "typescript"}``); a glob
    #: ``*.ts`` is taken as its extension.
    extensions: dict[str, str] | None = None
    #: Sent as ``initializationOptions``; None: ``{"settings": settings}``.
    initialization_options: dict[str, Any] | None = None
    #: Answered to ``workspace/configuration`` and sent with
    #: ``workspace/didChangeConfiguration``.
    settings: dict[str, Any] | None = None
    #: "pull": ask ``textDocument/diagnostic`` when the server offers it;
    #: "publish": wait for its ``publishDiagnostics``; "tsserver" (the
    #: typescript preset): ask tsserver for each open file's syntactic and
    #: semantic diagnostics after every change (``typescript.tsserverRequest``),
    #: its publishes are not used.
    diagnostics: Literal["pull", "publish", "tsserver"] | None = None
    #: The dotted settings key choosing between the server's whole-workspace
    #: analysis and open files only: set to "openFilesOnly" in a workspace
    #: over ``workspaceMaxFiles``. None: the server analyses the open files.
    diagnostic_mode_setting: str | None = None
    #: The dotted settings key of the server's exclude list, filled with the
    #: folders the workspace filter skips.
    exclude_setting: str | None = None
    #: Declare ``window.workDoneProgress`` (the server reports progress with
    #: ``$/progress``).
    work_done_progress: bool | None = None
    #: Every publish for an open document carries its version.
    versioned_publish: bool | None = None
    #: After a change, the server counts as done only once it has published
    #: nothing for this long (the gate's quiet period when longer): for a
    #: server that publishes a file's findings in several unversioned passes,
    #: whose first publish after a change can still carry the previous
    #: text's findings of a later pass.
    settle_ms: int | None = Field(None, ge=0, le=60_000)
    #: Declare ``workspace.configuration`` (the server asks for its
    #: settings). False for a server that, while it waits for that answer,
    #: lints only the last file opened (bash-language-server 5).
    workspace_configuration: bool | None = None
    #: The server asks for its settings (``workspace/configuration``) once
    #: initialized: they are not sent with ``workspace/didChangeConfiguration``
    #: as well, which makes such a server set its workspace up a second
    #: time (basedpyright). A server that does not ask (typescript-language-
    #: server) learns them from that notification only.
    asks_settings: bool | None = None
    #: Root files that say the workspace is of this language
    #: (``tsconfig.json``, ``go.mod``) even before it has a source file.
    project_files: list[str] | None = None
    #: The server is used only when one of these root files exists (ESLint's,
    #: Biome's configuration).
    config_files: list[str] | None = None
    #: The one command that installs the server (``rein doctor`` prints it).
    install: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a server needs a name")
        return value.strip()

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not all(part.strip() for part in value)):
            raise ValueError("command must be a non-empty list of non-empty strings")
        return value

    @field_validator("extensions")
    @classmethod
    def _extensions(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        out: dict[str, str] = {}
        for key, language in value.items():
            ext = key[1:] if key.startswith("*.") else key
            ext = ext if ext.startswith(".") else f".{ext}"
            if len(ext) < 2 or any(c in ext for c in "*?[]/ "):
                raise ValueError(f"{key!r} is not a file extension (e.g. '.ts' or '*.ts')")
            if not language.strip():
                raise ValueError(f"the languageId of {key!r} is empty")
            out[ext] = language
        return out

    def over(self, base: AnalyzerServerConfig) -> AnalyzerServerConfig:
        """``base`` with the fields this entry sets."""
        changes = {k: v for k, v in self.model_dump(exclude_unset=True).items() if v is not None}
        return base.model_copy(update=changes)


def _preset(**fields: Any) -> AnalyzerServerConfig:
    return AnalyzerServerConfig(**{"enabled": "auto", "diagnostics": "publish", **fields})


_PY = {".py": "python", ".pyi": "python"}
_JS = {
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascriptreact",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
_C = {
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
}

#: The built-in servers, in the order they start.
PRESETS: tuple[AnalyzerServerConfig, ...] = (
    _preset(
        name="ruff",
        command=["ruff", "server"],
        extensions=_PY,
        diagnostics="pull",
        project_files=["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"],
        install="pip install ruff",
    ),
    _preset(
        name="basedpyright",
        command=["basedpyright-langserver", "--stdio"],
        extensions=_PY,
        diagnostics="pull",
        # The language server reads a setting it is not sent as off, not as
        # the command line's default: autoSearchPaths is sent on (``src/`` on
        # the search path, as ``basedpyright`` on the command line has it).
        # No python.pythonPath: the server then finds the interpreter as the
        # command line does (the project's venvPath/venv, else ``.venv`` in
        # the root, else ``python`` on PATH).
        settings={
            "basedpyright": {
                "analysis": {
                    "typeCheckingMode": "standard",
                    "diagnosticMode": "workspace",
                    "autoSearchPaths": True,
                }
            }
        },
        versioned_publish=True,
        # It asks for them at ``initialized`` (its updateSettingsForAllWorkspaces).
        asks_settings=True,
        exclude_setting="basedpyright.analysis.exclude",
        diagnostic_mode_setting="basedpyright.analysis.diagnosticMode",
        project_files=["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"],
        install="pip install basedpyright",
    ),
    _preset(
        name="typescript",
        command=["typescript-language-server", "--stdio"],
        extensions=_JS,
        # It analyses the open files only (tsserver's geterr): the pool opens
        # the workspace's first files at start and every file a change touches.
        initialization_options={"preferences": {}},
        # It publishes a file's syntax, semantic and suggestion passes one by
        # one (each the union with the other passes' latest), unversioned: the
        # first publish after a change can carry the old text's type errors.
        # Asked instead, tsserver answers for the text it has.
        diagnostics="tsserver",
        # Its project loading is a work-done progress: the baseline waits for it.
        work_done_progress=True,
        project_files=["tsconfig.json", "jsconfig.json", "package.json"],
        install="npm i -g typescript-language-server typescript@5",
    ),
    _preset(
        name="eslint",
        command=["vscode-eslint-language-server", "--stdio"],
        extensions=_JS,
        diagnostics="pull",
        settings={
            "validate": "on",
            "run": "onType",
            "problems": {"shortenToSingleLine": False},
            "nodePath": None,
            "workingDirectory": {"mode": "auto"},
            "experimental": {"useFlatConfig": True},
            "codeActionOnSave": {"enable": False, "mode": "all"},
            "format": False,
            "quiet": False,
            "onIgnoredFiles": "off",
            "rulesCustomizations": [],
            "useESLintClass": False,
        },
        config_files=[
            "eslint.config.js",
            "eslint.config.mjs",
            "eslint.config.cjs",
            "eslint.config.ts",
            ".eslintrc",
            ".eslintrc.js",
            ".eslintrc.cjs",
            ".eslintrc.json",
            ".eslintrc.yaml",
            ".eslintrc.yml",
        ],
        install="npm i -g vscode-langservers-extracted",
    ),
    _preset(
        name="biome",
        command=["biome", "lsp-proxy"],
        extensions={**_JS, ".json": "json", ".jsonc": "jsonc"},
        diagnostics="pull",
        config_files=["biome.json", "biome.jsonc"],
        install="npm i -g @biomejs/biome",
    ),
    _preset(
        name="gopls",
        command=["gopls"],
        extensions={".go": "go"},
        diagnostics="pull",
        work_done_progress=True,
        # Debian's gopls 0.5 publishes a change twice, sometimes unversioned:
        # its vet findings 0.1-0.5 s after the type errors.
        settle_ms=750,
        project_files=["go.mod", "go.work"],
        install="apt-get install gopls golang-go (or: go install golang.org/x/tools/gopls@latest)",
    ),
    _preset(
        name="clangd",
        command=["clangd", "--background-index=false"],
        extensions=_C,
        diagnostics="pull",
        # It says when it is done with each file (a header's change rebuilds
        # the files including it after the header's own publish).
        initialization_options={"clangdFileStatus": True},
        project_files=["compile_commands.json", "CMakeLists.txt", "compile_flags.txt"],
        install="apt-get install clangd",
    ),
    _preset(
        name="bash",
        command=["bash-language-server", "start"],
        extensions={".sh": "shellscript", ".bash": "shellscript"},
        settings={"bashIde": {"shellcheckPath": "shellcheck", "backgroundAnalysisMaxFiles": 0}},
        # Asked for its settings, it lints only the last file opened meanwhile.
        workspace_configuration=False,
        install="npm i -g bash-language-server && apt-get install shellcheck",
    ),
)


def merge_servers(configured: Sequence[AnalyzerServerConfig]) -> list[AnalyzerServerConfig]:
    """The presets with the configured entries laid over them, then the
    configured servers with new names, in their order (``enabled`` "auto"
    and ``diagnostics`` "pull" unless they say). A later entry of the same
    name is laid over an earlier one."""
    out: dict[str, AnalyzerServerConfig] = {preset.name: preset for preset in PRESETS}
    for entry in configured:
        base = out.get(entry.name)
        if base is None:
            base = AnalyzerServerConfig(name=entry.name, enabled="auto", diagnostics="pull")
        out[entry.name] = entry.over(base)
    return list(out.values())


def check_new_servers(configured: Sequence[AnalyzerServerConfig]) -> None:
    """A configured server that is no preset gives its command and extensions."""
    presets = {preset.name for preset in PRESETS}
    for index, entry in enumerate(configured):
        if entry.name in presets:
            continue
        for field, value in (("command", entry.command), ("extensions", entry.extensions)):
            if value is None:
                raise ValueError(
                    f"servers[{index}] ({entry.name!r}): {field} is required for a "
                    f"server that is no preset (the presets: {', '.join(sorted(presets))})"
                )
