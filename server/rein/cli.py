"""The ``rein`` command line: serve | run | apply | acp | demo | mock-server |
eval | bench | fuzz | schema | sessions | undo | mcp | doctor."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rein import __version__

__all__ = ["main"]


def _cmd_schema(args: argparse.Namespace) -> int:
    from rein.harness.events import event_json_schema

    if args.what == "events":
        if args.write_docs:
            from pathlib import Path

            from rein.docs_gen import write_docs

            write_docs(Path(args.write_docs))
            return 0
        print(json.dumps(event_json_schema(), indent=2, sort_keys=True))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from rein.bench.cli import main

    return main(args)


def _cmd_fuzz(args: argparse.Namespace) -> int:
    try:
        from rein.fuzz import run_fuzz
    except ImportError as exc:  # hypothesis is in the dev extra
        print(f"rein fuzz needs the dev extra (pip install 'rein[dev]'): {exc}", file=sys.stderr)
        return 2
    report = run_fuzz(args.cases, seed=args.seed)
    print(json.dumps(report.json(), indent=2))
    for failure in report.failures[10:]:
        print(failure, file=sys.stderr)
    return 0 if not report.failures and report.alive else 1


def _cmd_mock_server(args: argparse.Namespace) -> int:
    from rein.providers.mock_server import run_mock_server

    return run_mock_server(args.host, args.port, args.scenario, args.delay)


def _cmd_demo(args: argparse.Namespace) -> int:
    from rein.demo import run_demo

    return int(run_demo(keep=args.keep, as_json=args.json))


def _cmd_run(args: argparse.Namespace) -> int:
    # Refused before the headless stack is imported (a typo costs no start-up).
    root = Path(args.workspace).resolve()
    if not root.is_dir():
        print(f"rein run: the workspace {root} is not a folder", file=sys.stderr)
        return 2
    from rein.headless.run import run_task

    overrides = _model_overrides(args)
    return run_task(
        args.task,
        workspace=args.workspace,
        config_file=args.config,
        overrides=overrides,
        as_json=args.json,
        assume_yes=args.yes,
        trust_mcp=args.trust_mcp,
        allow_hooks=args.allow_hooks,
        mode=args.mode,
        resume=args.resume,
        storage=args.storage,
        isolated=args.isolated,
        allow_hosts=tuple(args.allow_host or ()),
    )


def _cmd_apply(args: argparse.Namespace) -> int:
    from rein.headless.isolated import apply_command

    return apply_command(
        args.session, args.storage, args.config, args.branch, args.discard, args.list, args.hunks,
        as_json=args.json,
    )  # fmt: skip


def _model_overrides(args: argparse.Namespace) -> dict[str, object]:
    return {
        "model.provider": args.provider,
        "model.model": args.model,
        "model.baseUrl": args.base_url,
        "model.script": args.script,
        "harness.maxRepairAttempts": args.max_repair_attempts,
        "harness.maxModelTurnsPerRun": args.max_turns,
    }


def _cmd_acp(args: argparse.Namespace) -> int:
    import logging

    from rein.harness.redaction import redact_logs

    logging.basicConfig(
        level=getattr(logging, args.log_level.upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact_logs()
    # Imported here: rein serve and rein run never load the ACP SDK.
    from rein.acp.main import run_acp

    return run_acp(args.config, _model_overrides(args), args.storage)


def _cmd_mcp(args: argparse.Namespace) -> int:
    from rein.headless.mcp_list import mcp_list_command

    return mcp_list_command(
        Path(args.root), args.config, args.storage, args.json, args.trust_mcp, not args.no_start
    )


def _cmd_doctor(args: argparse.Namespace) -> int:
    from rein.headless.doctor import doctor_command

    return doctor_command(Path(args.root), args.config, as_json=args.json)


def _cmd_serve(args: argparse.Namespace) -> int:
    import logging

    from rein.harness.redaction import redact_logs
    from rein.lsp import create_server

    logging.basicConfig(
        level=getattr(logging, args.log_level.upper(), logging.INFO),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact_logs()  # no secret in a log line, pygls's own included
    server = create_server(max_message_bytes=args.max_message_bytes)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return server.exit_code


def _cmd_sessions(args: argparse.Namespace) -> int:
    from rein.headless.session_list import list_sessions

    folder = _storage(args.storage, "rein sessions", "")
    return 2 if folder is None else list_sessions(folder, as_json=args.json)


def _cmd_undo(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    if not root.is_dir():
        print(
            f"rein undo: the workspace {root} is not a folder; nothing was changed", file=sys.stderr
        )
        return 2
    from rein.headless.undo import UndoArgs, undo_command

    folder = _storage(args.storage, "rein undo", "; nothing was changed")
    if folder is None:
        return 2
    return undo_command(
        UndoArgs(
            root=root,
            storage=folder,
            session_id=args.session,
            run_id=args.run,
            turn=args.turn,
            paths=tuple(args.path) if args.path else None,
            as_json=args.json,
        )
    )


def _storage(flag: str | None, command: str, after: str) -> str | None:
    """The store's folder as ``rein run`` finds it (:func:`storage_folder`);
    None once a configuration it cannot read is said on stderr."""
    if flag:
        return flag  # the configuration is not read (nor its imports paid)
    from rein.config_file import storage_folder
    from rein.harness.errors import ConfigError

    try:
        return storage_folder(None)
    except ConfigError as exc:
        print(f"{command}: {exc}{after}", file=sys.stderr)
        return None


def _cmd_eval(args: argparse.Namespace) -> int:
    from rein.evals import main as eval_main

    return eval_main(args.scenario or None, args.json, mutated=args.mutated)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


_ALLOW_HOOKS_HELP = (
    "allow the hooks the workspace defines (.claude/settings.json, .claude/settings.local.json) "
    "to run, for this run only; without it, and without a terminal to ask on, they do not run"
)
_TRUST_MCP_HELP = (
    "trust the MCP servers the workspace defines (.vscode/mcp.json, .mcp.json) without "
    "asking; without it, and without a terminal to ask on, they do not start"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rein", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rein {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("schema", help="print a JSON Schema")
    p.add_argument("what", choices=["events"])
    p.add_argument("--write-docs", metavar="DOCS_DIR", help="regenerate the event reference there")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("bench", help="run benchmarks (figures in docs/performance.md)")
    p.add_argument(
        "what",
        choices=[
            "all",
            "core",
            "core-one",
            "providers",
            "gates",
            "tests",
            "lsp",
            "checkpoints",
            "acp",
            "sandbox",
            "isolated",
            "navigation",
        ],
    )
    p.add_argument(
        "n",
        nargs="?",
        default=None,
        help="core: sizes, e.g. 50,200,1000; acp, sandbox: samples; isolated: runs; navigation: symbols per project",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    p.add_argument(
        "--corpus",
        action="store_true",
        help="gates, tests: seeded edits in real projects; navigation: references vs grep",
    )
    p.add_argument(
        "--projects",
        help="--corpus: NAME==VERSION,... (gates: sympy, rich, httpx, typescript, go, c, shell; tests: toolz, more-itertools, attrs; navigation: NAME,... of sympy, click, rxjs)",
    )
    p.add_argument("--edits", help="--corpus: edits per project (default: per project)")
    p.add_argument("--strict", action="store_true", help="--corpus: exit 1 when a goal is missed")
    p.add_argument(
        "--turn-s",
        type=float,
        default=None,
        help="tests --corpus: the model's turn before each verdict, in seconds, while the "
        "gate judges ahead (default 1.0; 0: the judgement's own time)",
    )
    p.add_argument(
        "--probes",
        action="store_true",
        help="gates: issue 32's probes on click, flask, attrs, requests, django (--projects: some)",
    )
    p.add_argument(
        "--cold",
        action="store_true",
        help="--corpus: each case in a fresh session, timed against the command-line tools",
    )
    p.add_argument(
        "--sessions", type=int, default=0, help="lsp: load mode, this many sessions at once"
    )
    p.add_argument("--turns", type=int, default=200, help="lsp load mode: tool turns per session")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser(
        "fuzz", help="fuzz a real `rein serve` over stdio (figures in docs/performance.md)"
    )
    p.add_argument("--cases", type=_positive_int, default=1000, help="cases to run (default 1000)")
    p.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    p.set_defaults(func=_cmd_fuzz)

    p = sub.add_parser("serve", help="the language server (stdio; --tcp for debugging)")
    p.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead")
    p.add_argument("--log-level", default="warning", help="stderr log level (default: warning)")
    p.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=64 * 1024 * 1024,
        help="refuse a message whose Content-Length is over this (default: 64 MiB)",
    )
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser("run", help="run one task headless in a workspace")
    p.add_argument("task", help="what the agent should do")
    p.add_argument("--workspace", "-w", default=".", help="the project folder (default: .)")
    p.add_argument("--config", help="a JSON/YAML file with the rein section (or REIN_CONFIG)")
    p.add_argument("--provider", choices=["openai", "anthropic", "replay"])
    p.add_argument("--model", help="model name (or REIN_MODEL)")
    p.add_argument("--base-url", help="API base URL (or REIN_BASE_URL)")
    p.add_argument("--script", help="replay script (provider replay)")
    p.add_argument(
        "--mode",
        choices=["agent", "plan", "explain"],
        default=None,
        help="a new session's mode (default: a command's own mode, else agent); a resumed "
        "session keeps its own",
    )
    p.add_argument("--max-repair-attempts", type=int)
    p.add_argument("--max-turns", type=int)
    p.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="approve every tool call (it does not trust the workspace's MCP servers: "
        "see --trust-mcp)",
    )
    p.add_argument("--trust-mcp", action="store_true", help=_TRUST_MCP_HELP)
    p.add_argument("--allow-hooks", action="store_true", help=_ALLOW_HOOKS_HELP)
    p.add_argument("--json", action="store_true", help="events and the result as JSON lines")
    p.add_argument(
        "--resume",
        metavar="SESSION_ID",
        help="continue a stored session: the task is the answer to its question, or the next task",
    )
    p.add_argument("--storage", help="the session store's folder (default: the user data dir)")
    p.add_argument(
        "--isolated",
        action="store_true",
        help="run in a copy of the folder (a git worktree); bring it back with rein apply",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST",
        help="a host (or a preset: pypi, npm, ...) this session's sandboxed commands may "
        "reach besides sandbox.network (repeatable; a new session only)",
    )
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "apply",
        help="bring an isolated run's changes back into its folder",
        description="Apply the hunks of an isolated run that apply cleanly to the folder as it "
        "is now; conflicts are printed with both sides and not applied. Exit 0: all applied; "
        "3: conflicts left; 2: refused.",
    )
    p.add_argument("session", metavar="SESSION_ID", help="the isolated session")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--branch", metavar="NAME", help="commit it on a new branch; apply nothing")
    how.add_argument("--discard", action="store_true", help="remove it; apply nothing")
    how.add_argument("--list", action="store_true", help="list its hunks (ids); apply nothing")
    how.add_argument("--hunks", metavar="ID,...", help="apply only these hunks (--list's ids)")
    p.add_argument("--json", action="store_true", help="the result as one JSON object")
    p.add_argument(
        "--storage",
        help="the storage folder (default: the configuration's storagePath, else the user data dir)",
    )
    p.add_argument(
        "--config",
        help="a JSON/YAML file with the rein section (or REIN_CONFIG): the folder's gates",
    )
    p.set_defaults(func=_cmd_apply)

    p = sub.add_parser(
        "acp",
        help="the Agent Client Protocol agent over stdio (Zed, JetBrains, Neovim, Emacs)",
        description="Serve one ACP client over stdin/stdout: its sessions are rein run's "
        "(the same store, configuration and flags). Logs go to stderr.",
    )
    p.add_argument("--config", help="a JSON/YAML file with the rein section (or REIN_CONFIG)")
    p.add_argument("--provider", choices=["openai", "anthropic", "replay"])
    p.add_argument("--model", help="model name (or REIN_MODEL)")
    p.add_argument("--base-url", help="API base URL (or REIN_BASE_URL)")
    p.add_argument("--script", help="replay script (provider replay)")
    p.add_argument("--max-repair-attempts", type=int)
    p.add_argument("--max-turns", type=int)
    p.add_argument("--storage", help="the session store's folder (default: the user data dir)")
    p.add_argument("--log-level", default="warning", help="stderr log level (default: warning)")
    p.set_defaults(func=_cmd_acp)

    p = sub.add_parser("mcp", help="MCP tool servers")
    mcp = p.add_subparsers(dest="mcp_command", required=True)
    p = mcp.add_parser(
        "list",
        help="the configured MCP servers: source, command line or URL, state and tools, "
        "and why any is skipped",
        description="Read rein.mcp.servers (from --config), .vscode/mcp.json and .mcp.json of "
        "ROOT and list the servers; start each once to list its tools and state, then stop "
        "them. A workspace-defined server not yet trusted is asked about on the terminal "
        "(without one it is listed as skipped). Exit 1 when a file is invalid or a server "
        "failed to start.",
    )
    p.add_argument(
        "--no-start", action="store_true", help="only read the configuration; start nothing"
    )
    p.add_argument("root", nargs="?", default=".", help="the workspace folder (default: .)")
    p.add_argument("--config", help="a JSON/YAML file with the rein section (or REIN_CONFIG)")
    p.add_argument("--json", action="store_true", help="the listing as one JSON object")
    p.add_argument(
        "--storage",
        help="the storage folder (default: the configuration's storagePath, else the user data dir)",
    )
    p.add_argument("--trust-mcp", action="store_true", help=_TRUST_MCP_HELP)
    p.set_defaults(func=_cmd_mcp)

    p = sub.add_parser(
        "doctor",
        help="the analyzer servers and your setup (hooks, skills, agents, commands, "
        "instruction files, MCP servers): found or not, where, why not used",
        description="List every analyzer server (the presets and gates.analyzer.servers): "
        "found or not (PATH, the project's node_modules/.bin, next to Rein's Python, Rein's "
        "tool cache), its version, whether ROOT uses it, and the command that installs a "
        "missing one; then the hooks, skills, custom agents, commands, instruction files and "
        "MCP servers Rein finds for ROOT, where each comes from, whether it is used, and why "
        "not (invalid, not trusted, off). Exit 0; 2: ROOT is not a folder or the "
        "configuration is invalid (nothing listed).",
    )
    p.add_argument("root", nargs="?", default=".", help="the workspace folder (default: .)")
    p.add_argument("--config", help="a JSON/YAML file with the rein section (or REIN_CONFIG)")
    p.add_argument("--json", action="store_true", help="the listing as one JSON object")
    p.set_defaults(func=_cmd_doctor)

    p = sub.add_parser(
        "mock-server", help="an OpenAI/Anthropic-compatible server replaying a scenario"
    )
    # The same flags as ``python -m rein.providers.mock_server``; declared here so
    # that building the parser imports nothing heavy (rein serve starts fast).
    p.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (0: any free port)")
    p.add_argument("--scenario", default=None, help="replay script (YAML) to serve")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before every reply")
    p.set_defaults(func=_cmd_mock_server)

    p = sub.add_parser("sessions", help="list the stored sessions, newest first")
    p.add_argument(
        "--storage",
        help="the storage folder (default: the configuration's storagePath, else the user data dir)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_sessions)

    p = sub.add_parser(
        "undo",
        help="restore the workspace to before a run (or a turn) of a session",
        description="Restore the files a run changed (from --turn on, and every later run of "
        "the session) as they were before it. A file changed since the run is left as it is "
        "and reported with a diff. Exit 0: all restored; 3: conflicts or skipped files; "
        "2: refused, nothing changed.",
    )
    p.add_argument("root", nargs="?", default=".", help="the workspace folder (default: .)")
    p.add_argument("--session", help="the session (default: the latest with checkpoints here)")
    p.add_argument("--run", help="the run (default: the session's latest); a restore id undoes it")
    p.add_argument("--turn", type=_positive_int, help="restore to before this turn of the run")
    p.add_argument("--path", action="append", metavar="P", help="only this file (repeatable)")
    p.add_argument("--json", action="store_true", help="the result as one JSON object")
    p.add_argument(
        "--storage",
        help="the storage folder (default: the configuration's storagePath, else the user data dir)",
    )
    p.set_defaults(func=_cmd_undo)

    p = sub.add_parser("eval", help="behavioural evals of the harness (exit 1 on any failure)")
    p.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    p.add_argument("--json", metavar="OUT", help="write the scores to this JSON file")
    p.add_argument(
        "--mutated",
        action="store_true",
        help="switch off what each scenario scores: every scenario must then fail",
    )
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser("demo", help="a whole scripted run over a copy of examples/, offline")
    p.add_argument("--keep", action="store_true", help="keep the workspace copy")
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
