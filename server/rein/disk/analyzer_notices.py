"""What an analyzer server says of itself, as the pool's client hears it:
work-done progress (``window/workDoneProgress/create``, ``$/progress``) and
pyright's own progress notifications, its dynamic registrations
(:class:`Registrations`), its messages (logged), and one
message that changes what the pool may wait for: pyright's (and
basedpyright's) "Error performing analysis", after which the server checks
nothing more until its program changes (see
:meth:`~rein.disk.analyzer_server._Analyzer.analysis_stopped`; how often it
is resumed: :class:`StoppedAnalysis`). The server is known here only as a
:class:`NoticeListener`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from rein.disk.watch_globs import Watcher, watchers_of

__all__ = [
    "ANALYSIS_STOPPED",
    "CLANGD_FILE_STATUS",
    "RESUMES_WITHOUT_PUBLISH",
    "NoticeListener",
    "Registrations",
    "StoppedAnalysis",
    "analysis_stopped",
    "listen",
]

log = logging.getLogger(__name__)

#: The progress key of pyright's own notifications (one bar at a time).
PYRIGHT_PROGRESS = "pyright"
#: clangd's notice of what it does with a file (initializationOptions
#: ``clangdFileStatus``): ``{"uri", "state"}``, state "idle" when done.
CLANGD_FILE_STATUS = "textDocument/clangd.fileStatus"
#: Servers' own notifications, of no use (not warned about as unknown).
_QUIET = ("$/typescriptVersion", "eslint/status")
#: How pyright's analysis loop says an exception ended it (its
#: ``analyzeProgram``): no more analysis, no more publishes, until the
#: program changes (a file opened since is never checked).
ANALYSIS_STOPPED = "Error performing analysis"
#: How often a stopped analysis is resumed with nothing published in
#: between before its open files are left stale (it stops again on the
#: same error).
RESUMES_WITHOUT_PUBLISH = 2


class Registrations:
    """The server's dynamic registrations (``client/registerCapability``),
    by id. pyright registers its file watching again whenever its settings
    change, the new registration first and the old one's unregistration
    after: a flag set by the one and cleared by the other said "watches
    nothing" from the second settings change on (deleted files were then
    never told, and an install restarted the server)."""

    def __init__(self) -> None:
        self._methods: dict[str, str] = {}
        #: The file watchers of each didChangeWatchedFiles registration.
        self._watchers: dict[str, list[Watcher]] = {}

    def register(self, params: lsp.RegistrationParams) -> None:
        for registration in params.registrations:
            self._methods[registration.id] = registration.method
            if registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                self._watchers[registration.id] = watchers_of(registration.register_options)

    def unregister(self, params: lsp.UnregistrationParams) -> None:
        for registration in params.unregisterations:
            self._methods.pop(registration.id, None)
            self._watchers.pop(registration.id, None)

    def watches(self, root: Path, path: str, kind: lsp.FileChangeType) -> bool:
        """Some standing watcher wants ``path`` (under ``root``) changing so."""
        return any(w.wants(root, path, kind) for ws in self._watchers.values() for w in ws)

    def has(self, method: str) -> bool:
        """Some registration of ``method`` stands."""
        return method in self._methods.values()

    def clear(self) -> None:
        self._methods.clear()
        self._watchers.clear()


class StoppedAnalysis:
    """The stops a server said (:func:`analysis_stopped`) and how often its
    analysis was resumed since it last published."""

    def __init__(self) -> None:
        self.resumed = 0
        #: The stop it said last, until it works again (said twice: a
        #: window/showMessage and a window/logMessage).
        self._said: str | None = None

    def stopped(self, message: str) -> bool | None:
        """The server said ``message``: None when it said so already (the
        same stop), True when it is to be resumed, False when it was resumed
        :data:`RESUMES_WITHOUT_PUBLISH` times with nothing published since
        (what it owes is stale)."""
        if message == self._said:
            return None
        self._said = message
        if self.resumed >= RESUMES_WITHOUT_PUBLISH:
            return False
        self.resumed += 1
        return True

    def working(self) -> None:
        """It began a progress: a stop said again is a new one."""
        self._said = None

    def published(self) -> None:
        """It published: it analyses again."""
        self.resumed = 0
        self._said = None


class NoticeListener(Protocol):
    """What the notices are reported to (the analyzer)."""

    registrations: Registrations

    def registrations_changed(self) -> None: ...
    def progress_begin(self, token: str) -> None: ...
    def progress_end(self, token: str) -> None: ...
    def note_activity(self) -> None: ...
    def analysis_stopped(self, message: str) -> None: ...
    def file_status(self, uri: str, state: str) -> None: ...


def _fields(params: Any) -> dict[str, Any]:
    """An unknown notification's params: pygls gives a namedtuple (JSON
    objects structured as such), a test may give the JSON."""
    if isinstance(params, dict):
        return params
    try:
        fields = params._asdict()
    except AttributeError:
        return {}
    return fields if isinstance(fields, dict) else {}


def analysis_stopped(message: str) -> bool:
    """``message`` says the server's analysis stopped on an internal error."""
    return message.startswith(ANALYSIS_STOPPED)


def listen(client: LanguageClient, listener: NoticeListener, name: str) -> None:
    """Register ``client``'s handlers of the server's notices for ``listener``
    (``name``: the server's, in the log)."""

    @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def on_progress_create(params: Any) -> None:
        # Open from here: its begin follows our answer, and publishes
        # made before that must not look like the end of the work.
        listener.progress_begin(f"token:{getattr(params, 'token', '')}")

    @client.feature(lsp.PROGRESS)
    def on_progress(params: Any) -> None:
        token = str(getattr(params, "token", ""))
        value = getattr(params, "value", None)
        kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
        if kind == "begin":
            listener.progress_begin(f"token:{token}")
        elif kind == "end":
            listener.progress_end(f"token:{token}")
        else:
            listener.note_activity()

    @client.feature("pyright/beginProgress")
    def on_pyright_begin(params: Any) -> None:
        listener.progress_begin(PYRIGHT_PROGRESS)

    @client.feature("pyright/reportProgress")
    def on_pyright_report(params: Any) -> None:
        listener.note_activity()

    @client.feature("pyright/endProgress")
    def on_pyright_end(params: Any) -> None:
        listener.progress_end(PYRIGHT_PROGRESS)

    @client.feature(CLANGD_FILE_STATUS)
    def on_clangd_file_status(params: Any) -> None:
        # clangd (asked with clangdFileStatus) says what it does with each
        # file (the listener's file_status keys it by workspace path).
        fields = _fields(params)
        uri, state = fields.get("uri"), fields.get("state")
        if isinstance(uri, str) and isinstance(state, str):
            listener.file_status(uri, state)

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: lsp.RegistrationParams) -> None:
        listener.registrations.register(params)
        listener.registrations_changed()

    @client.feature(lsp.CLIENT_UNREGISTER_CAPABILITY)
    def on_unregister(params: lsp.UnregistrationParams) -> None:
        listener.registrations.unregister(params)
        listener.registrations_changed()

    @client.feature(lsp.WINDOW_SHOW_MESSAGE)
    @client.feature(lsp.WINDOW_LOG_MESSAGE)
    def on_message(params: lsp.ShowMessageParams | lsp.LogMessageParams) -> None:
        log.debug("%s: %s", name, params.message)
        if analysis_stopped(params.message):
            listener.analysis_stopped(params.message)

    for method in _QUIET:
        client.feature(method)(lambda params: None)
