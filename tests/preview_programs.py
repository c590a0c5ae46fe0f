"""Small real programs for the preview tests (written into a copy of
tests/workspaces/previewapp), shared by the headless and the LSP tests."""

from __future__ import annotations

__all__ = ["DEVSERVER", "WRITER"]

#: Like a dev server with --reload: it loads app.py (which prints the
#: threshold and "ready", or raises on a negative one: the traceback is
#: printed and the program waits for the next change), polls the mtimes of
#: the .py files and re-executes itself (same pid) when one changes.
DEVSERVER = """\
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def stamps():
    return {p.name: p.stat().st_mtime_ns for p in HERE.glob("*.py")}


seen = stamps()
try:
    import app

    app.load()
except Exception:
    traceback.print_exc()
while True:
    time.sleep(0.02)
    if stamps() != seen:
        print("change detected, reloading", flush=True)
        os.execv(sys.executable, [sys.executable, *sys.argv])
"""


#: Logs through a FileHandler (app.log, held open) and rewrites out/data.json
#: (opened and closed each time) every 20 ms.
WRITER = """\
import json
import logging
import os
import time

os.makedirs("out", exist_ok=True)
logging.basicConfig(filename="app.log", level=logging.INFO)
n = 0
print("ready", flush=True)
while True:
    n += 1
    logging.info("tick %d", n)
    with open("out/data.json", "w") as handle:
        json.dump({"tick": n}, handle)
    time.sleep(0.02)
"""
