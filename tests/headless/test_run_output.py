"""What ``rein run``'s text output tells the person (issue 32 item 9): the
session id with the commands that need it, at the end; a workspace it
cannot write, at the start. Real ``rein run`` processes, replay model."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.forkserver import REIN

CONFIG = "gates: {analyzer: {enabled: false}}\n"


def rein(*args: str, wrap: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(wrap or []), *REIN, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_args(tmp_path: Path, ws: Path, script: str) -> list[str]:
    (tmp_path / "s.yaml").write_text(script)
    (tmp_path / "rein.yaml").write_text(CONFIG)
    return [
        "run", "task", "-w", str(ws), "--provider", "replay", "--script", str(tmp_path / "s.yaml"),
        "--config", str(tmp_path / "rein.yaml"), "--storage", str(tmp_path / "store"), "--yes",
    ]  # fmt: skip


def test_the_last_line_names_the_session_and_its_undo_command_works(tmp_path: Path) -> None:
    # Defect: the text output never printed the session id that --resume
    # and `rein undo --session` need.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    script = """
turns:
  - tool_calls:
      - name: write_file
        arguments: {path: app.py, content: "x = 2\\n"}
  - text: done
"""
    out = rein(*run_args(tmp_path, ws, script))
    assert out.returncode == 0, out.stderr
    assert (ws / "app.py").read_text() == "x = 2\n"
    last = out.stderr.splitlines()[-1]
    assert last.startswith("Session ")
    session_id = last.split()[1].rstrip(":")
    store = shlex.quote(str(tmp_path / "store"))
    assert f"rein run --resume {session_id} --storage {store} -w " in last
    assert "read-only" not in out.stderr
    # The printed undo command is the one that undoes the run.
    undo = shlex.split(last.split("undo it with ", 1)[1])
    assert undo[:2] == ["rein", "undo"] and undo[2:4] == ["--session", session_id]
    done = rein(*undo[1:])
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "app.py").read_text() == "x = 1\n"
    # Defect: the command that undoes the restore lacked --storage and the
    # workspace, so, as printed, it found no session. Run from elsewhere.
    redo = shlex.split(done.stdout.splitlines()[-1].split("undo this restore with: ", 1)[1])
    again = subprocess.run(
        [*REIN, *redo[1:]], capture_output=True, text=True, timeout=120,
        cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert (ws / "app.py").read_text() == "x = 2\n"
    # Defect: --resume from another folder (-w defaults to .) ran the
    # session's next task on that folder's files.
    other = tmp_path / "other"
    other.mkdir()
    # Defect: undo of the session in another folder restored that
    # folder's files to the run's "before" (and recorded it as a restore).
    (other / "app.py").write_text("x = 2\n")
    elsewhere = rein(
        "undo", "--session", session_id, "--storage", str(tmp_path / "store"), str(other)
    )
    assert elsewhere.returncode == 2, elsewhere.stdout + elsewhere.stderr
    assert f"no run that changed files in {other} (its runs changed {ws}" in elsewhere.stderr
    assert (other / "app.py").read_text() == "x = 2\n"
    args = run_args(tmp_path, other, "turns:\n  - text: done\n")
    moved = rein(*args, "--resume", session_id)
    assert moved.returncode == 2, moved.stdout + moved.stderr
    assert moved.stderr.strip() == (
        f"rein run: session {session_id} works on {ws}, not {other}: resume it with -w {ws}"
    )


def test_a_read_only_workspace_is_named_at_the_start(tmp_path: Path) -> None:
    # Defect: a read-only workspace was discovered only by the first failed write.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    wrap: list[str] | None = None
    if os.geteuid() == 0:
        # Root writes through permissions: a read-only mount (in a mount
        # namespace of its own) is what binds it.
        if shutil.which("unshare") is None:
            pytest.skip("running as root without unshare: no read-only mount to test with")
        probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30)
        if probe.returncode != 0:
            pytest.skip("running as root and unshare -rm is refused here")
        wrap = ["unshare", "-rm", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(ws)]
    else:
        ws.chmod(0o555)
    try:
        out = rein(*run_args(tmp_path, ws, "turns:\n  - text: done\n"), wrap=wrap)
    finally:
        ws.chmod(0o755)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    # Said at the start; the analyzers are named once they started.
    assert [line for line in lines if line.startswith("analyzers: ")] == [lines[1]]
    assert lines[0] == (
        f"! the workspace {ws.resolve()} is read-only for Rein: every edit and every file "
        "a command writes there will fail"
    )


def test_the_json_result_holds_the_session_id_where_the_docs_say(tmp_path: Path) -> None:
    # Defect: docs/configuration.md named `session_id`; the result says `sessionId`.
    ws = tmp_path / "ws"
    ws.mkdir()
    out = rein(*run_args(tmp_path, ws, "turns:\n  - text: done\n"), "--json")
    assert out.returncode == 0, out.stderr
    docs = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    named = docs.split("With `--json` the id is the last line's `", 1)[1].split("`", 1)[0]
    value: object = json.loads(out.stdout.splitlines()[-1])
    for key in named.split("."):
        assert isinstance(value, dict) and key in value, (named, value)
        value = value[key]
    assert isinstance(value, str) and value.startswith("ses_")


def test_the_json_output_names_the_analyzers_as_stderr_does(tmp_path: Path) -> None:
    """With --json the analyzers line was on stderr only: a program reading
    the result could not tell which analyzers looked (or were not found)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    out = rein(*run_args(tmp_path, ws, "turns:\n  - text: done\n"), "--json")
    assert out.returncode == 0, out.stderr
    [line] = [line for line in out.stderr.splitlines() if line.startswith("analyzers: ")]
    payload = json.loads(out.stdout.splitlines()[-1])
    assert payload["analyzers"] == line.removeprefix("analyzers: ")
    assert payload["analyzers"] == "off (gates.analyzer.enabled is false)"  # CONFIG's


