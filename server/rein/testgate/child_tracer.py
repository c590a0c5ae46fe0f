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
starts recording (not while a test it runs untraced runs), so only its
children see them. Then the child:

* sets a call tracer (``sys.settrace``, ``threading.settrace``, and a
  thread ``_thread`` starts directly) and, on the workspace's own
  functions (by their path, or through a link), a line tracer with the
  plugin's bounds (called past them: its lines marked not all known);
* marks itself opaque where it escapes its tracer, whatever frame makes
  the call (its script is the test's code): a child that may run the
  workspace's code and is not Python (a Python child of its own is
  expected to leave a record too), a fork, another tracer set (even one
  set back later, or in a thread), an ``exec`` (the record is written
  first and the next image writes none; one the hook missed is told by
  the next image, which finds its own pid in ``REIN_TESTS_CHILD_PID``);
  and notes each read of a workspace ``.py`` file's text;
* at its exit (``atexit``, the first handler registered, so the last to
  run) writes ``<folder>/<pid>.json``: when it started (the monotonic
  clock) and its parent's pid (a record older than the child's start, or
  another parent's, is another process's with the same pid), the rows
  ``[file, first line, lines]`` of the workspace's functions it ran, the
  workspace's modules it imported, the files it read, why it is opaque
  (or null), and the Python children it started. It stays traced: the
  workspace's code running after that (a ``__del__`` or a generator's
  ``finally`` at shutdown, a daemon thread) removes the record.

The plugin reads a child's record at its test's end, once the child has
ended (``/proc``: gone or a zombie). A child that leaves no record
(killed, ``os._exit``, still running when its test ends, started with
``-I``, ``-E`` or ``-S``, or with an environment without the variables),
or whose record says it escaped, leaves its test opaque.

Any other ``sitecustomize`` (the system's, a project's) is imported next
from the rest of ``sys.path``, as if this one were not there (once, if
the folder is on the path twice).

