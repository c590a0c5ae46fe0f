"""The first run's own flaky check: a failing test run once more at once,
in the same pytest process.

A blocked verdict used to re-run every failing test in a fresh shadow, a
pytest process of its own (0.12-0.13 s for one test on toolz, mostly the
process's start) before it could call the test broken. Now the first run
loads one more plugin, ``rein_testgate_rerun`` (written beside the report
plugin, :mod:`rein.testgate.pytest_run`; not in the re-run's or the
baseline's runs, nor in pytest-xdist's workers): a test whose setup
passed, whose call failed and whose teardown passed runs again (setup,
call, teardown) before the next test, as pytest-rerunfailures does, with
``_pytest.runner.runtestprotocol``. Its first attempt is the run's result
(the only one pytest's own reports, the terminal and JUnit see); the
report plugin marks its failing line ``"again": true`` (so the gate knows
another line follows) and the plugin adds one line when the second
attempt ends: ``{"kind": "again", "nodeid", "outcome", "same"}``.
``same``: it failed again the same way (setup and teardown passed, the
call raised the same exception type at the same file and line; a failure
with no such place, a doctest's, by its whole text): the test is
confirmed failing and no fresh re-run is needed. Anything else (it
passed, or failed another way, or its setup or teardown failed the second
time: its first attempt may have left something behind) makes it a
flaky suspect: the gate re-runs it in a fresh shadow as before
(:mod:`rein.testgate.waves`), so "flaky" still means a test that failed
once and passed on a fresh re-run.

Fixtures: each attempt's teardown is the one pytest would run before the
next test (``nextitem``): the test's function-scoped fixtures are torn
down and set up again; a wider one stays up when the next test needs it,
else it is torn down and made again for the second attempt. A test whose
setup failed (a fixture of any scope) or whose teardown failed is not run
again here: the fresh re-run judges it, as before. When pytest's internals
are not as expected (``runtestprotocol`` gone), the plugin does nothing:
every failing test gets the fresh re-run.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RERUN_PLUGIN", "write_rerun_plugin"]

#: The plugin's module name.
RERUN_PLUGIN = "rein_testgate_rerun"

_SOURCE = '''"""Written by Rein's tests gate: a failing test run again at once."""
import pytest

try:
    from _pytest.runner import runtestprotocol
except ImportError:  # another pytest: every failure gets the fresh re-run
    runtestprotocol = None

import rein_testgate_report as _report

_raised = {}


def _name(kind):
    return f"{kind.__module__}.{kind.__qualname__}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    yield
    if call.when == "call":
        _raised[item.nodeid] = None if call.excinfo is None else _name(call.excinfo.type)


def _failure(item, reports):
    """The call's failure (exception type, place) when the setup and the
    teardown passed and the call failed, else None."""
    if [r.when for r in reports] != ["setup", "call", "teardown"]:
        return None
    setup, call, teardown = reports
    if not (setup.passed and call.failed and teardown.passed):
        return None
    crash = getattr(call.longrepr, "reprcrash", None)
    if crash is not None:
        where = (str(crash.path), crash.lineno)
    else:
        where = (call.longreprtext,)
    return (_raised.get(item.nodeid),) + where


def _outcome(reports):
    for report in reports:
        if report.failed:
            return "failed" if report.when == "call" else "error"
    for report in reports:
        if report.skipped:
            return "skipped"
    return "passed"


def _timed(config):
    # pytest-timeout arms its timer once around a test's whole protocol:
    # a second call in it would run with no timer (a hang it had stopped
    # would hang the run to the gate's time limit). The fresh re-run, a
    # protocol of its own, is timed.
    return config.pluginmanager.has_plugin("timeout")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if runtestprotocol is None or _report._state["worker"] or _timed(item.config):
        return None
    hook = item.ihook
    hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = runtestprotocol(item, log=False, nextitem=nextitem)
    failure = _failure(item, reports)
    _report._state["retrying"] = item.nodeid if failure is not None else None
    try:
        for report in reports:
            hook.pytest_runtest_logreport(report=report)
    finally:
        _report._state["retrying"] = None
    if failure is not None:
        again = runtestprotocol(item, log=False, nextitem=nextitem)
        _report._emit(
            {
                "kind": "again",
                "nodeid": item.nodeid,
                "outcome": _outcome(again),
                "same": _failure(item, again) == failure,
            }
        )
    _raised.pop(item.nodeid, None)
    hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
'''


def write_rerun_plugin(folder: Path) -> None:
    """Write the plugin into ``folder`` (the report plugin's, on the run's
    ``PYTHONPATH``)."""
    (folder / f"{RERUN_PLUGIN}.py").write_text(_SOURCE, encoding="utf-8")
