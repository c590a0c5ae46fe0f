"""An analyzer whose analysis stopped on its own internal error (pyright's
"Error performing analysis"; in process, no analyzer runs): basedpyright
then checks nothing more, and on django (open-files mode) the files opened
for the next change were never published, so the wait ran its whole
900 s bound. Its settings are sent again (it then checks its open files
afresh) and what it owes stays owed; a server that stops again without
publishing anything in between is not resumed forever: what it owes is
stale and says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from lsprotocol import types as lsp

from rein.disk.analyzer_notices import RESUMES_WITHOUT_PUBLISH, analysis_stopped
from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from tests.fakes.lsp_client import RecordingLanguageClient

_STOP = (
    "Error performing analysis: TypeError: Cannot read properties of undefined "
    "(reading 'isStubFile')\n    at getTypeOfFunctionPredecorated (pyright-langserver.js:82794:22)"
)


def test_a_stopped_analysis_is_resumed_and_a_repeated_stop_leaves_the_owed_files_stale(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    client = RecordingLanguageClient()
    analyzer.client = cast(Any, client)
    analyzer.alive = True
    # a.py was just opened: its first publish is owed.
    analyzer.versions["a.py"] = 1
    analyzer.awaiting["a.py"] = 1

    assert analysis_stopped(_STOP)
    assert not analysis_stopped("An internal error occurred while type checking file x.py")
    analyzer.analysis_stopped(_STOP)
    assert client.sent == [("workspace/didChangeConfiguration", client.sent[0][1])]
    assert client.sent[0][1].settings == analyzer.settings
    assert analyzer.awaiting == {"a.py": 1} and analyzer.owed_refresh == {"a.py"}
    assert not analyzer.idle(0.0, 0.0)
    # The same stop said again (window/showMessage, then window/logMessage).
    analyzer.analysis_stopped(_STOP)
    assert len(client.sent) == 1

    # It publishes: it works again, a later stop is resumed too.
    analyzer.on_publish({"uri": (tmp_path / "a.py").as_uri(), "version": 1, "diagnostics": []})
    assert analyzer.awaiting == {}
    analyzer.versions["a.py"] = 2
    analyzer.awaiting["a.py"] = 2
    for n in range(RESUMES_WITHOUT_PUBLISH):
        analyzer.analysis_stopped(f"{_STOP} ({n})")
    assert len(client.sent) == 1 + RESUMES_WITHOUT_PUBLISH
    assert analyzer.unanswered == {}

    # Stopped again with nothing published since: not resumed, stale, and why.
    analyzer.analysis_stopped(f"{_STOP} (again)")
    assert len(client.sent) == 1 + RESUMES_WITHOUT_PUBLISH
    assert analyzer.awaiting == {}
    assert analyzer.unanswered == {
        "a.py": "basedpyright stopped analysing: Error performing analysis: TypeError: "
        "Cannot read properties of undefined (reading 'isStubFile')"
    }


def test_file_watching_stands_while_a_registration_of_it_stands(tmp_path: Path) -> None:
    # Defect: a flag set by a registration and cleared by any unregistration.
    # basedpyright registers its watching again at every settings change
    # (the resume above, an install), the new one before the old one's
    # unregistration: the pool then took it as watching nothing, never told
    # it of a deleted module (django's warm delete-module case: 1 of 30
    # lines) and restarted it at the next install.
    analyzer = _Analyzer(DEFAULT_ANALYZERS[1], "basedpyright-langserver", AnalyzerPool(tmp_path))
    watched = lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES

    def register(id_: str, method: str = watched) -> None:
        analyzer.registrations.register(
            lsp.RegistrationParams([lsp.Registration(id=id_, method=method)])
        )
        analyzer.registrations_changed()

    def unregister(id_: str, method: str = watched) -> None:
        analyzer.registrations.unregister(
            lsp.UnregistrationParams([lsp.Unregistration(id=id_, method=method)])
        )
        analyzer.registrations_changed()

    register("first")
    register("diagnostics", lsp.TEXT_DOCUMENT_DIAGNOSTIC)
    assert analyzer.watches_files
    register("second")
    unregister("first")
    assert analyzer.watches_files
    unregister("diagnostics", lsp.TEXT_DOCUMENT_DIAGNOSTIC)
    assert analyzer.watches_files
    unregister("second")
    assert not analyzer.watches_files