def test_a_waiting_run_says_how_to_answer_with_its_storage(tmp_path: Path) -> None:
    # Defect: "Continue it with: rein run --resume S -w DIR" left out the
    # run's --storage, so the printed command found no session.
    ws = tmp_path / "ws"
    ws.mkdir()
    script = """
turns:
  - tool_calls:
      - name: ask_user
        arguments: {question: "Which colour?"}
  - text: unreachable
"""
    out = rein(*run_args(tmp_path, ws, script))
    assert out.returncode == 4, out.stderr
    lines = out.stderr.splitlines()
    at = lines.index("The run waits for an answer. Continue it with:")
    session_id = lines[-1].split()[1].rstrip(":")
    store = tmp_path / "store"
    assert lines[at + 1] == (
        f'  rein run --resume {session_id} --storage {store} -w {ws} "your answer"'
    )


def test_a_store_that_cannot_be_made_is_said_once_and_no_resume_is_offered(
    tmp_path: Path,
) -> None:
    # Defect: the reason was printed three times (two log lines and the
    # report), and the last line offered --resume and undo commands for a
    # session that was never stored.
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "file").write_text("")
    args = run_args(tmp_path, ws, "turns:\n  - text: done\n")
    at = args.index("--storage") + 1
    args[at] = str(tmp_path / "file" / "store")
    out = rein(*args)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("cannot create the session folder") == 2, out.stderr
    assert out.stderr.splitlines()[0].startswith("! sessions are not stored: cannot create")
    last = out.stderr.splitlines()[-1]
    assert last.startswith("Session ses_") and "was not stored (cannot create" in last
    assert last.endswith("): it cannot be resumed or undone")


def test_a_script_without_the_replay_provider_is_refused_naming_both(tmp_path: Path) -> None:
    # Defect: --script was ignored and the run failed on the openai
    # provider's missing API key.
    args = run_args(tmp_path, tmp_path, "turns:\n  - text: done\n")
    at = args.index("--provider")
    out = rein(*args[:at], *args[at + 2 :])
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        "rein run: --script is a replay script: it needs --provider replay (the provider is openai)"
    )


def test_a_session_that_changed_nothing_offers_no_undo(tmp_path: Path) -> None:
    # Defect: an explain run (which cannot change a file) and a run that
    # only read ended with "undo it with rein undo ...", which then said
    # "has no run that changed files" and exited 2.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    out = rein(*run_args(tmp_path, ws, "turns:\n  - text: it sets x\n"), "--mode", "explain")
    assert out.returncode == 0, out.stderr
    last = out.stderr.splitlines()[-1]
    assert last.startswith("Session ") and "rein run --resume" in last
    assert "rein undo" not in out.stderr
    assert last.endswith("(it changed no file: nothing to undo)")
    # A resumed run that only reads: still nothing to undo.
    session_id = last.split()[1].rstrip(":")
    (tmp_path / "s.yaml").write_text(
        "turns:\n  - tool_calls:\n      - name: read_file\n        arguments: {path: app.py}\n"
        "  - text: read\n"
    )
    read = rein(*run_args(tmp_path, ws, (tmp_path / "s.yaml").read_text()), "--resume", session_id)
    assert read.returncode == 0, read.stderr
    assert "rein undo" not in read.stderr.splitlines()[-1]


