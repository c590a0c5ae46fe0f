"""One run of the tests in a shadow tree, read from the runner's report.

pytest runs as :mod:`rein.testgate.pytest_run` says (pytest-xdist's ``-n
auto`` when the interpreter has it and the run is big), its results read
from pytest's own report objects; another runner as the configured
``gates.tests.command`` with ``{junit}`` replaced by the path of the JUnit
report it writes (or ``junitPath``, in the shadow). The command goes through
the gates' :class:`CommandRunner` port: its own process group, the child
environment (no secrets), killed at its time limit and when the run is
aborted or steered (the runner's cancellation).

What comes back is never "passed" by default: a runner that cannot start,
a timeout, an interrupted or crashed pytest, a missing report, a pytest
that exited 0 before its session finished (a test's ``os._exit(0)``: its
report lacks the plugin's last line), a report path through a folder
linked to the workspace's are
:attr:`TestRun.unverified` with the reason; pytest's exit code 5 (nothing
collected) is :attr:`TestRun.nothing_collected`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from rein.harness.errors import ReinError
from rein.harness.ports import CommandResult, CommandRunner
from rein.testgate.baseline_feed import Feed
from rein.testgate.cores import Share, durations_in, merged_coverage
from rein.testgate.direct import Refused, Unreached, run_direct
from rein.testgate.junit import TestResult, parse_junit
from rein.testgate.pytest_call import PytestCall
from rein.testgate.pytest_run import XDIST_FROM_FILES, pytest_call, read_report
from rein.testgate.recorder import RawCoverage, read_coverage
from rein.testgate.shadow import Shadow, inside
from rein.testgate.warm import WarmClient

__all__ = [
    "JUNIT_PLACEHOLDER",
    "REPORT",
    "XDIST_FROM_FILES",
    "XDIST_FROM_TESTS",
    "NotWarm",
    "RunnerSpec",
    "TestRun",
    "report_path",
    "run_tests",
    "takes_xdist",
]

JUNIT_PLACEHOLDER = "{junit}"
#: The pytest report's name in a shadow's own folder (:meth:`Shadow.own`).
REPORT = "report.jsonl"
# The gate's logger: these lines are the gate's.
log = logging.getLogger("rein.testgate.gate")

#: pytest's exit codes that mean it could not judge the tests.
_PYTEST_TROUBLE = {
    2: "pytest was interrupted",
    3: "pytest hit an internal error",
    4: "pytest was called wrongly",
}
_OUTPUT_TAIL = 1_500
#: Named tests (or classes) from which pytest-xdist is used, when installed.
XDIST_FROM_TESTS = 200


@dataclass(frozen=True, slots=True)
class RunnerSpec:
    """How the tests run: pytest under ``python``, or ``command`` (a
    shell command writing a JUnit report to ``{junit}`` or to
    ``junit_path``, relative to the workspace root)."""

    python: str
    command: str | None = None
    junit_path: str | None = None
    #: pytest-xdist is importable by ``python``.
    xdist: bool = False

    @property
    def custom(self) -> bool:
        return self.command is not None


@dataclass(slots=True)
class TestRun:
    __test__ = False  # not a pytest test class

    results: list[TestResult] = field(default_factory=list)
    #: Why the run could not judge the tests (never "passed").
    unverified: str | None = None
    nothing_collected: bool = False
    exit_code: int = 0
    duration_s: float = 0.0
    output: str = ""
    #: Why a run meant for the warm pytest ran cold (its client says so).
    cold: str | None = None
    #: What each test ran, when recorded (:mod:`rein.testgate.recorder`).
    coverage: RawCoverage | None = None
    #: Each test's time in the report (:func:`rein.testgate.cores.durations_in`).
    durations: dict[str, float] = field(default_factory=dict)
    #: How many pytest processes shared the run (:mod:`rein.testgate.cores`).
    shares: int = 1

    @property
    def failing(self) -> list[TestResult]:
        return [r for r in self.results if r.failing]


def _large(targets: Sequence[str] | None, files: int, only: Sequence[str] | None) -> bool:
    """Big enough for pytest-xdist's workers (about a second to start):
    :data:`XDIST_FROM_TESTS` tests (or classes) named, else
    :data:`XDIST_FROM_FILES` files."""
    if only is not None:
        return len(only) >= XDIST_FROM_TESTS
    if targets and any("::" in t for t in targets):
        return len(targets) >= XDIST_FROM_TESTS
    return max(files, len(targets or ())) >= XDIST_FROM_FILES


def takes_xdist(
    spec: RunnerSpec,
    targets: Sequence[str] | None,
    files: int,
    only: Sequence[str] | None,
    feed: Feed | None = None,
) -> bool:
    """pytest-xdist's workers run these tests (installed, no feed, big)."""
    return spec.xdist and feed is None and _large(targets, files, only)


