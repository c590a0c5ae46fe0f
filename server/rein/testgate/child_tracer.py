"""What a Python child of a recorded test runs first: the text of a
``sitecustomize`` module the recording plugin's folder holds (it is on
the run's ``PYTHONPATH``, so a Python the test starts imports it at
startup), plain Python for any interpreter from 3.8, standard library and
``rein_testgate_children`` only.

A test that starts a child used to be *opaque* (run at every verdict
selecting its file): the child's code ran outside the record. click's
``test_light_imports`` starts ``sys.executable -`` and ran at each of
click's verdicts. Now a child that is a Python interpreter itself
(:func:`rein.testgate.children.starts_python`) records what it ran, and
its test is judged by its record and the child's together.

The module does nothing unless the recording plugin asked for it: the
plugin sets ``REIN_TESTS_CHILDREN`` (a folder) and
``REIN_TESTS_CHILD_ROOT`` (the workspace) in its own environment when it
starts recording, so only its children see them. Then the child:

* sets a call tracer (``sys.settrace``, ``threading.settrace``) and, on
  the workspace's own functions, a line tracer with the plugin's bounds (a
  hot function or loop: its lines marked not all known);
* hooks where it escapes its tracer as the plugin does, whatever frame
  makes the call (its script is the test's code): a child that may
  run the workspace's code (a Python child of its own is expected to
  leave a record too), a fork, a read of a workspace ``.py`` file's text;
* at its exit (``atexit``, the first handler registered, so the last to
  run) writes ``<folder>/<pid>.json``: when it started (the monotonic
  clock; a record older than its start is another process's with the
  same pid), the rows ``[file, first line, lines]`` of the workspace's
  functions it ran, the workspace's modules it imported, the files it
  read, why it is opaque (or null), and the Python children it started.

A child that leaves no record (killed, ``os._exit``, an ``exec``, still
running when its test ends, started with ``-I``, ``-E`` or ``-S``, or
with an environment without the variables), or whose tracer something
else replaced, leaves its test opaque. So does a fork of it
(multiprocessing's) and any child of it that is not on
:mod:`rein.testgate.children`'s allow-list and not Python.

Any other ``sitecustomize`` (the system's, a project's) is imported next
from the rest of ``sys.path``, as if this one were not there.
"""

from __future__ import annotations

__all__ = ["SITE_MODULE", "SITE_SOURCE"]

SITE_MODULE = "sitecustomize"

SITE_SOURCE = '''"""Written by Rein's tests gate: a Python child of a recorded test
records what it ran; then the sitecustomize this one hides runs."""
import os
import sys


def _record(folder, root):
    import atexit
    import io
    import json
    import linecache
    import threading
    import time

    started = time.monotonic()
    base = root.rstrip(os.sep) + os.sep
    partial = -1
    max_here, max_lines = 200, 100000
    mine_of, lines, calls = {}, {}, {}
    opaque, reads, children = [], set(), []

    def mine(name):
        return name.startswith(base) and "site-packages" not in name

    def trace(frame, event, arg):
        code = frame.f_code
        if code.co_name == "<module>":
            return None
        state = mine_of.get(code)
        if state is None:
            state = mine_of[code] = mine(code.co_filename)
        if state is not True:
            return None
        count = calls[code] = calls.get(code, 0) + 1
        ran = lines.get(code)
        if ran is None:
            ran = lines[code] = set()
        elif partial in ran:
            return None
        if count > max_here:
            # Called this often: its lines not all known (as the plugin's).
            ran.add(partial)
            return None
        note = ran.add
        note(frame.f_lineno)
        seen = [0]

        def by_line(frame, event, arg):
            if event == "line":
                note(frame.f_lineno)
                seen[0] += 1
                if seen[0] > max_lines:
                    note(partial)
                    frame.f_trace_lines = False
            return by_line

        return by_line

    # All this process does is the test's (its script, from -c or standard
    # input, is the test's code): a child, a fork, a read, whoever makes it.
    def escaped(why):
        if not opaque:
            opaque.append(why)

    def child(frame):
        escaped("it starts a child process")

    def python_child(pid, since, frame):
        children.append([pid, since])

    def read(path):
        try:
            name = os.path.abspath(os.fspath(path))
        except (TypeError, ValueError):
            return
        if isinstance(name, str) and name.endswith(".py") and mine(name):
            reads.add(name)

    import rein_testgate_children

    rein_testgate_children.install(root, child, python_child)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lambda: child(None))
    real_lines, real_open = linecache.getlines, io.open

    def getlines(filename, module_globals=None):
        read(filename)
        return real_lines(filename, module_globals)

    def opened(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)):
            read(file)
        return real_open(file, *args, **kwargs)

    linecache.getlines = getlines
    import builtins

    builtins.open = io.open = opened

    def write():
        replaced = sys.gettrace() is not trace
        sys.settrace(None)
        threading.settrace(None)
        if replaced:
            escaped("its Python child's tracer was replaced")
        rows = []
        for code, ran in list(lines.items()):
            rows.append([code.co_filename[len(base):], code.co_firstlineno, sorted(ran)])
        files = set()
        for module in list(sys.modules.values()):
            name = getattr(module, "__file__", None) or ""
            if name.endswith(".py") and mine(name):
                files.add(name[len(base):])
        record = {
            "started": started,
            "rows": rows,
            "files": sorted(files),
            "reads": sorted(reads),
            "opaque": opaque[0] if opaque else None,
            "children": children,
        }
        path = os.path.join(folder, "%d.json" % os.getpid())
        with real_open(path + ".part", "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(path + ".part", path)

    atexit.register(write)
    sys.settrace(trace)
    threading.settrace(trace)


def _next():
    """The sitecustomize this one hides, from the rest of sys.path."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_folder = os.environ.get("REIN_TESTS_CHILDREN")
_root = os.environ.get("REIN_TESTS_CHILD_ROOT")
if _folder and _root and os.path.isdir(_folder):
    _record(_folder, _root)
_next()
'''
