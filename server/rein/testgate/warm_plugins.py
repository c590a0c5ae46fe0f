"""The warm pytest's second kind of kept process: one per set of
entry-point plugins (``pytest11``), a fork of the first that has imported
them, as a run's pytest would, once (:mod:`rein.testgate.warm` says what
the first does; this script, ``_rein_plugins.py``, is written beside its
``server.py``, which imports it).

* A run the first kept process forks for a working folder and
  ``PYTHONPATH`` with no plugin process records, as its pytest loads its
  entry points, which it loads (distribution, name, value), with which
  ``sys.path``, folder and environment: a file in the kept process's
  folder (``plugins-<key>.json``), and the key on a pipe the first kept
  process reads.
* The first kept process then forks a plugin process for it: that process
  takes the run's environment, folder and ``sys.path``, and imports the
  plugins in the recorded order through an assertion-rewriting hook of
  pytest's own (rewritten as a run's would be, none reported "already
  imported"), recording every top-level name the import system was asked
  for (found or not), every environment variable read (``os.environ``) and
  every warning, with ``sys.argv`` the recorded run's, watched. A read of
  ``sys.argv``, a thread left running, a warning, a module it imported from a project folder
  (a folder on ``sys.path`` that is not the interpreter's own), or a name
  asked for that a project folder provides: no plugin process (it ends).
  Else it listens on its own socket (``z-<key>``).
* A later run for the same folder and ``PYTHONPATH`` goes to it (the first
  kept process's handler hands the client's descriptors over); its pytest,
  once it has read its ini file, ``PYTEST_ADDOPTS`` and its arguments and
  set ``sys.path`` (``_configure_python_path``), before it imports any
  plugin, checks that the plugins it would load are exactly those imported
  (the same distributions, names and values, nothing blocked by ``-p no:``,
  autoload on, no ``-p NAME`` but the gate's own), that the folder,
  ``sys.path``, the environment (but the gate's per-run ``REIN_TESTS_*``,
  unless the import read one), the interpreter's folders' times and the
  project folders' distribution metadata are the import's, that no name
  the import asked for is in a project folder now, that the files of the
  modules the import brought have their sizes and times, and that the
  assertion rewriting and the warnings capture are as at the import. Any
  difference: that child ends before doing anything else and the run is
  handed back to the first kept process (a plain fork, as without this
  module), which records again.
"""

from __future__ import annotations

from rein.testgate.warm_probe import PROBE_SOURCE

__all__ = ["PLUGINS_SOURCE"]