def _tail(text: str, limit: int = _OUTPUT_TAIL) -> str:
    text = text.strip()
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def _read_cold(marker: Path) -> str | None:
    try:
        return marker.read_text(encoding="utf-8", errors="replace")[:300] or "(no reason)"
    except OSError:
        return None


class NotWarm(ReinError):
    """A run for the kept pytest process alone could not go there
    (``warm_only``): nothing ran (:mod:`rein.testgate.refresh` tries later)."""


async def _run_pytest(
    runner: CommandRunner,
    call: Callable[..., PytestCall],
    shadow: Shadow,
    report: Path,
    timeout_s: float,
    warm: WarmClient | None,
    warm_only: bool = False,
) -> tuple[CommandResult, str | None]:
    """pytest's run (``call``, given how to reach the warm process): by
    the kept process the gate hands it to (:mod:`rein.testgate.direct`),
    else through ``runner``, with the warm client when there is one; and
    why it ran cold when it was meant to run warm. ``warm_only``: only by
    the kept process, else :class:`NotWarm` (nothing runs)."""
    # The shadow's own folder is the one folder besides the workspace the
    # tests may write when the gates run sandboxed.
    writable = [str(shadow.private)]
    if warm is not None and warm.watch is not None:
        cold = call(warm=None)
        try:
            return await run_direct(warm, cold, timeout_s), None
        except Unreached as exc:
            if warm_only:
                raise NotWarm(str(exc)) from exc
            log.debug("tests gate: this run goes through the warm client: %s", exc)
        except Refused as exc:
            if warm_only:
                raise NotWarm(str(exc)) from exc
            return await runner.run(cold.shell(), timeout_s=timeout_s, writable=writable), str(exc)
    if warm_only:
        raise NotWarm("the kept pytest process cannot take the run")
    why = await warm.check() if warm is not None and warm.check is not None else None
    if warm is None or why is not None:
        return await runner.run(
            call(warm=None).shell(), timeout_s=timeout_s, writable=writable
        ), why
    marker = report.with_name(report.name + ".cold")
    marker.unlink(missing_ok=True)  # the warm client's (rein.testgate.warm)
    # The warm process's folder too, so its client reaches the socket (that
    # process runs in the sandbox too).
    writable.append(warm.folder)
    result = await runner.run(call(warm=warm).shell(), timeout_s=timeout_s, writable=writable)
    return result, _read_cold(marker)


def report_path(shadow: Shadow, share: int = 0) -> Path:
    """The pytest report of a run's ``share`` (:mod:`rein.testgate.cores`)."""
    return shadow.own(REPORT if share == 0 else f"report.{share}.jsonl")


def custom_command(spec: RunnerSpec, shadow: Shadow, report: Path) -> str:
    assert spec.command is not None
    command = spec.command.replace(JUNIT_PLACEHOLDER, shlex.quote(str(report)))
    return f"cd {shlex.quote(str(shadow.root))} && {command}"