def test_mode_with_resume_is_refused_not_ignored(tmp_path: Path) -> None:
    # Defect: `--resume S --mode plan` ran S in its stored mode (agent),
    # saying nothing about the flag.
    out = rein(*run_args(tmp_path, tmp_path, "turns: []\n"), "--resume", "ses_x", "--mode", "plan")
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        "rein run: --mode is for a new session: a resumed session keeps its own mode"
    )


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_with_130_and_the_session_line(tmp_path: Path) -> None:
    # Defect: an interrupted run ended with no word of its session, which is
    # stored (aborted) and can be continued or undone.
    ws = tmp_path / "ws"
    ws.mkdir()
    script = (
        "turns:\n  - tool_calls:\n      - {name: run_command, arguments: {command: sleep 60}}\n"
    )
    # A foreground process on a terminal: SIGINT at its default, whatever
    # this suite inherited (a suite started in the background by a shell
    # without job control has it ignored, and Python then keeps it so).
    proc = subprocess.Popen(
        [*REIN, *run_args(tmp_path, ws, script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=_sigint_default,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the command is running once its call is printed
            if "⚙ run_command" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    last = err.splitlines()[-1]
    assert last.startswith("Session ses_") and "rein run --resume ses_" in last, err
    # Stored as aborted (it stayed "running": `rein undo` refused it as
    # running until the next `rein run` marked it interrupted).
    db = sqlite3.connect(tmp_path / "store" / "sessions.db")
    try:
        assert db.execute("SELECT status FROM sessions").fetchall() == [("aborted",)]
        runs = db.execute("SELECT status, reason FROM runs").fetchall()
        assert runs == [("aborted", "cancelled by the client")]
    finally:
        db.close()


def test_a_closed_stdout_is_said_once_and_the_run_goes_on(tmp_path: Path) -> None:
    # Defect: `rein run --json | head` printed a BrokenPipeError traceback
    # for every event after the reader left.
    ws = tmp_path / "ws"
    ws.mkdir()
    go = ws / "go"
    script = (
        "turns:\n  - tool_calls:\n      - name: run_command\n"
        "        arguments: {command: 'while [ ! -e go ]; do sleep 0.05; done; echo ran > ran'}\n"
        "  - text: done\n"
    )
    proc = subprocess.Popen(
        [*REIN, *run_args(tmp_path, ws, script), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # up to the command's start, then the reader leaves
            if json.loads(line)["type"] == "tool_call_start":
                break
        proc.stdout.close()
        go.write_text("")
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert err.count("! standard output was closed: the run's events are not printed") == 1
    assert (ws / "ran").read_text() == "ran\n"  # the run went on


def test_a_failed_session_end_hook_is_said_once(tmp_path: Path) -> None:
    # Defect: its hook line, then the log's warning saying it again.
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    hook = {"type": "command", "command": "printf END-%s FAILED >&2; exit 1"}
    (ws / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionEnd": [{"hooks": [hook]}]}})
    )
    out = rein(*run_args(tmp_path, ws, "turns:\n  - text: done\n"), "--allow-hooks")
    assert out.returncode == 0, out.stderr
    said = out.stdout + out.stderr
    assert said.count("END-FAILED") == 1, said
    assert (
        "SessionEnd hook `printf END-%s FAILED >&2; exit 1` (.claude/settings.json) failed" in said
    )


def test_sessions_and_undo_find_what_run_stored_where_rein_config_says(tmp_path: Path) -> None:
    # Defect: `rein run` stored its sessions in REIN_CONFIG's storagePath,
    # but `rein sessions` and `rein undo` looked only in --storage or the
    # default folder: "no sessions", "no session has checkpoints".
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    store = tmp_path / "configured-store"
    (tmp_path / "rein.yaml").write_text(f"rein:\n  storagePath: {store}\n  {CONFIG}")
    (tmp_path / "s.yaml").write_text(
        "turns:\n  - tool_calls:\n      - name: write_file\n"
        '        arguments: {path: app.py, content: "x = 2\\n"}\n  - text: done\n'
    )
    env = {**os.environ, "REIN_CONFIG": str(tmp_path / "rein.yaml")}

    def rein_env(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*REIN, *args], capture_output=True, text=True, timeout=120,
            env=env, cwd=tmp_path,
        )  # fmt: skip

    run = rein_env(
        "run", "task", "-w", str(ws), "--provider", "replay", "--script",
        str(tmp_path / "s.yaml"), "--yes",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (store / "sessions.db").is_file()
    listed = rein_env("sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    assert json.loads(line)["title"] == "task"
    undone = rein_env("undo", str(ws))
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert (ws / "app.py").read_text() == "x = 1\n"
    # `rein apply` too (it read --config or REIN_CONFIG, then ignored its
    # storagePath): an isolated run's change, brought back.
    isolated = rein_env(
        "run", "task", "-w", str(ws), "--provider", "replay", "--script",
        str(tmp_path / "s.yaml"), "--yes", "--json", "--isolated",
    )  # fmt: skip
    assert isolated.returncode == 0, isolated.stderr
    session = json.loads(isolated.stdout.splitlines()[-1])["result"]["sessionId"]
    assert (ws / "app.py").read_text() == "x = 1\n"
    applied = rein_env("apply", session)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (ws / "app.py").read_text() == "x = 2\n"
    # A configuration it cannot read is said, never replaced by the default.
    (tmp_path / "rein.yaml").write_text("rein: [1]\n")
    broken = rein_env("sessions")
    assert broken.returncode == 2
    assert broken.stderr.startswith("rein sessions: invalid configuration file")