What recording changes in a child: it imports ``subprocess``,
``threading`` and ``linecache`` at its start (a bare child took 15 ms, 45 ms recording), it has
a tracer set, ``open`` is wrapped, and its workspace functions run
traced. A project test that asserts a child's bare start (no tracer,
few modules) may fail in a recording run only; it then fails in the
baseline too and is reported, never blocking.
"""

from __future__ import annotations

__all__ = ["SITE_MODULE", "SITE_SOURCE"]

SITE_MODULE = "sitecustomize"

SITE_SOURCE = '''"""Written by Rein's tests gate: a Python child of a recorded test
records what it ran; then the sitecustomize this one hides runs."""
import os
import sys


def _record(folder, root):
    import _thread
    import atexit
    import io
    import linecache
    import threading
    import time

    started = time.monotonic()
    me, parent = os.getpid(), os.getppid()
    path = os.path.join(folder, "%d.json" % me)
    # Kept here: at shutdown this module's globals may be gone already.
    remove, replace, real_open = os.remove, os.replace, io.open
    abspath, realpath, fspath, path_like = os.path.abspath, os.path.realpath, os.fspath, os.PathLike
    base = root.rstrip(os.sep) + os.sep
    real_base = os.path.realpath(root).rstrip(os.sep) + os.sep
    partial = -1
    max_here, max_lines = 200, 100000
    relative_of, mine_of, lines, calls = {}, {}, {}, {}
    opaque, reads, children = [], set(), []
    # False while running; True once the record is written (workspace code
    # running after it, a __del__ or a generator's finally at shutdown,
    # takes it back); None once taken back.
    written = [False]

    def escaped(why):
        if not opaque:
            opaque.append(why)

    if os.environ.get("REIN_TESTS_CHILD_PID") == str(me):
        escaped("it execs another program")  # this image replaced the first
    os.environ["REIN_TESTS_CHILD_PID"] = str(me)

    def relative(name):
        """The workspace file ``name`` is (by its path or through a link),
        relative to the workspace; None for another's."""
        rel = relative_of.get(name, False)
        if rel is False:
            rel = None
            if name.startswith(base):
                rel = name[len(base):]
            elif not name.startswith("<"):
                real = realpath(name)
                if real.startswith(real_base):
                    rel = real[len(real_base):]
            if rel is not None and "site-packages" in rel:
                rel = None
            relative_of[name] = rel
        return rel

    def late():
        if written[0] is True:
            written[0] = None
            try:
                remove(path)
            except OSError:
                pass

    def trace(frame, event, arg):
        code = frame.f_code
        if code.co_name == "<module>":
            return None
        state = mine_of.get(code)
        if state is None:
            state = mine_of[code] = relative(code.co_filename) is not None
        if not state:
            return None
        if written[0] is not False:
            late()
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
            if written[0] is not False:
                late()
            elif event == "line":
                note(frame.f_lineno)
                seen[0] += 1
                if seen[0] > max_lines:
                    note(partial)
                    frame.f_trace_lines = False
            return by_line

        return by_line

    # All this process does is the test's (its script, from -c or standard
    # input, is the test's code): a child, a fork, a read, whoever makes it.
    def child(frame):
        escaped("it starts a child process")

    def python_child(pid, since, frame):
        children.append([pid, since])

    def read(name):
        try:
            name = abspath(fspath(name))
        except (TypeError, ValueError):
            return
        if isinstance(name, str) and name.endswith(".py"):
            rel = relative(name)
            if rel is not None:
                reads.add(base + rel)

    import rein_testgate_children

    rein_testgate_children.install(root, child, python_child)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lambda: child(None))
    real_lines = linecache.getlines

    def getlines(filename, module_globals=None):
        read(filename)
        return real_lines(filename, module_globals)

    def opened(file, *args, **kwargs):
        if isinstance(file, (str, path_like)):
            read(file)
        return real_open(file, *args, **kwargs)

    linecache.getlines = getlines
    import builtins

    builtins.open = io.open = opened
    # Another tracer, even one set back later, or in a thread: what ran
    # meanwhile is not known.
    real_settrace, real_thread_settrace = sys.settrace, threading.settrace

    def settrace(function):
        if function is not trace:
            escaped("its Python child's tracer was replaced")
        return real_settrace(function)

    def thread_settrace(function):
        if function is not trace:
            escaped("its Python child's tracer was replaced")
        return real_thread_settrace(function)

    sys.settrace, threading.settrace = settrace, thread_settrace
    # A thread started without threading's: traced too.
    for name in ("start_new_thread", "start_new", "start_joinable_thread"):
        real_start = getattr(_thread, name, None)
        if real_start is not None:

            def start(function, *args, _real=real_start, **kwargs):
                def traced(*inner, **named):
                    real_settrace(trace)
                    return function(*inner, **named)

                return _real(traced, *args, **kwargs)

            setattr(_thread, name, start)
    # An exec: this image's record says so, and the next image writes none.
    real_execve = os.execve

    def execve(program, args, env):
        escaped("it execs another program")
        write()
        mark = ("REIN_TESTS_CHILDREN", b"REIN_TESTS_CHILDREN")
        return real_execve(program, args, {k: v for k, v in env.items() if k not in mark})

    os.execve = execve
    os.execv = lambda program, args: execve(program, args, os.environ)

    def write():
        if written[0] is not False:
            return
        if sys.gettrace() is not trace:
            escaped("its Python child's tracer was replaced")
        rows = []
        for code, ran in list(lines.items()):
            rows.append([relative(code.co_filename), code.co_firstlineno, sorted(ran)])
        files = set()
        for module in list(sys.modules.values()):
            name = getattr(module, "__file__", None) or ""
            rel = relative(name) if name.endswith(".py") else None
            if rel is not None:
                files.add(rel)
        record = {
            "started": started,
            "parent": parent,
            "rows": rows,
            "files": sorted(files),
            "reads": sorted(reads),
            "opaque": opaque[0] if opaque else None,
            "children": children,
        }
        try:
            import json

            with real_open(path + ".part", "w", encoding="utf-8") as out:
                json.dump(record, out)
            replace(path + ".part", path)
        except Exception:  # no record: the test is opaque
            return
        # Still traced: what runs after this (module teardown, a daemon
        # thread) takes the record back.
        written[0] = True

    atexit.register(write)
    real_settrace(trace)
    real_thread_settrace(trace)


def _next():
    """The sitecustomize this one hides, from the rest of sys.path (once:
    the folder may be on the path twice, by a link)."""
    import importlib._bootstrap
    import importlib.machinery

    if getattr(sys, "_rein_sitecustomize", False):
        return
    sys._rein_sitecustomize = True
    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    rest = [p for p in sys.path if os.path.realpath(os.path.abspath(p or os.curdir)) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib._bootstrap.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_folder = os.environ.get("REIN_TESTS_CHILDREN")
_root = os.environ.get("REIN_TESTS_CHILD_ROOT")
if _folder and _root and os.path.isdir(_folder):
    _record(_folder, _root)
_next()
'''