async def run_tests(
    runner: CommandRunner,
    spec: RunnerSpec,
    shadow: Shadow,
    targets: Sequence[str] | None,
    timeout_s: float,
    *,
    files: int = 0,
    limit_s: float | None = None,
    only: Sequence[str] | None = None,
    warm: WarmClient | None = None,
    record: bool = False,
    untraced: Sequence[str] = (),
    whole: Sequence[str] | None = None,
    again: bool = False,
    feed: Feed | None = None,
    shares: Sequence[Share] | None = None,
    warm_only: bool = False,
) -> TestRun:
    """Run ``targets`` (pytest node ids or files; None: what the project's
    configuration collects; ignored by a custom command) in ``shadow``;
    ``files``: how many test files that is when ``targets`` does not say
    (pytest-xdist runs them from :data:`XDIST_FROM_FILES`); ``limit_s``: the
    configured limit ``timeout_s`` is what is left of, for the reason;
    ``only``: of what ``targets`` collect, pytest runs only these node ids
    (a custom command ignores it); ``warm``: pytest is run by the warm
    process (:mod:`rein.testgate.warm`); ``record``: what each test ran is
    recorded (pytest without xdist only), but for the ``untraced`` tests',
    with only the ``whole`` files (None: all) collected whole; ``again``: a
    failing test runs once more in the same pytest process (the first run,
    :mod:`rein.testgate.rerun_in_process`); ``feed``: of the tests
    collected, those named in the feed run as they come (never with
    pytest-xdist, :mod:`rein.testgate.baseline_feed`); ``shares``: the
    tests in these parts (:mod:`rein.testgate.cores`), each forked at once
    with its own report (:func:`report_path`), read as one run's (never
    with pytest-xdist); ``warm_only``: by the kept pytest process alone,
    else :class:`NotWarm` (one share only)."""
    limit = limit_s if limit_s is not None else timeout_s
    if timeout_s <= 0:
        return TestRun(unverified="no time was left for the tests within gates.tests.timeoutMs")
    if spec.custom:
        return await _run_custom(runner, spec, shadow, timeout_s, limit)
    xdist = takes_xdist(spec, targets, files, only, feed)
    if xdist or not shares or len(shares) < 2:
        shares = [Share(tuple(targets or ()), None if only is None else tuple(only))]
        whole_run = targets is None
    else:
        whole_run = False
    reports = [report_path(shadow, at) for at in range(len(shares))]
    coverages: list[Path] | None = None
    if record and not xdist:
        coverages = [
            shadow.own(f"coverage.{at}.json" if at else "coverage.json")
            for at in range(len(shares))
        ]
    calls = [
        functools.partial(
            pytest_call,
            spec.python,
            shadow,
            None if whole_run else list(share.targets),
            reports[at],
            xdist=xdist,
            only=only if len(shares) == 1 else share.only,
            coverage=None if coverages is None else coverages[at],
            untraced=untraced,
            whole=whole,
            again=again,
            feed=feed,
            feed_s=timeout_s,
            share=at,
        )
        for at, share in enumerate(shares)
    ]
    for path in [*reports, *(coverages or ())]:
        if path.exists() or path.is_symlink():
            path.unlink()  # in the shadow's own folders (a link is removed, not its target)
    if len(calls) == 1:
        result, went_cold = await _run_pytest(
            runner, calls[0], shadow, reports[0], timeout_s, warm, warm_only
        )
        results, colds = [result], [went_cold]
    else:
        results, colds = await _run_all(runner, calls, shadow, reports, timeout_s, warm)
    result = _merged_result(results)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, output=result.output)
    run.shares = len(calls)
    run.cold = next((why for why in colds if why is not None), None)
    if coverages is not None and not result.timed_out:
        run.coverage = merged_coverage([read_coverage(path) for path in coverages])
    if result.timed_out:
        run.unverified = f"the tests did not finish within {limit:g} s (gates.tests.timeoutMs)"
        run.unverified += _still_running(reports)
        return run
    if all(r.exit_code == 5 for r in results):
        run.nothing_collected = True
        return run
    for at, path in enumerate(reports):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            run.unverified = (
                f"pytest exited with {results[at].exit_code} and wrote no report: "
                f"{_tail(results[at].output, 600)}"
            )
            return run
        try:
            tests, done = read_report(text)
        except ValueError as exc:
            run.unverified = f"pytest's report could not be read: {exc}"
            return run
        # A file cut across shares that fails to import: reported once.
        failed = {r.node_id for r in run.results if r.collection_error}
        run.results += [t for t in tests if not (t.collection_error and t.node_id in failed)]
        run.durations.update(durations_in(text))
        if not done and results[at].exit_code == 0:
            # One share's pytest ended early (a test's os._exit(0)): the
            # tests after it in that share never ran, whatever the others said.
            run.output = results[at].output
            return _judged(run, "pytest", 0, False, custom=False)
    return _judged(run, "pytest", result.exit_code, True, custom=False)


