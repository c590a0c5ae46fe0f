"""What a changed path is to the analyzers: a module the import scan
follows, a file they read besides it (what the change can reach is then not
known), or one they never read (it cannot change their answers).

The analyzer gate narrows a verdict to what the run's changes can reach:
the changed modules and their importers, transitively
(:mod:`rein.analysis.closure`). A changed file they read that is no module
(a setting, a stub marker, an environment's file) may change the analysis
of any file, so the reach is not known; a file they never read (``sed
-i.bak``'s backup, a log, ``.coverage``, ``PKG-INFO``, an image, a data
file) reaches nothing. The files read are an allow-list of what the
presets read (:data:`~rein.harness.analyzer_servers.PRESETS`); anything
else is never read. A configured analyzer that is no preset may read
anything (flake8 or mypy through pylsp read ``setup.cfg``, ``tox.ini``,
``.flake8``, ``mypy.ini``): with one, every changed file but a module is
read (``custom``, :func:`custom_analyzers`). What the presets read:

* modules: ``.py``, ``.pyi`` (``__init__.pyi`` and stubs under
  ``typings/`` too);
* settings: every ``.toml`` and ``.json`` file: ``pyproject.toml``
  (``[tool.ruff]``, ``[tool.pyright]``, ``[tool.basedpyright]``,
  ``requires-python``), ``ruff.toml``, ``.ruff.toml``,
  ``pyrightconfig.json``, what their ``extend``/``extends`` names (a TOML
  or JSON file here; a file ruff's ``extend`` names under any other name
  is read by the pool's own answer, :mod:`rein.disk.ruff_extends`),
  basedpyright's ``.basedpyright/baseline.json``;
  typescript's and eslint's ``tsconfig*.json``, ``jsconfig.json``,
  ``package.json``; clangd's ``compile_commands.json``;
* what resolves an import besides a module: ``py.typed`` (PEP 561, its
  ``partial`` line), ``.pth`` path files, compiled modules (``.so``,
  ``.pyd``, ``.dylib``), any file under ``site-packages`` or
  ``dist-packages`` and ``pyvenv.cfg`` (an environment's), anything
  under ``typings/`` (basedpyright's ``stubPath``) or a ``*-stubs``
  folder (a stub-only package, PEP 561: its name is no identifier), and
  a name without a suffix that could name a package (an identifier: a
  folder moved or deleted as a whole is reported by its own path);
* notebooks (``.ipynb``: ruff lints them);
* requirements and constraints files: an install from them changes the
  environment (kept "not known" as before);
* other languages' sources and settings, for the other presets (gopls,
  clangd, typescript, eslint, biome, bash): :data:`CODE_EXTENSIONS` and
  C/C++'s included fragments (``.inc``, ``.def``, ``.inl``, ``.ipp``,
  ``.tpp``, ``.tcc``); gopls's ``go.mod``, ``go.sum``, ``go.work``,
  ``go.work.sum``, ``vendor/modules.txt``; clangd's ``compile_flags.txt``,
  ``.clangd``, ``.clang-tidy`` (and ``CMakeLists.txt``, its project
  file); eslint's ``.eslintrc*`` and ``.eslintignore``; every
  ``.*ignore`` file (biome's ``vcs.useIgnoreFile`` reads ``.gitignore``);
  ``.shellcheckrc``.

Prose (:func:`is_prose`: ``.md``, ``.rst``, ``.txt`` other than
requirements and the files above) is never read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from rein.harness.analyzer_servers import PRESETS

__all__ = [
    "CODE_EXTENSIONS",
    "SETTING_NAMES",
    "AnalyzerInput",
    "analyzer_input",
    "custom_analyzers",
    "is_prose",
    "never_read",
    "read_not_checked",
]

#: Source files some analyzer could check. A changed file with one of these
#: that the diagnostics source does not cover is "not analysed".
CODE_EXTENSIONS = frozenset(
    {
        ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts",
        ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".c", ".h", ".cc", ".cpp",
        ".cxx", ".hpp", ".cs", ".fs", ".swift", ".m", ".rb", ".php", ".dart", ".lua",
        ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".zig", ".nim", ".vue", ".svelte",
        ".sh", ".bash", ".hh", ".hxx",
    }
)  # fmt: skip

#: What a changed path is to the analyzers (:func:`analyzer_input`).
AnalyzerInput = Literal["module", "read", "unread"]

#: Settings (every TOML and JSON file: ``extend`` may name any), import
#: resolution (path files, compiled modules), notebooks, every source
#: suffix (another language's; a ``.PY``, no module the scan reads) and
#: what a C or C++ file includes besides headers.
_READ_SUFFIXES = (
    frozenset({".toml", ".json", ".jsonc", ".pth", ".so", ".pyd", ".dylib", ".ipynb"})
    | frozenset({".inc", ".def", ".inl", ".ipp", ".tpp", ".tcc"})
    | CODE_EXTENSIONS
)

#: Files read by their name (lower case).
_READ_NAMES = frozenset(
    {"py.typed", "pyvenv.cfg", "go.mod", "go.sum", "go.work", "go.work.sum", ".clangd",
     ".clang-tidy", "compile_flags.txt", "cmakelists.txt", ".shellcheckrc"}
)  # fmt: skip

#: Files read by their last folder and name (gopls's vendored modules' list).
_READ_PATHS = frozenset({"vendor/modules.txt"})

#: Names read by how they start (manifests, eslint's settings).
_READ_PREFIXES = ("requirements", "constraints", ".eslintrc")

#: Folders whose every file is an environment's.
_ENVIRONMENTS = frozenset({"site-packages", "dist-packages"})

#: The presets' names: a configured analyzer of another name may read
#: anything (:func:`custom_analyzers`).
_PRESET_NAMES = frozenset(preset.name for preset in PRESETS)


#: The endings of prose files: notes, a changelog, a readme.
_PROSE = (".md", ".rst", ".txt")


def is_prose(path: str) -> bool:
    """``path`` is prose (a ``.md``, ``.rst`` or ``.txt`` file other than a
    requirements or constraints file or a ``.txt`` a preset reads:
    ``compile_flags.txt``, ``CMakeLists.txt``, ``vendor/modules.txt``): no
    module, setting or manifest, it changes how nothing is imported or
    analysed."""
    name = path.rsplit("/", 1)[-1].lower()
    return (
        name.endswith(_PROSE)
        and not name.startswith(("requirements", "constraints"))
        and name not in _READ_NAMES
        and not _read_path(path)
    )


def _read_path(path: str) -> bool:
    return "/".join(path.split("/")[-2:]) in _READ_PATHS


def custom_analyzers(names: Iterable[str]) -> bool:
    """Some of the analyzers ``names`` is no preset: what it reads is not
    known (:func:`analyzer_input`'s ``custom``)."""
    return any(name not in _PRESET_NAMES for name in names)


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def _stubs(folders: list[str], name: str) -> bool:
    """Under basedpyright's ``typings/`` (its default ``stubPath``) or in
    (or being) a stub-only package's ``*-stubs`` folder."""
    return folders[:1] == ["typings"] or any(f.endswith("-stubs") for f in [*folders, name])


def analyzer_input(path: str, *, custom: bool = False) -> AnalyzerInput:
    """What the changed ``path`` is to the analyzers: ``"module"`` (the
    import scan follows it), ``"read"`` (a setting, an environment's file,
    another language's: the reach is not known) or ``"unread"`` (no change
    to their answers). ``custom``: a configured analyzer is no preset, it
    may read any file (every path but a module is ``"read"``)."""
    *folders, name = path.split("/")
    if name.endswith((".py", ".pyi")):
        return "module"
    if custom:
        return "read"
    if any(f in _ENVIRONMENTS for f in folders) or _stubs(folders, name):
        return "read"  # import resolution reads an environment's and the stubs' trees
    if is_prose(path):
        return "unread"
    lower = name.lower()
    if (
        lower in _READ_NAMES
        or _read_path(path)
        or lower.startswith(_READ_PREFIXES)
        or (lower.startswith(".") and lower.endswith("ignore"))
        or _suffix(name) in _READ_SUFFIXES
        or (not _suffix(name) and name.isidentifier())  # may be a package's folder
    ):
        return "read"
    return "unread"


def never_read(path: str, *, custom: bool = False) -> bool:
    """No analyzer reads ``path`` (prose, a backup, a log, data): its change
    reaches nothing. ``custom``: as :func:`analyzer_input`'s."""
    return analyzer_input(path, custom=custom) == "unread"


#: The presets' settings, by name: what the analyzers read their rules,
#: modes and paths from (and ``.eslintrc*``, ``tsconfig*.json``,
#: ``eslint.config.*`` by how they start).
SETTING_NAMES = frozenset(
    {"pyproject.toml", "ruff.toml", ".ruff.toml", "pyrightconfig.json", "jsconfig.json",
     "package.json", "biome.json", "biome.jsonc", "compile_commands.json",
     "compile_flags.txt", ".clangd", ".clang-tidy", "go.mod", "go.work", ".shellcheckrc"}
)  # fmt: skip
_SETTING_PREFIXES = (".eslintrc", "tsconfig", "eslint.config.")


def read_not_checked(path: str) -> bool:
    """A setting of the presets (:data:`SETTING_NAMES`, basedpyright's
    ``.basedpyright/baseline.json``): read by the analyzers, checked by none
    as a document of its own. An editor, whose diagnostics do not say what
    they cover, is taken to check every file but these
    (:meth:`~rein.harness.gating.coordinators.DiagnosticsCoordinator.covers`):
    a change of one is a changed setting there. Narrower than what
    :func:`analyzer_input` calls read (a ``.gitignore``, a ``LICENSE``, a
    lockfile, a data file would make every verdict of an editor's session
    unverified, review68b)."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in SETTING_NAMES or name.startswith(_SETTING_PREFIXES):
        return True
    return "/".join(path.split("/")[-2:]) == ".basedpyright/baseline.json"
