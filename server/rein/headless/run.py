"""``rein run``: one task, headless, in a terminal or a CI job."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import unicodedata
from pathlib import Path
from typing import Any, Literal

import anyio

from rein.bring.commands import CommandError
from rein.config import ReinConfig
from rein.config_file import build_config
from rein.harness import RunResult
from rein.harness.errors import ConfigError, StoreError, ToolError
from rein.harness.ports import ApprovalRequest, Model
from rein.headless.hook_ports import TerminalHookPorts
from rein.headless.isolated import abandon_isolated, finish_isolated, start_isolated
from rein.headless.mcp_ports import TerminalMcpPorts
from rein.headless.stderr_log import log_to_stderr
from rein.headless.terminate import EXIT_TERMINATED, sigterm_cancels
from rein.hosting.headless import HeadlessSession
from rein.isolation import GitError, IsolatedRecord
from rein.providers import create_model
from rein.render import EventPrinter
from rein.sandboxing.probe import unavailable_notice
from rein.sandboxing.settings import check_hosts
from rein.session import Session, result_json
from rein.session.setup_files import prompted, setup_problems
from rein.store import default_storage_path

__all__ = [
    "EXIT_CODES",
    "NO_TERMINAL",
    "UNVERIFIED_EXIT",
    "TerminalApprover",
    "TerminalUserChannel",
    "build_config",
    "read_only_warning",
    "run_task",
    "session_line",
]

EXIT_CODES = {"completed": 0, "failed": 1, "aborted": 3, "waiting": 4}
#: A completed run that a gate could not verify (its changes are kept and
#: not validated: the analyzers were missing or stale, the tests could not
#: run). Not 0: CI cannot tell it from a pass otherwise (trial31).
UNVERIFIED_EXIT = 5


def exit_code(result: RunResult) -> int:
    """``rein run``'s exit code for ``result`` (see the user guide)."""
    if result.status == "completed" and result.unverified:
        return UNVERIFIED_EXIT
    return EXIT_CODES.get(result.status, 1)