async def _run_all(
    runner: CommandRunner,
    calls: Sequence[Callable[..., PytestCall]],
    shadow: Shadow,
    reports: Sequence[Path],
    timeout_s: float,
    warm: WarmClient | None,
) -> tuple[list[CommandResult], list[str | None]]:
    """The shares' runs at once: all of them ended (killed, at an abort or
    a steer, each with its process group) when this returns or raises."""
    tasks = [
        asyncio.ensure_future(_run_pytest(runner, call, shadow, report, timeout_s, warm))
        for call, report in zip(calls, reports, strict=True)
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        # Cancelled (an abort), or a share raised: the others are ended
        # too, each killing its process group, before this returns.
        for task in tasks:
            task.cancel()
        with anyio.CancelScope(shield=True):  # anyio's scopes cancel again
            await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return [t.result()[0] for t in tasks], [t.result()[1] for t in tasks]


def _merged_result(results: Sequence[CommandResult]) -> CommandResult:
    """One command's result of the shares': an exit code that says trouble
    (nor 0, 1 or 5) first, then 1, then 0; 5 only when every share's is."""
    if len(results) == 1:
        return results[0]
    codes = [r.exit_code for r in results]
    odd = [c for c in codes if c not in (0, 1, 5)]
    code = odd[0] if odd else 1 if 1 in codes else 0 if 0 in codes else 5
    return CommandResult(
        exit_code=code,
        output="\n".join(r.output.rstrip() for r in results if r.output.strip()),
        timed_out=any(r.timed_out for r in results),
        duration_s=max(r.duration_s for r in results),
    )


async def _run_custom(
    runner: CommandRunner, spec: RunnerSpec, shadow: Shadow, timeout_s: float, limit: float
) -> TestRun:
    """The configured command's run, read from its JUnit report."""
    if spec.junit_path is not None and JUNIT_PLACEHOLDER not in (spec.command or ""):
        if not inside(shadow.root, spec.junit_path):
            return TestRun(
                unverified=f"gates.tests.junitPath {spec.junit_path} runs through a folder "
                "the shadow links to the workspace's own: the report would be written "
                "there, so the tests are not run"
            )
        report = shadow.root / spec.junit_path
    else:
        report = shadow.own("report.xml")
    command = custom_command(spec, shadow, report)
    who = f"`{spec.command}`"
    if report.exists() or report.is_symlink():
        report.unlink()  # in the shadow's own folders (a link is removed, not its target)
    result = await runner.run(command, timeout_s=timeout_s, writable=[str(shadow.private)])
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, output=result.output)
    if result.timed_out:
        run.unverified = f"the tests did not finish within {limit:g} s (gates.tests.timeoutMs)"
        return run
    try:
        text = report.read_text(encoding="utf-8", errors="replace")
    except OSError:
        run.unverified = (
            f"{who} exited with {result.exit_code} and wrote no report: {_tail(result.output, 600)}"
        )
        return run
    try:
        run.results = parse_junit(text)
    except ValueError as exc:
        run.unverified = f"{who}'s report could not be read: {exc}"
        return run
    return _judged(run, who, result.exit_code, True, custom=True)


def _judged(run: TestRun, who: str, code: int, finished: bool, *, custom: bool) -> TestRun:
    """``run`` (its results read) unverified when its exit ``code`` or an
    unfinished session (``finished``: pytest's report has its last line)
    says the results cannot be trusted."""
    if not finished and code == 0:
        run.unverified = (
            "pytest ended before its session finished (exit code 0: a test or plugin "
            f"exited the process?): {_tail(run.output, 600)}"
        )
        return run
    if not custom and code in _PYTEST_TROUBLE:
        if not any(r.collection_error for r in run.results):
            run.unverified = f"{_PYTEST_TROUBLE[code]} (exit code {code}): {_tail(run.output, 600)}"
    elif code != 0 and not run.failing:
        run.unverified = (
            f"{who} exited with {code} and its report names no failing test: "
            f"{_tail(run.output, 600)}"
        )
    return run


def _still_running(reports: Sequence[Path]) -> str:
    """The tests the reports (a run's, or its shares') show started and
    not ended (a hang's test), for a timeout's reason: without it, the
    model is told nothing of which test to look at."""
    text = ""
    for report in reports:
        try:
            text += report.read_text(encoding="utf-8", errors="replace") + "\n"
        except OSError:
            continue
    open_: dict[str, None] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # the line a kill cut
        if not isinstance(row, dict):
            continue
        node = str(row.get("nodeid", ""))
        if row.get("kind") == "begin":
            open_[node] = None
        elif row.get("kind") == "test" and row.get("when") == "teardown":
            open_.pop(node, None)
    if not open_:
        return ""
    return "; still running then: " + ", ".join(list(open_)[:5])
