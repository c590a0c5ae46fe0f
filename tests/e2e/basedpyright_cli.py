"""What the command-line basedpyright reports for a folder: the truth the
e2e tests hold the analyzer pool's basedpyright diagnostics against."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from rein.disk.analyzer_specs import find_executable


def basedpyright_cli(root: Path) -> list[tuple[str, int, int, str]]:
    """What the command-line basedpyright reports for ``root``: errors as
    (path, line, character, rule), sorted."""
    exe = find_executable("basedpyright")
    assert exe is not None
    out = subprocess.run(
        [exe, "--outputjson"], cwd=root, capture_output=True, text=True, timeout=120
    )
    report = json.loads(out.stdout)
    return sorted(
        (
            Path(d["file"]).resolve().relative_to(root.resolve()).as_posix(),
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d.get("rule", ""),
        )
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    )