#: Why an ask cannot be answered without a terminal (a tool error result).
NO_TERMINAL = (
    "nobody can approve this: rein run has no terminal to ask on (its input is not a "
    "terminal, as in CI or a pipe); approve everything with --yes, or allow the tool class "
    "with rein.approval"
)


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: every control character (C0,
    DEL, C1) and every invisible format character (bidi overrides,
    zero-width) written as an escape (``\\x1b``, ``\\r``, ``\\u202e``), so
    a command cannot hide itself from the question (``\\e[2K\\r\\e[1A``
    would redraw the line). Newlines stay when ``keep_newlines``."""
    out: list[str] = []
    for char in text:
        if char == "\n" and keep_newlines:
            out.append(char)
        elif unicodedata.category(char) in ("Cc", "Cf"):
            out.append(repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def _question(request: ApprovalRequest) -> str:
    """The approval question: the title, then the detail with every line
    indented (a newline in a command cannot start a line of its own)."""
    detail = shown(request.detail, keep_newlines=True).replace("\n", "\n  ")
    return f"\nRein wants to {shown(request.title)}:\n  {detail}\nAllow? [y/N] "


async def _read_answer(prompt: str, timeout_s: float) -> str | None:
    """Show ``prompt`` on stderr and read one line from the terminal, at
    most ``timeout_s`` (``approval.timeoutMs``). None past the bound; ""
    at the end of input. No thread: the wait for input is cancellable."""
    print(prompt, end="", file=sys.stderr, flush=True)
    with anyio.move_on_after(timeout_s):
        # A terminal in canonical mode is readable once a whole line (or
        # the end of input) was typed: the read below does not block.
        await anyio.wait_readable(sys.stdin.fileno())
        return sys.stdin.readline()
    print(file=sys.stderr)
    return None


class TerminalApprover:
    """``--yes`` approves everything; on a terminal it asks (the question on
    stderr, so ``--json`` output stays clean), at most ``timeout_s``; with
    no terminal (CI, a pipe) an ask is refused with :data:`NO_TERMINAL`.
    Every refusal is a tool error the model reads."""

    def __init__(self, assume_yes: bool, timeout_s: float = 600.0) -> None:
        self.assume_yes = assume_yes
        self.timeout_s = timeout_s

    async def confirm(self, request: ApprovalRequest) -> bool:
        if self.assume_yes:
            return True
        if not sys.stdin.isatty():
            raise ToolError(NO_TERMINAL)
        answer = await _read_answer(_question(request), self.timeout_s)
        if answer is None:
            raise ToolError(
                f"nobody answered the approval request within {self.timeout_s:g} s "
                "(approval.timeoutMs), so the call is refused"
            )
        if not answer:  # end of input: nobody is there to answer
            raise ToolError(NO_TERMINAL)
        return answer.strip().lower() in ("y", "yes")


class TerminalUserChannel:
    """``ask_user`` in a terminal: asked on an interactive terminal (at most
    ``timeout_s``); with no one to answer (CI, a pipe, ``--json``, no answer
    in time) the run ends "waiting" (exit 4) and ``rein run --resume
    SESSION "answer"`` continues it."""

    def __init__(self, interactive: bool, timeout_s: float = 600.0) -> None:
        self.interactive = interactive
        self.timeout_s = timeout_s

    async def ask(self, question: str) -> str | None:
        if not self.interactive or not sys.stdin.isatty():
            return None
        answer = await _read_answer(
            f"\nRein asks: {shown(question, keep_newlines=True)}\n> ", self.timeout_s
        )
        return answer.rstrip("\n") if answer else None


async def _terminable(*args: Any) -> int:
    """:func:`_run`, a SIGTERM aborting it as Ctrl-C does (exit 143)."""
    with sigterm_cancels() as terminated:
        try:
            return await _run(*args)
        except asyncio.CancelledError:
            if not terminated():
                raise
    print("rein run: terminated (SIGTERM); the run was aborted", file=sys.stderr)
    return EXIT_TERMINATED


async def _run(
    workspace: Path,
    task: str,
    config: ReinConfig,
    as_json: bool,
    assume_yes: bool,
    mode: str | None,
    resume: str | None,
    storage: str | None,
    trust_mcp: bool,
    allow_hooks: bool = False,
    isolated: bool = False,
    allow_hosts: tuple[str, ...] = (),
) -> int:
    try:
        command = prompted(config, workspace, task)
    except CommandError as exc:
        raise ConfigError(str(exc)) from None
    task = command.text
    mode = command.mode(mode) if resume is None else mode or "agent"
    config, said = command.configured(config) if resume is None else (config, None)
    if said is not None:
        print(f"! {said}", file=sys.stderr)
    model = create_model(config.model)
    printer = EventPrinter(as_json=as_json)
    session_mode: Literal["agent", "plan", "explain"] = (
        "explain" if mode == "explain" else "plan" if mode == "plan" else "agent"
    )
    folder = storage or config.storage_path or str(default_storage_path())
    # The sandboxes hide the folder the sessions are stored in.
    config = config.model_copy(update={"storage_path": folder})
    record = await start_isolated(workspace, folder) if isolated else None
    try:
        return await _run_in(
            workspace,
            task,
            config,
            model,
            printer,
            as_json,
            assume_yes,
            session_mode,
            resume,
            storage,
            folder,
            trust_mcp,
            allow_hooks,
            record,
            allow_hosts,
        )
    except BaseException:
        if record is not None:  # an aborted start or a crash of the run: nothing to bring back
            abandon_isolated(record, folder)
        raise


async def _run_in(
    workspace: Path,
    task: str,
    config: ReinConfig,
    model: Model,
    printer: EventPrinter,
    as_json: bool,
    assume_yes: bool,
    session_mode: Literal["agent", "plan", "explain"],
    resume: str | None,
    storage: str | None,
    folder: str,
    trust_mcp: bool,
    allow_hooks: bool,
    record: IsolatedRecord | None,
    allow_hosts: tuple[str, ...] = (),
) -> int:
    async with HeadlessSession(
        record.root if record is not None else workspace,
        model,
        config,
        approver=TerminalApprover(assume_yes, config.approval.timeout_ms / 1000),
        user=TerminalUserChannel(
            interactive=not as_json, timeout_s=config.approval.timeout_ms / 1000
        ),
        mode=session_mode,
        storage=folder,
        resume=resume,
        mcp_ports=TerminalMcpPorts(
            Path(folder), trust_mcp=trust_mcp, timeout_s=config.approval.timeout_ms / 1000
        ),
        hook_ports=TerminalHookPorts(
            Path(folder), allow_hooks=allow_hooks, timeout_s=config.approval.timeout_ms / 1000
        ),
        session_id=record.session_id if record is not None else None,
        allow_hosts=allow_hosts,
    ) as host:
        host.subscribe(printer)
        warning = read_only_warning(workspace)
        if warning:
            print(f"! {warning}", file=sys.stderr)
        for report in [*setup_problems(config, workspace), *host.reports]:
            print(f"! {report}", file=sys.stderr)
        shown = len(host.reports)
        sandbox = unavailable_notice(
            config.approval.command, config.sandbox.bwrap, config.sandbox.also
        )
        if sandbox is not None:
            print(f"! {sandbox}", file=sys.stderr)

        said: list[str] = []

        async def say_analyzers() -> None:
            # Once they started: the model is asked meanwhile.
            await host.analyzers_started()
            said.append(host.analyzers_line())
            print(said[-1], file=sys.stderr)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(say_analyzers)
                result = await host.prompt(task)
        except anyio.get_cancelled_exc_class():
            # Ctrl-C: the run was aborted and stored (exit 130); say how to go on.
            if record is None and not as_json and host.manager.store_error is None:
                explicit = folder if folder != str(default_storage_path()) else None
                print(f"\n{session_line(host.session.id, workspace, explicit)}", file=sys.stderr)
            raise
        session_id = host.session.id
        changes = host.session.last_changes
        reviews = host.session.last_reviews
        pending_runs = await _pending_runs(host.session)
        undoable = await _has_changed_files(host.session)
        store_error = host.manager.store_error
    for report in host.reports[shown:]:  # said during the run or at its end (the store's)
        print(f"! {report}", file=sys.stderr)
    isolated = (
        finish_isolated(record, folder, result.status, as_json, [c.path for c in changes])
        if record is not None
        else None
    )
    if as_json:
        payload: dict[str, Any] = {"result": result_json(session_id, result, changes, reviews)}
        if said:  # which analyzers looked (and which were not found), as on stderr
            payload["analyzers"] = said[-1].removeprefix("analyzers: ")
        if isolated is not None:
            payload["isolated"] = isolated
        print(json.dumps(payload))
        return exit_code(result)
    if isolated is not None:
        return exit_code(result)
    if changes:
        listed = ", ".join(
            f"{c.path} ({c.kind}{f' from {c.renamed_from}' if c.renamed_from else ''})"
            for c in changes
        )
        print(f"Changed: {listed}", file=sys.stderr)
    explicit = folder if folder != str(default_storage_path()) else None
    if pending_runs:
        print(_pending_text(session_id, workspace, pending_runs, explicit), file=sys.stderr)
    if result.status == "waiting":
        print(
            f"\nThe run waits for an answer. Continue it with:\n"
            f"  {_resume_command(session_id, workspace, explicit, 'your answer')}",
            file=sys.stderr,
        )
    if store_error is not None:  # nothing to --resume or undo: said so, not offered
        print(
            f"Session {session_id} was not stored ({store_error}): it cannot be resumed or undone",
            file=sys.stderr,
        )
    else:
        print(session_line(session_id, workspace, explicit, undoable), file=sys.stderr)
    return exit_code(result)


def session_line(
    session_id: str, workspace: Path, storage: str | None = None, undoable: bool = True
) -> str:
    """The last line of ``rein run``'s text output: the session id and the
    commands that need it (``storage``: a storage folder that is not the
    default, which both must be told). ``undoable``: a run of the session
    changed files; otherwise ``rein undo`` would only say there is nothing
    to undo (an explain session, a run that only read), so it is not offered."""
    where = f" --storage {shlex.quote(storage)}" if storage else ""
    ws = shlex.quote(str(workspace))
    line = f"Session {session_id}: continue it with {_resume_command(session_id, workspace, storage, '...')}"
    if not undoable:
        return f"{line} (it changed no file: nothing to undo)"
    return f"{line}; undo it with rein undo --session {session_id}{where} {ws}"


async def _has_changed_files(session: Session) -> bool:
    """Whether a run of ``session`` (this prompt's or an earlier one's)
    changed files: what ``rein undo --session`` needs to have something to
    restore. True when the store cannot say (offered rather than hidden)."""
    capture = session.capture
    if capture is None:
        return False
    try:
        runs = await capture.store.runs(session.id)
    except StoreError:  # reported on its own line
        return True
    return any(r.kind == "run" for r in runs)


def _resume_command(session_id: str, workspace: Path, storage: str | None, text: str) -> str:
    """The ``rein run --resume`` that continues the session (``storage``:
    a storage folder that is not the default)."""
    where = f" --storage {shlex.quote(storage)}" if storage else ""
    return f'rein run --resume {session_id}{where} -w {shlex.quote(str(workspace))} "{text}"'


def read_only_warning(workspace: Path) -> str | None:
    """A warning when this process cannot write into ``workspace`` (a
    read-only mount, permissions): said at the start instead of at the
    first failed write. None when it can."""
    if os.access(workspace, os.W_OK):
        return None
    return (
        f"the workspace {workspace} is read-only for Rein: every edit and every file "
        "a command writes there will fail"
    )


async def _pending_runs(session: Session) -> dict[str, list[tuple[str, str]]]:
    """The last prompt's runs with files pending review: (change, path) per run."""
    reviewer, capture = session.reviewer, session.capture
    if reviewer is None or capture is None or not session.last_reviews:
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for run_id in capture.prompt_runs:
        files: list[tuple[str, str]] = [
            (f.change, f.path) for f in await reviewer.files(run_id) if f.status == "pending"
        ]
        if files:
            out[run_id] = files
    return out


def _pending_text(
    session_id: str,
    workspace: Path,
    runs: dict[str, list[tuple[str, str]]],
    storage: str | None = None,
) -> str:
    """What ``rein run`` says about changes left pending (approval.write
    "review"): they stay applied; how to undo them (``storage``: a storage
    folder that is not the default, which ``rein undo`` must be told)."""
    lines = ['\nPending review (approval.write is "review"): these changes are applied.']
    where = f" --storage {shlex.quote(storage)}" if storage else ""
    for run_id, files in runs.items():
        lines.extend(f"  {change:<9} {path}" for change, path in files)
        lines.append(
            f"  Undo them with: rein undo --session {session_id} --run {run_id}{where} "
            + shlex.quote(str(workspace))
        )
    return "\n".join(lines)


def _absolute(folder: str | None) -> str | None:
    return str(Path(folder).expanduser().absolute()) if folder else folder


def run_task(
    task: str,
    *,
    workspace: str,
    config_file: str | None,
    overrides: dict[str, Any],
    as_json: bool,
    assume_yes: bool,
    mode: str | None,
    resume: str | None = None,
    storage: str | None = None,
    trust_mcp: bool = False,
    allow_hooks: bool = False,
    isolated: bool = False,
    allow_hosts: tuple[str, ...] = (),
) -> int:
    # ``trust_mcp``: the workspace's MCP servers start without asking
    # (TerminalMcpPorts); ``assume_yes`` never trusts them.
    log_to_stderr()
    try:
        config = build_config(config_file, overrides)
        if overrides.get("model.script") and config.model.provider != "replay":
            # Ignored, it left the person reading about a missing API key.
            raise ConfigError(
                f"--script is a replay script: it needs --provider replay "
                f"(the provider is {config.model.provider})"
            )
        root = Path(workspace).resolve()
        if not root.is_dir():
            raise ConfigError(f"the workspace {root} is not a folder")
        # Absolute: the sandbox hides the storage folder and an isolated
        # copy is made under it from other folders than this process's (a
        # relative one broke both: every command refused, the copy inside
        # the person's repository).
        storage = _absolute(storage)
        config = config.model_copy(update={"storage_path": _absolute(config.storage_path)})
        if isolated and resume is not None:
            raise ConfigError(
                "--isolated starts a new session in its own copy: it cannot --resume one"
            )
        if mode is not None and resume is not None:
            # It was ignored: a stored session runs in the mode it was made in.
            raise ConfigError("--mode is for a new session: a resumed session keeps its own mode")
        if allow_hosts:
            if resume is not None:
                raise ConfigError("--allow-host is for a new session: it cannot --resume one")
            try:
                check_hosts(list(allow_hosts))
            except ValueError as exc:
                raise ConfigError(f"--allow-host: {exc}") from None
        return anyio.run(
            _terminable,
            root,
            task,
            config,
            as_json,
            assume_yes,
            mode,
            resume,
            storage,
            trust_mcp,
            allow_hooks,
            isolated,
            allow_hosts,
        )
    except (ConfigError, StoreError, GitError) as exc:
        print(f"rein run: {exc}", file=sys.stderr)
        return 2
