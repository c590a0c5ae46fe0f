"""Real projects, one per language, for the analyzer gate's end-to-end tests
with real language servers (tests/e2e/test_language_gates.py) and the
languages of ``rein bench gates --corpus`` (:mod:`rein.bench.gates_languages`).

Each comes from npm, PyPI or a Debian package the test install puts on the
machine (scripts/install-language-servers.sh), never from GitHub or the Go
module proxy; a download is made once into the cache
(``$REIN_TEST_CACHE``, default ``platformdirs.user_cache_dir("rein")/language-projects``)
and each test copies the project into its own folder:

- TypeScript: the npm package ``await-semaphore`` 0.1.3, which ships its
  ``.ts`` sources and ``tsconfig.json``; its ``test.ts`` has pre-existing
  errors (mocha's and node's types are not installed).
- Go: ``gotype`` and ``generate_cert``, two standard-library-only programs
  of Go's own sources (Debian's golang-1.19-src, under ``go env GOROOT``),
  each as a ``main`` package of a module with a ``go.mod``; gotype has a
  pre-existing vet finding (a redundant newline).
- C: the PyPI source distribution of ``mmh3`` 5.1.0 (MurmurHash3 and its
  Python binding), with a ``compile_commands.json`` this module writes (the
  project builds with setuptools and has none).
- Shell: the ``*.bash`` scripts of Go's sources (make.bash, run.bash ...),
  with many pre-existing shellcheck warnings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from rein.bench.corpus import download_sdist

__all__ = ["c_project", "go_project", "project_cache", "shell_project", "typescript_project"]

TYPESCRIPT_PACKAGE = ("await-semaphore", "0.1.3")
C_SDIST = ("mmh3", "5.1.0")
#: Go's own standard-library-only programs, copied as module/cmd/<name>/main.go.
GO_PROGRAMS = {
    "gotype": "go/types/gotype.go",
    "generate_cert": "crypto/tls/generate_cert.go",
    "dump": "encoding/gob/dump.go",
}
SHELL_SCRIPTS = (
    "all.bash",
    "bootstrap.bash",
    "buildall.bash",
    "clean.bash",
    "make.bash",
    "run.bash",
)


def project_cache() -> Path:
    env = os.environ.get("REIN_TEST_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rein")) / "language-projects"


def _cached(name: str, download: Callable[[Path], Path]) -> Path:
    """``cache/name``, made once by ``download(tmp)`` (which returns the
    project's folder inside ``tmp``); a half-done download leaves no stamp."""
    cache = project_cache()
    target = cache / name
    if (target / ".rein-complete").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
        root = download(Path(tmp))
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(root), str(target))
    (target / ".rein-complete").write_text(name + "\n")
    return target


def _copy(source: Path, into: Path) -> Path:
    shutil.copytree(source, into, ignore=shutil.ignore_patterns(".rein-complete"))
    return into


def _unpack_single(archive: Path, into: Path) -> Path:
    into.mkdir()
    with tarfile.open(archive) as tf:
        tf.extractall(into, filter="data")
    (entry,) = into.iterdir()
    return entry


def typescript_project(into: Path) -> Path:
    name, version = TYPESCRIPT_PACKAGE

    def download(tmp: Path) -> Path:
        subprocess.run(
            ["npm", "pack", f"{name}@{version}", "--pack-destination", str(tmp), "--silent"],
            check=True,
            capture_output=True,
        )
        (archive,) = tmp.glob("*.tgz")
        return _unpack_single(archive, tmp / "unpacked")

    return _copy(_cached(f"{name}-{version}", download), into)


def goroot() -> Path:
    out = subprocess.run(["go", "env", "GOROOT"], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def go_project(into: Path) -> Path:
    """Made from the installed Go sources each time (nothing to download)."""
    src = goroot() / "src"
    into.mkdir(parents=True)
    (into / "go.mod").write_text("module example.com/gostd\n\ngo 1.19\n")
    for program, path in GO_PROGRAMS.items():
        lines = (src / path).read_text().splitlines(keepends=True)
        # They are generators kept out of the standard library's build.
        kept = [ln for ln in lines if ln.strip() not in ("//go:build ignore", "// +build ignore")]
        (into / "cmd" / program).mkdir(parents=True)
        (into / "cmd" / program / "main.go").write_text("".join(kept))
    return into


def shell_project(into: Path) -> Path:
    src = goroot() / "src"
    into.mkdir(parents=True)
    for script in SHELL_SCRIPTS:
        shutil.copyfile(src / script, into / script)
    return into


def c_project(into: Path) -> Path:
    """mmh3's C sources (``src/mmh3``) with a ``compile_commands.json``:
    one entry per ``.c`` file, compiled as setup.py does (C11, the folder
    and Python's headers on the include path)."""
    name, version = C_SDIST

    def download(tmp: Path) -> Path:
        return download_sdist(name, version, tmp) / "src" / "mmh3"

    root = _copy(_cached(f"{name}-{version}", download), into)
    include = sysconfig.get_paths()["include"]
    entries = [
        {
            "directory": str(root),
            "file": str(root / c.name),
            "arguments": ["cc", "-std=c11", "-Wall", "-I", str(root), "-I", include, "-c", c.name],
        }
        for c in sorted(root.glob("*.c"))
    ]
    (root / "compile_commands.json").write_text(json.dumps(entries, indent=2) + "\n")
    return root
