"""What a changed path is to the analyzers: a module the import scan
follows, a file they read besides it (what the change can reach is then not
known), or one they never read (it cannot change their answers).

The analyzer gate narrows a verdict to what the run's changes can reach:
the changed modules and their importers, transitively
(:mod:`rein.analysis.closure`). A changed file they read that is no module
(a setting, a stub marker, an environment's file) may change the analysis
of any file, so the reach is not known; a file they never read (``sed
-i.bak``'s backup, a log, ``.coverage``, ``PKG-INFO``, an image, a data
file) reaches nothing. The files read are an allow-list (what ruff and
basedpyright read, and what another preset analyzer reads); anything else
is never read:

* modules: ``.py``, ``.pyi`` (``__init__.pyi`` and stubs under
  ``typings/`` too);
* settings: every ``.toml`` and ``.json`` file: ``pyproject.toml``
  (``[tool.ruff]``, ``[tool.pyright]``, ``[tool.basedpyright]``,
  ``requires-python``), ``ruff.toml``, ``.ruff.toml``,
  ``pyrightconfig.json``, what their ``extend``/``extends`` names (a TOML
  or JSON file), basedpyright's ``.basedpyright/baseline.json``;
* what resolves an import besides a module: ``py.typed`` (PEP 561, its
  ``partial`` line), ``.pth`` path files, compiled modules (``.so``,
  ``.pyd``, ``.dylib``), any file under ``site-packages`` or
  ``dist-packages`` and ``pyvenv.cfg`` (an environment's), and a name
  without a suffix that could name a package (an identifier: a folder
  moved or deleted as a whole is reported by its own path);
* notebooks (``.ipynb``: ruff lints them);
* requirements and constraints files: an install from them changes the
  environment (kept "not known" as before);
* other languages' sources and settings, for the other presets (gopls,
  clangd, typescript, eslint, biome, bash): :data:`CODE_EXTENSIONS`,
  ``go.mod``, ``go.sum``, ``go.work``, ``.clangd``, ``.clang-tidy``,
  ``.eslintrc*``, ``.shellcheckrc``.

Prose (:func:`is_prose`: ``.md``, ``.rst``, ``.txt`` other than
requirements) is never read.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["CODE_EXTENSIONS", "AnalyzerInput", "analyzer_input", "is_prose", "never_read"]

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
#: resolution (path files, compiled modules), notebooks, and every source
#: suffix (another language's; a ``.PY``, no module the scan reads).
_READ_SUFFIXES = (
    frozenset({".toml", ".json", ".jsonc", ".pth", ".so", ".pyd", ".dylib", ".ipynb"})
    | CODE_EXTENSIONS
)

#: Files read by their name.
_READ_NAMES = frozenset(
    {"py.typed", "pyvenv.cfg", "go.mod", "go.sum", "go.work", ".clangd", ".clang-tidy",
     ".shellcheckrc"}
)  # fmt: skip

#: Names read by how they start (manifests, eslint's settings).
_READ_PREFIXES = ("requirements", "constraints", ".eslintrc")

#: Folders whose every file is an environment's.
_ENVIRONMENTS = frozenset({"site-packages", "dist-packages"})


#: The endings of prose files: notes, a changelog, a readme.
_PROSE = (".md", ".rst", ".txt")


def is_prose(path: str) -> bool:
    """``path`` is prose (a ``.md``, ``.rst`` or ``.txt`` file other than a
    requirements or constraints file): no module, setting or manifest, it
    changes how nothing is imported or analysed."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.endswith(_PROSE) and not name.startswith(("requirements", "constraints"))


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def analyzer_input(path: str) -> AnalyzerInput:
    """What the changed ``path`` is to the analyzers: ``"module"`` (the
    import scan follows it), ``"read"`` (a setting, an environment's file,
    another language's: the reach is not known) or ``"unread"`` (no change
    to their answers)."""
    *folders, name = path.split("/")
    if name.endswith((".py", ".pyi")):
        return "module"
    if any(f in _ENVIRONMENTS for f in folders):
        return "read"  # an install: import resolution reads the environment's tree
    if is_prose(path):
        return "unread"
    lower = name.lower()
    if (
        lower in _READ_NAMES
        or lower.startswith(_READ_PREFIXES)
        or _suffix(name) in _READ_SUFFIXES
        or (not _suffix(name) and name.isidentifier())  # may be a package's folder
    ):
        return "read"
    return "unread"


def never_read(path: str) -> bool:
    """No analyzer reads ``path`` (prose, a backup, a log, data): its change
    reaches nothing."""
    return analyzer_input(path) == "unread"
