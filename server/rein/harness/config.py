"""Harness configuration: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

import re
import signal as _signal
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from rein.harness.analyzer_servers import AnalyzerServerConfig, check_new_servers, merge_servers
from rein.harness.gating.path_globs import DEFAULT_NON_CODE, is_code, is_preview_output

__all__ = [
    "DEFAULT_PREVIEW_ERROR_PATTERNS",
    "AnalyzerGateConfig",
    "CommandGateConfig",
    "DependencyGateConfig",
    "EmptyAnswerWithChanges",
    "GatesConfig",
    "HarnessConfig",
    "PreviewGateConfig",
    "PreviewReadinessConfig",
    "PreviewReload",
    "QueueMode",
    "RuntimeGateConfig",
    "StuckToolConfig",
    "StuckToolPolicy",
    "TestSelect",
    "TestsGateConfig",
    "ToolExecution",
    "ToolMisuseBreakerConfig",
]

ToolExecution = Literal["parallel", "sequential"]
QueueMode = Literal["one-at-a-time", "all"]
#: What happens to a tool call still running at its time limit: "error"
#: (cancel it; the model reads an error result), "retry" (cancel it and run
#: it once more; stuck again, the error result), "cancel" (cancel it and
#: abort the run).
StuckToolPolicy = Literal["error", "retry", "cancel"]
#: A run's final answer is empty once the empty-reply retries are spent and
#: the run changed files: "fail" the run (nothing tells the person what was
#: done), or "accept" it as a run with no changes is.
EmptyAnswerWithChanges = Literal["fail", "accept"]


def _off_or_at_least_10(value: int) -> int:
    if 0 < value < 10:
        raise ValueError("must be 0 (off) or at least 10 ms")
    return value


class _Camel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class ToolMisuseBreakerConfig(_Camel):
    """The thresholds of the tool-misuse breaker
    (:mod:`rein.harness.run.breaker`)."""

    #: This many consecutive identical rejected calls put a corrective note
    #: in the next request.
    note_at: int = Field(3, ge=1)
    #: This many: that identical call is refused for the rest of the run.
    block_at: int = Field(6, ge=1)
    #: Two calls alternating with identical results and no workspace change:
    #: a note after this many calls ...
    oscillation_note_at: int = Field(4, ge=4)
    #: ... and both are refused after this many.
    oscillation_block_at: int = Field(8, ge=4)


class StuckToolConfig(_Camel):
    """Supervision of running tool calls: liveness heartbeats and what
    happens to a call that runs past its limit."""

    #: A tool running longer than this emits a heartbeat event every this
    #: long; 0: no heartbeats.
    heartbeat_ms: int = Field(5_000, ge=0)
    #: A call running longer than this is stuck (unless the tool declares
    #: its own limit); 0: no limit.
    timeout_ms: int = Field(600_000, ge=0)
    #: What happens to a stuck call.
    policy: StuckToolPolicy = "error"

    @field_validator("heartbeat_ms")
    @classmethod
    def _heartbeat(cls, value: int) -> int:
        return _off_or_at_least_10(value)


class HarnessConfig(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: The loop cap: model turns one run may take before it fails. 100, as
    #: in the seed harness: the cap is a last resort behind the misuse
    #: breaker, the repair bound and the idle watchdog, and a long task with
    #: repairs must not hit it (docs/configuration.md says more).
    max_model_turns_per_run: int = Field(100, ge=1)
    max_repair_attempts: int = Field(3, ge=0)
    tool_execution: ToolExecution = "parallel"
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"
    max_empty_retries: int = Field(1, ge=0)
    #: An empty final answer (after ``max_empty_retries``) of a run that
    #: changed files: "fail" the run, or "accept" it like one with no changes.
    empty_answer_with_changes: EmptyAnswerWithChanges = "fail"
    #: How deep subagents nest: 1 lets the agent start subagents that start
    #: none, 2 lets those start their own; 0 offers no ``task`` tool.
    subagent_max_depth: int = Field(2, ge=0, le=5)
    #: No event for this long outside tool execution aborts the run; 0
    #: disables. Longer than the longest default tool, install or gate bound
    #: (600 s), which pause it anyway.
    run_idle_timeout_ms: int = Field(900_000, ge=0)
    #: During a tool phase, how often the Agent's external steering probe is
    #: asked whether mail is waiting (it soft-yields long tools).
    external_steering_probe_ms: int = Field(2_000, ge=10)
    max_tool_result_chars: int = Field(16_000, ge=200)
    #: The most tool calls of one assistant turn that run; each call past
    #: it gets an error result saying why (every call keeps its result).
    max_tool_calls_per_turn: int = Field(64, ge=1)
    max_context_tokens: int = Field(100_000, ge=1_000)
    context_window_cap: int | None = Field(None, ge=1_000)
    #: A tool running longer than this emits heartbeat events; 0 disables.
    tool_heartbeat_ms: int = Field(5_000, ge=0)
    #: A tool running longer than this (unless it declares its own limit) is
    #: stuck and handled by ``stuck_tool_policy``; 0 disables.
    tool_timeout_ms: int = Field(600_000, ge=0)
    #: Bound on the editor's answer to a request Rein sends it that no
    #: person answers (``workspace/applyEdit``, ``rein/saveDocuments``):
    #: past it an edit is a tool error the model reads, a save is skipped.
    #: ``rein/diagnostics`` has ``gates.analyzer.requestTimeoutMs``;
    #: ``rein/confirm`` and ``rein/askUser`` wait for a person,
    #: ``approval.timeoutMs``.
    client_request_timeout_ms: int = Field(30_000, ge=100)
    stuck_tool_policy: StuckToolPolicy = "error"
    #: Retries of a tool call that failed transiently (a TransientToolError,
    #: a refused connection, a TimeoutError or ConnectionError of a read
    #: tool: ``invocation.is_transient``); 0: never retried.
    tool_retries: int = Field(3, ge=0, le=10)
    #: The breaker's thresholds; None turns the breaker off.
    tool_misuse_breaker: ToolMisuseBreakerConfig | None = ToolMisuseBreakerConfig()
    #: A run that processed more tokens than this (input, output, cache
    #: reads and writes, its subagents' included) ends before its next turn
    #: (status "failed", reason "budget: ..."); None: no limit.
    max_tokens_per_run: int | None = Field(None, ge=1)
    #: The same for the run's cost in USD (``model.prices``); None: no limit.
    max_cost_per_run: float | None = Field(None, gt=0)

    @field_validator("tool_heartbeat_ms")
    @classmethod
    def _heartbeat(cls, value: int) -> int:
        return _off_or_at_least_10(value)

    @property
    def context_window(self) -> int:
        """The effective window: ``context_window_cap`` when set (lower or
        higher than ``max_context_tokens``, for an endpoint that serves more
        than the catalogue says), else ``max_context_tokens``."""
        if self.context_window_cap is None:
            return self.max_context_tokens
        return self.context_window_cap

    @property
    def stuck_tool(self) -> StuckToolConfig:
        return StuckToolConfig(
            heartbeat_ms=self.tool_heartbeat_ms,
            timeout_ms=self.tool_timeout_ms,
            policy=self.stuck_tool_policy,
        )


class AnalyzerGateConfig(_Camel):
    enabled: bool = True
    #: Diagnostics at or above this severity block: "error" | "warning" |
    #: "information" | "hint".
    severity: Literal["error", "warning", "information", "hint"] = "error"
    #: Quiet period after the last diagnostics change before a verdict.
    quiet_period_ms: int = Field(100, ge=0)
    #: Bound on the wait for fresh diagnostics; past it the verdict is stale.
    max_wait_ms: int = Field(5_000, ge=100)
    #: Bound on waiting for the analyzers to say they are done (a file's
    #: baseline before its first change, the verdict after an install);
    #: past it the verdict is stale ("unverified" unless something blocks).
    settle_timeout_ms: int = Field(120_000, ge=100)
    #: Bound on one answer of an analyzer: the editor's to
    #: ``rein/diagnostics``, a headless analyzer's to ``initialize`` or a
    #: diagnostics pull. Past it that answer is missing: the verdict is
    #: "unverified" and says why.
    request_timeout_ms: int = Field(10_000, ge=100)
    #: Headless: above this many analysable files, analyzers that check the
    #: whole workspace (basedpyright) check only the open files instead: the
    #: files the run changes and the files that import them.
    workspace_max_files: int = Field(1_000, ge=0)
    #: In that mode, how many importers of a changed file are opened with it.
    max_importers: int = Field(30, ge=0)
    #: Headless, in a workspace analysed as a whole: the analyzers check the
    #: open files only until a verdict needs the whole workspace (issue 32
    #: item 7: a cold session's first changes are not queued behind it).
    defer_workspace_analysis: bool = True
    #: Headless: the language servers, laid over the presets by name
    #: (:mod:`rein.harness.analyzer_servers`).
    servers: list[AnalyzerServerConfig] = Field(default_factory=list)

    @field_validator("servers")
    @classmethod
    def _servers(cls, value: list[AnalyzerServerConfig]) -> list[AnalyzerServerConfig]:
        check_new_servers(value)
        return value

    def effective_servers(self) -> list[AnalyzerServerConfig]:
        """The presets with ``servers`` laid over them, then the new ones."""
        return merge_servers(self.servers)


class DependencyGateConfig(_Camel):
    enabled: bool = True
    #: Manifest glob -> install command, run in the workspace root.
    commands: dict[str, str] = Field(default_factory=dict)
    timeout_ms: int = Field(600_000, ge=1_000)


class CommandGateConfig(_Camel):
    name: str = "custom"
    command: str
    timeout_ms: int = Field(600_000, ge=1_000)


class RuntimeGateConfig(_Camel):
    #: A one-shot command such as the test suite; empty: no runtime gate.
    command: str | None = None
    timeout_ms: int = Field(600_000, ge=1_000)


#: Which tests the tests gate runs: those the change can reach, or all.
TestSelect = Literal["reach", "all"]


class TestsGateConfig(_Camel):
    """The tests gate (:mod:`rein.testgate`): the project's tests the run's
    changes reach, blocking only on the ones the run broke."""

    __test__ = False  # not a pytest test class

    #: "auto": on when the project has pytest tests (a ``tests/`` folder,
    #: ``test_*.py`` files, pytest's configuration); or True / False.
    enabled: bool | Literal["auto"] = "auto"
    #: Another runner, run with ``bash -c`` in a copy of the workspace: a
    #: shell command that writes a JUnit XML report to ``{junit}`` (or to
    #: ``junitPath``). Empty: pytest, under the project's interpreter.
    command: str | None = None
    #: Where ``command`` writes its report, relative to the workspace root,
    #: when the command has no ``{junit}``.
    junit_path: str | None = None
    #: The whole gate's time limit (every run of it).
    timeout_ms: int = Field(120_000, ge=1_000)
    #: "reach": the test files the changed files reach through imports (and
    #: changed test files); "all": the whole suite. A custom command runs all.
    select: TestSelect = "reach"
    #: At most this many of the reached test files run, the nearest first;
    #: when more are reached, a verdict with no blockers is "unverified".
    max_tests: int | None = Field(None, ge=1)
    #: A test that fails, then passes on its re-run, blocks too.
    flaky_blocks: bool = False
    #: How many forks of the warm pytest may share a first run of many
    #: tests: "auto", the cores Rein may run on (at most 4); 1: one fork.
    workers: int | Literal["auto"] = Field("auto", ge=1)
    #: Judge while the model takes its turn: after a tool turn's changes,
    #: the verdict's runs start in the background for the workspace as it
    #: is; the verdict uses them when its inputs are the same
    #: (:mod:`rein.testgate.ahead`).
    ahead: bool = True

    @field_validator("command", "junit_path")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value if value and value.strip() else None

    @field_validator("junit_path")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith("/") or ".." in value.split("/")):
            raise ValueError("must be a path inside the workspace, relative to its root")
        return value

    def model_post_init(self, context: object, /) -> None:
        if self.command is not None and "{junit}" not in self.command and not self.junit_path:
            raise ValueError(
                "gates.tests.command needs {junit} (where it writes its JUnit XML report) "
                "or gates.tests.junitPath"
            )


PreviewReload = Literal["restart", "signal", "self"]

#: What marks a runtime error in the preview's output by default: a Python
#: traceback header, and ``Error:`` / ``SomethingError:`` /
#: ``SomethingException:`` lines.
DEFAULT_PREVIEW_ERROR_PATTERNS: tuple[str, ...] = (
    r"^Traceback \(most recent call last\):",
    r"^\s*[\w.]*(?:Error|Exception):",
)


class PreviewReadinessConfig(_Camel):
    """When the preview counts as ready after a start or reload. With neither
    ``line`` nor ``url`` it is ready once a process of it listens on a TCP
    port, or once its output has been quiet for ``quiet_ms``; with both,
    both must hold."""

    #: A regular expression; ready when an output line printed since the
    #: start (or reload) matches it.
    line: str | None = None
    #: An ``http://`` URL on 127.0.0.1 (or localhost); ready when a GET
    #: answers with a status below 500.
    url: str | None = None
    #: Not ready within this long: the start or reload failed.
    timeout_ms: int = Field(10_000, ge=100)
    #: Without ``line`` and ``url``: ready once the output has been quiet
    #: this long (from the start, or the last line), if no port opened first.
    quiet_ms: int = Field(2_000, ge=10, le=600_000)
    #: How often the URL and the listening ports are looked at.
    poll_ms: int = Field(100, ge=10, le=10_000)

    @field_validator("line")
    @classmethod
    def _line_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from exc
        return value

    @field_validator("url")
    @classmethod
    def _local_http(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
            raise ValueError("must be an http:// URL on 127.0.0.1 or localhost")
        try:
            parts.port  # noqa: B018 - raises on an invalid port
        except ValueError as exc:
            raise ValueError(f"invalid port: {exc}") from exc
        return value


class PreviewGateConfig(_Camel):
    """The preview: the person's program, started and reloaded by Rein and
    watched for runtime errors. Off while ``command`` is empty."""

    #: Run with ``bash -c`` in the workspace root, in its own process group,
    #: e.g. ``python -m myapp`` or ``uvicorn app:app``.
    command: str | None = None
    #: How validated changes are loaded: "restart" (stop and start again),
    #: "signal" (send ``signal``), "self" (the program reloads itself on
    #: file changes; Rein only waits for it).
    reload: PreviewReload = "restart"
    #: The signal of the "signal" strategy, by name.
    signal: str = "SIGHUP"
    #: Regular expressions; an output line matching one is a runtime error.
    error_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_PREVIEW_ERROR_PATTERNS))
    #: A non-zero exit of the preview is a runtime error.
    error_on_exit: bool = True
    readiness: PreviewReadinessConfig = PreviewReadinessConfig()
    #: How long the output is watched after a change is loaded.
    observation_window_ms: int = Field(1_000, ge=0)
    #: Grace between SIGTERM and SIGKILL when the preview is stopped.
    stop_timeout_ms: int = Field(3_000, ge=0)
    #: A start, reload or stop waits this long for another to finish (looking
    #: again every ``busy_poll_ms``); past that "the preview is busy".
    busy_timeout_ms: int = Field(10_000, ge=100, le=3_600_000)
    busy_poll_ms: int = Field(100, ge=10, le=10_000)
    #: After the process exits, how long its remaining output may take to arrive.
    exit_drain_ms: int = Field(1_000, ge=0, le=60_000)
    #: After an error line the output is read until it is quiet this long (at
    #: most ``settle_max_ms``), so the whole traceback is in the blocker.
    settle_quiet_ms: int = Field(100, ge=0, le=60_000)
    settle_max_ms: int = Field(500, ge=0, le=600_000)
    #: Globs of the files the preview writes (logs, caches, generated
    #: output), e.g. ``["*.log", "out/**"]``: the hosts leave their changes
    #: out of the external changes, so they do not reset the analyzer's
    #: quiet period. Files the preview holds open for writing count too.
    outputs: list[str] = Field(default_factory=list)
    #: Globs of the files that are not code (documentation, licences): a run
    #: that changed only these does not start the preview, and a "self"
    #: reload does not wait for the program to reload them. ``!glob`` keeps
    #: a file code (``!requirements*.txt``). The syntax is a .gitignore's.
    non_code: list[str] = Field(default_factory=lambda: list(DEFAULT_NON_CODE))

    @field_validator("command")
    @classmethod
    def _blank_is_off(cls, value: str | None) -> str | None:
        return value if value and value.strip() else None

    @field_validator("signal")
    @classmethod
    def _known_signal(cls, value: str) -> str:
        name = value.strip().upper()
        name = name if name.startswith("SIG") else f"SIG{name}"
        if name not in _signal.Signals.__members__:
            raise ValueError(f"unknown signal {value!r} (e.g. SIGHUP, SIGUSR1)")
        return name

    @field_validator("error_patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from exc
        return value

    @property
    def enabled(self) -> bool:
        return self.command is not None

    def is_code(self, path: str) -> bool:
        """A change to ``path`` (workspace-relative) changes the program."""
        return is_code(path, self.non_code)

    def is_output(self, path: str) -> bool:
        """``path`` (workspace-relative) is listed as the preview's output."""
        return is_preview_output(path, self.outputs)

    @property
    def signal_number(self) -> int:
        return int(_signal.Signals[self.signal])


class GatesConfig(_Camel):
    analyzer: AnalyzerGateConfig = AnalyzerGateConfig()
    dependencies: DependencyGateConfig = DependencyGateConfig()
    runtime: RuntimeGateConfig = RuntimeGateConfig()
    tests: TestsGateConfig = TestsGateConfig()
    custom: list[CommandGateConfig] = Field(default_factory=list)
    preview: PreviewGateConfig = PreviewGateConfig()
