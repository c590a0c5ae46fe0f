"""The probe of a warm pytest's plugin process
(:mod:`rein.testgate.warm_plugins`), the part of its script
``_rein_plugins.py`` that says whether a plugin import may be kept.

A plugin process first imports the plugins in a fork of its own, the
probe, which stops, before it happens, any effect outside the process (a
file written but compiled modules, a folder made, a process started, a
connection...), a project file opened, a project path looked at (a stat,
``os.path.exists``, a listing, a glob: Python's functions; not a C
extension's own calls) and a thread started; the import itself then must
not have read ``sys.argv`` (the recorded run's; it is each run's) nor left
a thread. The probe dies with its plugin process (``PR_SET_PDEATHSIG``)
and is killed after :data:`PROBE_LIMIT` seconds."""

from __future__ import annotations

__all__ = ["PROBE_SOURCE"]

PROBE_SOURCE = r"""

# -- the probe (rein.testgate.warm_probe) ------------------------------------


def _threads():
    # The process's threads, the interpreter's and any other (Linux).
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


def _pdeathsig(parent):
    # This fork ends with its parent (False: it has already ended).
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0 and os.getppid() == parent


def _said(read, pid):
    # The probe's answer, or its end (killed after PROBE_LIMIT).
    try:
        probe = os.pidfd_open(pid)
    except ProcessLookupError:  # ended and reaped: its answer is in the pipe
        probe = None
    try:
        ready, _, _ = select.select([read], [], [], PROBE_LIMIT)
        if not ready:
            if probe is not None:
                signal.pidfd_send_signal(probe, signal.SIGKILL)
            return "the import's probe took over %d s" % PROBE_LIMIT
        return os.read(read, 400).decode("utf-8", "replace")
    finally:
        os.close(read)
        if probe is not None:
            os.close(probe)


#: Where a lookup of the import system's own is made (a project folder's
#: listing for a module, its distributions' metadata), or this module's
#: (its checks): the names asked for and the metadata are compared at each run.
_IMPORTING = (
    "<frozen importlib.", "<frozen zipimport>", os.path.dirname(importlib.metadata.__file__), __file__
)


def _probe(stopped, project, looked, base):
    # In the probe: stop every effect, project file opened or project path
    # looked at (stat, listing, glob: Python's own functions), thread started.
    def stop(why):
        stopped.append(why)
        raise PermissionError(why)  # before it happens

    def audit(event, args):
        why = _effect(event, args, project, base)
        if why is None and event in ("os.listdir", "os.scandir", "glob.glob", "glob.glob/2"):
            where = sys._getframe(1).f_code.co_filename
            if not where.startswith(_IMPORTING):
                why = _looked(args[0] if args else ".", looked, base)
        if why is not None:
            stop(why)

    def watched(function):
        def looks(path, *args, **kwargs):
            where = sys._getframe(1).f_code.co_filename
            if not where.startswith(_IMPORTING):
                why = _looked(path, looked, base)
                if why is not None:
                    stop(why)
            return function(path, *args, **kwargs)

        return looks

    for name in ("stat", "lstat", "access", "readlink", "statvfs", "pathconf"):
        setattr(os, name, watched(getattr(os, name)))

    def no_thread(*args, **kwargs):
        stop("a plugin's import started a thread")

    import _thread

    _thread.start_new_thread = threading._start_new_thread = no_thread
    sys.addaudithook(audit)


def _looked(path, looked, base):
    # Why looking at ``path`` (a stat, a listing) is a project path's look, or None.
    if isinstance(path, int):
        return "a plugin's import looked at a folder by its descriptor"
    path = os.path.abspath(os.fsdecode(path if path not in (None, b"", "") else "."))
    if any(path == folder for folder in looked) or _in_project(path, looked, base):
        if not any(part.endswith((".dist-info", ".egg-info")) for part in path.split(os.sep)):
            return "a plugin's import looked at a project path (%s)" % os.path.basename(path)
    return None


def _under(path, folders):
    return any(folder and path.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def _in_project(path, project, base):
    # In a project folder and not in one of the interpreter's (a venv inside the project).
    return _under(path, project) and not _under(path, base)


#: What an import may not do here: its effect would be the plugin
#: process's, once, not each run's (a file written, a process started...).
_EFFECTS = (
    "os.mkdir", "os.remove", "os.rename", "os.rmdir", "os.symlink", "os.link",
    "os.truncate", "os.chmod", "os.chown", "os.utime", "os.chdir", "os.putenv",
    "os.unsetenv", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
    "os.fork", "os.kill", "os.killpg", "subprocess.Popen", "socket.connect",
    "socket.bind", "socket.sendto", "shutil.rmtree", "shutil.move",
    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
    "tempfile.mkstemp", "tempfile.mkdtemp", "sqlite3.connect", "signal.signal",
)
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _cached(path):
    # A module's compiled file (the import's own, as a run's writes it).
    path = os.fsdecode(path)
    prefix = sys.pycache_prefix
    return "__pycache__" in path.split(os.sep) or bool(prefix and path.startswith(prefix))


def _effect(event, args, project, base):
    # Why this audit event of the import makes it not the runs' to share, or None.
    if event == "open" and args and not isinstance(args[0], int):
        path, mode, flags = args[0], args[1] or "", args[2] if len(args) > 2 else 0
        writes = any(c in str(mode) for c in "wax+") or (flags or 0) & _WRITES
        if writes and not _cached(path):
            return "a plugin's import writes a file (%s)" % os.path.basename(os.fsdecode(path))
        path = os.path.abspath(os.fsdecode(path))
        if _in_project(path, project, base) and not any(
            part.endswith((".dist-info", ".egg-info")) for part in path.split(os.sep)
        ):
            return "a plugin's import opened a project file (%s)" % os.path.basename(path)
    elif event.startswith(_EFFECTS) and not (args and _cached(str(args[0]))):
        return "a plugin's import did %s" % event
    return None


class _Watched:
    # ``sys.argv`` at the import: the recorded run's; any use is noted.
    def __init__(self, items, touched):
        object.__setattr__(self, "_items", list(items))
        object.__setattr__(self, "_touched", touched)

    def __getattribute__(self, name):
        object.__getattribute__(self, "_touched").append(name)
        return getattr(object.__getattribute__(self, "_items"), name)


def _watch(name):
    def used(self, *args):
        object.__getattribute__(self, "_touched").append(name)
        return getattr(object.__getattribute__(self, "_items"), name)(*args)

    return used


for _name in (
    "__len__", "__getitem__", "__iter__", "__contains__", "__reversed__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__repr__", "__str__",
    "__bool__", "__format__", "__setitem__", "__delitem__", "__iadd__",
):
    setattr(_Watched, _name, _watch(_name))
_Watched.__hash__ = None
"""