_SOURCE = r'''"""Written by Rein's tests gate: kept processes with a run's plugins imported."""
import ctypes
import hashlib
import importlib
import importlib.metadata
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import warnings

#: How many plugin processes the first kept process keeps at most.
MAX_KEPT = 4
#: A plugin process that handed this many runs back in a row is retired.
MAX_HANDED_BACK = 3
#: A pytest child of a plugin process writes this to its handler before it
#: ends when the run is not the plugin process's: the run goes plain.
REDO = b"P"

#: The tests gate's own plugins' names (``-p rein_testgate_report``...).
GATES = "rein_testgate_"
#: The gate's own per-run variables (``REIN_TESTS_REPORT``...).
RUNS = "REIN_TESTS_"
#: In a plugin process: what its import was (None in the first one).
KEPT = None
#: How long a plugin process's probe may take (seconds): then it is killed.
PROBE_LIMIT = 60
_PR_SET_PDEATHSIG = 1


def key(cwd, env):
    text = cwd + "\0" + env.get("PYTHONPATH", "")
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def socket_path(folder, name):
    return os.path.join(folder, "z-" + name)


def spec_path(folder, name):
    return os.path.join(folder, "plugins-" + name + ".json")


def _dist_path(dist):
    return str(getattr(dist, "_path", ""))


def _to_load(pluginmanager, blocked=()):
    # The entry points pytest's load_setuptools_entrypoints("pytest11") loads, in order.
    found = []
    for dist in list(importlib.metadata.distributions()):
        for ep in dist.entry_points:
            if ep.group != "pytest11" or pluginmanager.has_plugin(ep.name):
                continue
            if pluginmanager.is_blocked(ep.name) or ep.name in blocked:
                continue
            found.append([_dist_path(dist), ep.name, ep.value])
    return found


def _listing(folder):
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _metadata(folders):
    # The project folders' distribution metadata, as file names, sizes and times.
    seen = []
    for folder in folders:
        for entry in sorted(_listing(folder)):
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            where = os.path.join(folder, entry)
            files = sorted(_listing(where)) if os.path.isdir(where) else [""]
            for name in files:
                try:
                    st = os.stat(os.path.join(where, name))
                except OSError:
                    continue
                seen.append([where, name, st.st_size, st.st_mtime_ns])
    return seen


def _times(folders):
    found = []
    for folder in folders:
        try:
            found.append([folder, os.stat(folder).st_mtime_ns])
        except OSError:
            found.append([folder, None])
    return found


def _files(seen):
    # The modules' files (as ``seen`` names them): their sizes and times now.
    found = []
    for path, *_ in seen:
        try:
            st = os.stat(path)
        except OSError:
            found.append([path, None, None])
            continue
        found.append([path, st.st_size, st.st_mtime_ns])
    return found


def _provided(folders, names):
    # A name asked for that a project folder provides (or may: any entry of that stem).
    for folder in folders:
        for entry in _listing(folder):
            if entry.split(".")[0] in names:
                return entry
    return None


# -- in a pytest child -------------------------------------------------------


def in_run(record_to, wake, redo, base=()):
    """Before pytest starts in a fork: record the entry points it loads
    (``record_to``: the spec file, ``wake`` the pipe; ``base`` the
    interpreter's own folders), or check the run is
    this plugin process's (``redo``: the pipe to the handler)."""
    from _pytest.config import Config, PytestPluginManager

    if KEPT is not None:
        configure = Config._configure_python_path

        def checked(config):  # the run's own configuration only, not a test's pytest.main
            Config._configure_python_path = configure
            configure(config)
            why = _differs(config)
            if why is not None:
                os.write(redo, REDO + why.encode("utf-8", "replace")[:300])
                os._exit(0)
            os.close(redo)
            _marked(config)

        Config._configure_python_path = checked
        return
    if record_to is None:
        return
    load = PytestPluginManager.load_setuptools_entrypoints

    def recorded(self, group, name=None):
        if group != "pytest11" or name is not None:
            return load(self, group, name)
        PytestPluginManager.load_setuptools_entrypoints = load
        eps = _to_load(self)
        path, cwd, env = list(sys.path), os.getcwd(), dict(os.environ)
        count = load(self, group, name)
        if eps:
            times = _times([p for p in path if p in base])
            spec = {"eps": eps, "path": path, "cwd": cwd, "env": env, "times": times}
            spec["argv"] = list(sys.argv)
            _write_spec(record_to, wake, spec)
        return count

    PytestPluginManager.load_setuptools_entrypoints = recorded


def _marked(config):
    # The run's rewriting hook gets the import's marks, as if it had run it.
    from _pytest.assertion.rewrite import assertstate_key

    state = config.stash.get(assertstate_key, None)
    if state is not None and state.hook is not None:
        state.hook._must_rewrite.update(KEPT["marks"])


def _write_spec(where, wake, spec):
    try:
        with open(where + ".tmp", "w", encoding="utf-8") as out:
            json.dump(spec, out)
        os.replace(where + ".tmp", where)
        os.write(wake, os.path.basename(where).encode() + b"\n")
    except OSError:
        pass


def _bare(env):
    # An environment without the gate's per-run variables (its report's path...).
    return {name: value for name, value in env.items() if not name.startswith(RUNS)}


def _warnings_on(config):
    # As pytest's Config.parse decides whether it captures the plugins' import warnings.
    on = config.pluginmanager.hasplugin("warnings")
    for plugin in config.known_args_namespace.plugins:
        plugin = plugin.strip()
        if plugin == "no:warnings":
            on = False
        elif plugin == "warnings":
            on = True
    return on


def _differs(config):
    # Why this run is not the one this process imported the plugins for (None: it is).
    kept = KEPT
    ns = config.known_args_namespace
    if getattr(ns, "disable_plugin_autoload", False) or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return "plugin autoload is off"
    blocked = set()
    names = {ep[1] for ep in kept["eps"]}
    for plugin in (p.strip() for p in ns.plugins):
        if plugin.startswith(GATES) and plugin not in names:
            # The gate's own (its report...): imported before the entry
            # points in a cold run, after them here; they import the
            # standard library and pytest only, and read their variables.
            continue
        if not plugin.startswith("no:"):
            return "a -p plugin (imported before the entry points)"
        name = plugin[3:]
        blocked.update((name, "pytest_" + name))
        if name == "cacheprovider":
            blocked.update(("stepwise", "pytest_stepwise"))
    if not _warnings_on(config):
        return "-p no:warnings"
    if getattr(ns, "assertmode", "plain") != "rewrite":
        return "another assertion mode"
    if config.getini("python_files") != kept["python_files"]:
        return "another python_files"
    if config.getini("enable_assertion_pass_hook") != kept["pass_hook"]:
        return "another enable_assertion_pass_hook"
    if os.getcwd() != kept["cwd"] or sys.path != kept["path"]:
        return "another folder or sys.path"
    # The whole environment but the gate's own per-run variables (what an
    # extension's getenv reads too), and those the import read.
    if _bare(os.environ) != _bare(kept["env"]):
        return "another environment"
    for name, value in kept["read"].items():
        if os.environ.get(name) != value:
            return "another environment"
    if _times(kept["base"]) != kept["times"]:
        return "the interpreter's folders changed"
    if _files(kept["files"]) != kept["files"]:
        return "a module the plugins imported changed"
    if _metadata(kept["project"]) != kept["metadata"]:
        return "the project's distribution metadata changed"
    if _provided(kept["project"], kept["names"]) is not None:
        return "a project folder provides a name the plugins import"
    if _to_load(config.pluginmanager, blocked) != kept["eps"]:
        return "another set of plugins"
    return None


# -- the plugin process --------------------------------------------------------


class _Asked:
    # A finder first on sys.meta_path that finds nothing and records what it is asked for.
    def __init__(self):
        self.names = set()

    def find_spec(self, fullname, path=None, target=None):
        self.names.add(fullname.partition(".")[0])
        return None


def build(spec, base, get_config):
    """In a fork of the first kept process: import the spec's plugins as a
    run's pytest would; None and why when this process must not serve.

    The same import runs first in a fork of its own under an audit hook
    (which this process does not keep) that stops it before any effect
    outside the process (a file written but compiled modules, a folder
    made, a process started, a connection...: it would be this process's,
    once, not each run's) and before it opens a file of a project folder
    (its distribution metadata aside, compared at each run: another run
    may find it changed), looks at a project path or starts a thread
    (:mod:`rein.testgate.warm_probe`); it dies with this process and is
    killed after :data:`PROBE_LIMIT` seconds."""
    from _pytest.config import Config

    if not hasattr(Config, "_configure_python_path"):  # where a run is checked
        return "another pytest"
    os.environ.clear()
    os.environ.update(spec["env"])
    os.chdir(spec["cwd"])
    sys.path[:] = spec["path"]
    sys.dont_write_bytecode = bool(spec["env"].get("PYTHONDONTWRITEBYTECODE"))
    sys.pycache_prefix = spec["env"].get("PYTHONPYCACHEPREFIX") or None
    project = [p for p in spec["path"] if p not in base]
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            if _pdeathsig(parent):
                stopped = []
                _probe(stopped, project, [*project, spec["cwd"]], base)
                why = _import(spec, base, get_config)
                why = stopped[0] if stopped else why
                os.write(write, (why or "-").encode("utf-8", "replace")[:300])
        finally:
            os._exit(0)
    os.close(write)
    said = _said(read, pid)
    if said != "-":
        return said or "the import's probe ended"
    return _import(spec, base, get_config)


def _import(spec, base, get_config):
    global KEPT
    from _pytest.assertion import install_importhook

    project = [p for p in spec["path"] if p not in base]
    base = [p for p in spec["path"] if p in base]
    config = get_config([])
    hook = install_importhook(config)  # as a run's Config._consider_importhook
    config._mark_plugins_for_rewrite(hook, False)
    asked = _Asked()
    before = set(sys.modules)
    read = {}
    environ_class = type(os.environ)

    class Reading(environ_class):
        def __getitem__(self, name):
            read.setdefault(name, None)
            return super().__getitem__(name)

    wanted = [tuple(ep) for ep in spec["eps"]]
    threads = _threads()
    argv, orig_argv = sys.argv, sys.orig_argv
    # A cold run's arguments, and a read of them refused: they are each run's.
    touched = []
    sys.argv = _Watched(spec.get("argv", []), touched)
    sys.orig_argv = _Watched([sys.executable, "-m", "pytest", *spec.get("argv", [])[1:]], touched)
    sys.meta_path.insert(0, asked)
    os.environ.__class__ = Reading
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = []
            for dist in list(importlib.metadata.distributions()):
                for ep in dist.entry_points:
                    if ep.group == "pytest11" and (_dist_path(dist), ep.name, ep.value) in wanted:
                        ep.load()
                        loaded.append((_dist_path(dist), ep.name, ep.value))
    except Exception as exc:
        return "the plugins' import failed (%s)" % type(exc).__name__
    finally:
        os.environ.__class__ = environ_class
        sys.argv, sys.orig_argv = argv, orig_argv
        sys.meta_path[:] = [f for f in sys.meta_path if f is not asked and f is not hook]
    if touched:
        return "a plugin's import read sys.argv"
    if _threads() != threads:
        return "a plugin's import started a thread"
    if loaded != wanted:
        return "not every plugin was found"
    if caught:
        return "a plugin's import warned"
    files = []
    for name in sorted(set(sys.modules) - before):
        origin = getattr(sys.modules[name], "__file__", None) or ""
        if _in_project(origin, project, base):
            return "a plugin imported a module from a project folder (%s)" % name
        if origin:
            files.append([origin])
    if _provided(project, asked.names) is not None:
        return "a project folder provides a name the plugins import"
    for folder in project:
        sys.path_importer_cache.pop(folder, None)
    importlib.invalidate_caches()
    KEPT = {
        "eps": [list(ep) for ep in wanted],
        "path": list(spec["path"]),
        "cwd": spec["cwd"],
        "env": dict(spec["env"]),
        "read": {name: spec["env"].get(name) for name in read},
        "base": base,
        "times": _times(base),
        "project": project,
        "metadata": _metadata(project),
        "files": _files(files),
        "names": asked.names,
        "python_files": hook.fnpats,
        "pass_hook": config.getini("enable_assertion_pass_hook"),
        # What the import marked for rewriting (register_assert_rewrite too).
        "marks": sorted(hook._must_rewrite),
    }
    return None

# -- in the first kept process and its handlers ----------------------------------

#: The plugin processes (by key: a pidfd, None when it had ended) and the sets tried (built once each).
_KEPT = {}
_TRIED = set()


def _ended(pidfd):
    return pidfd is None or bool(select.select([pidfd], [], [], 0)[0])


def _end(pidfd):
    # Kill a plugin process by its pidfd: never another process that took its pid.
    if pidfd is None:
        return
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.close(pidfd)


def spawn(line, folder, wake, start):
    """A run recorded the plugins it loads (``line`` names its file): a
    plugin process for them (once per set; one per folder and PYTHONPATH,
    the last recorded), a fork that runs ``start(spec, socket)``."""
    where = os.path.join(folder, os.fsdecode(line.strip()))
    name = os.path.basename(where)[len("plugins-") : -len(".json")]
    try:
        with open(where, encoding="utf-8") as handle:
            spec = json.load(handle)
        # Once per set, folders and environment (the gate's per-run
        # variables left out: else one per run).
        tried = json.dumps(
            [spec["eps"], spec["path"], spec["cwd"], spec.get("times"), _bare(spec["env"])]
        )
    except (OSError, ValueError, KeyError, TypeError):
        return
    if tried in _TRIED:
        return
    _TRIED.add(tried)
    _end(_KEPT.pop(name, None))
    for other, pidfd in list(_KEPT.items()):  # a slot is free once its process ended (refused)
        if _ended(pidfd):
            _end(_KEPT.pop(other))
    try:
        os.unlink(socket_path(folder, name))
    except OSError:
        pass
    if len(_KEPT) >= MAX_KEPT:
        return
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            # It ends with this process, and does not hold its output (the gate waits for its end).
            if not _pdeathsig(parent):
                os._exit(0)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
            os.close(wake)
            start(spec, socket_path(folder, name))
        finally:
            os._exit(0)
    try:
        _KEPT[name] = os.pidfd_open(pid)
    except ProcessLookupError:  # it ended already (and was reaped)
        _KEPT[name] = None


def offered(request):
    """Whether a run may go to a plugin process: not when its request says
    its pytest loads no entry point or imports a ``-p`` plugin first
    (its ini file may say so too: its pytest checks)."""
    env = request["env"]
    if env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    args = [*env.get("PYTEST_ADDOPTS", "").split(), *request["args"]]
    for at, arg in enumerate(args):
        if arg == "--disable-plugin-autoload":
            return False
        if arg == "-p" or (arg.startswith("-p") and not arg.startswith("-p=")):
            name = arg[2:] or (args[at + 1] if at + 1 < len(args) else "")
            if not name.startswith(("no:", GATES)):
                return False
    return True


def handed_back(kept, why):
    """Note a run a plugin process's child handed back (``why``, in
    ``<socket>.why``); True when that process is retired (its socket
    removed: not offered again) after :data:`MAX_HANDED_BACK` in a row."""
    try:
        with open(kept + ".why", "w") as out:  # the last one's why, for whoever looks
            out.write(why)
        with open(kept + ".back", "a") as out:
            out.write("x")
        if os.path.getsize(kept + ".back") < MAX_HANDED_BACK:
            return False
        os.unlink(kept)
    except OSError:
        return False
    return True


def served(kept):
    """A plugin process served a run: the count of those handed back in a row is reset."""
    try:
        os.unlink(kept + ".back")
    except OSError:
        pass


def hand_over(path, hop, raw, fds):
    """Hand a request, the client's descriptors and its connection (last)
    to another kept process: True once it has taken them."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
            other.settimeout(10)
            other.connect(path)
            body = hop.encode() + b":" + raw
            message = struct.pack("!I", len(body)) + body
            sent = socket.send_fds(other, [message], fds)
            if sent < len(message):
                other.sendall(message[sent:])
            return other.recv(1) == b"T"
    except OSError:
        return False


def redone(fd):
    """Why a plugin process's pytest child handed its run back (``fd``:
    its pipe), None when it did not."""
    os.set_blocking(fd, False)
    try:
        said = os.read(fd, 400)
    except BlockingIOError:
        said = b""
    os.close(fd)
    if said[:1] == REDO:
        return said[1:].decode("utf-8", "replace")
    return None
'''

#: The script: the probe's part (:mod:`rein.testgate.warm_probe`) is of the same module.
PLUGINS_SOURCE = _SOURCE + PROBE_SOURCE
