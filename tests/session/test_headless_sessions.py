"""``rein run`` has what the editor has: the store (its sessions are listed
by ``rein sessions``), a waiting ``ask_user`` (exit 4) resumed with
``rein run --resume``, and the ``task`` subagent tool."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.forkserver import REIN

#: Real ``rein run`` and ``rein sessions`` processes.
pytestmark = pytest.mark.e2e


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REIN, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _replay(tmp_path: Path, turns: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``rein run`` with the replay model playing ``turns`` (YAML) and the
    store in tmp_path."""
    script = tmp_path / "s.yaml"
    script.write_text(f"turns:\n{turns}")
    return _run(
        "run",
        *args,
        "-w",
        str(tmp_path),
        "--provider",
        "replay",
        "--script",
        str(script),
        "--storage",
        str(tmp_path / "store"),
    )


def _sessions(storage: Path) -> list[dict[str, object]]:
    out = _run("sessions", "--storage", str(storage), "--json")
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def _result(stdout: str) -> dict[str, object]:
    last = [line for line in stdout.splitlines() if line.strip()][-1]
    result = json.loads(last)["result"]
    assert isinstance(result, dict)
    return result


def test_a_waiting_question_exits_4_and_resume_answers_it(tmp_path: Path) -> None:
    storage = tmp_path / "store"
    ask = tmp_path / "ask.yaml"
    ask.write_text(
        "turns:\n"
        "  - tool_calls:\n"
        "      - name: ask_user\n"
        "        arguments: {question: 'Which colour?'}\n"
        "    usage: {input_tokens: 100, output_tokens: 10}\n"
    )
    answer = tmp_path / "answer.yaml"
    answer.write_text(
        "turns:\n"
        "  - expect:\n"
        "      last_role: tool\n"
        "      last_message_contains: 'The person answered: blue'\n"
        "    text: 'Blue it is.'\n"
        "    usage: {input_tokens: 200, output_tokens: 5}\n"
    )
    common = ["-w", str(tmp_path), "--provider", "replay", "--storage", str(storage)]
    first = _run("run", "paint it", *common, "--script", str(ask), "--json")
    assert first.returncode == 4, first.stdout + first.stderr
    waiting = _result(first.stdout)
    assert waiting["status"] == "waiting"
    session_id = str(waiting["sessionId"])
    listed = _sessions(storage)
    assert [(s["id"], s["status"]) for s in listed] == [(session_id, "waiting")]

    second = _run("run", "blue", *common, "--script", str(answer), "--resume", session_id, "--json")
    assert second.returncode == 0, second.stdout + second.stderr
    done = _result(second.stdout)
    assert done["sessionId"] == session_id
    assert done["text"] == "Blue it is."
    # One wire spelling for usage, as in rein/prompt.
    assert done["usage"] == {
        "inputTokens": 200,
        "outputTokens": 5,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
    }
    (only,) = _sessions(storage)
    assert only["id"] == session_id and only["status"] == "completed"
    assert only["turns"] == 2
    assert only["usage"] == {
        "inputTokens": 300,
        "outputTokens": 15,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
    }


def test_resume_of_an_unknown_session_is_a_clear_error(tmp_path: Path) -> None:
    out = _replay(tmp_path, "  - text: hi\n", "x", "--resume", "ses_nope")
    assert out.returncode == 2
    assert "no stored session 'ses_nope'" in out.stderr


def test_headless_runs_offer_the_task_tool(tmp_path: Path) -> None:
    turns = "  - expect:\n      tools_include: [task, edit_file, run_command]\n    text: done\n"
    out = _replay(tmp_path, turns, "x", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert _result(out.stdout)["status"] == "completed"


def test_a_plan_waits_and_resume_finishes_its_step_with_the_work_done_before(
    tmp_path: Path,
) -> None:
    """``rein run --mode plan``: a step that read a file and then asked ends
    "waiting" (exit 4); ``--resume`` answers it in a new process and the
    step completes on the work done before the wait."""
    storage = tmp_path / "store"
    (tmp_path / "app.py").write_text("x = 1\n")
    first = tmp_path / "first.yaml"
    first.write_text(
        "turns:\n"
        "  - tool_calls:\n"
        "      - name: submit_plan\n"
        "        arguments: {steps: [{id: s1, description: read app.py and ask}]}\n"
        "  - tool_calls:\n"
        "      - name: read_file\n"
        "        arguments: {path: app.py}\n"
        "  - tool_calls:\n"
        "      - name: ask_user\n"
        "        arguments: {question: 'Keep x?'}\n"
    )
    second = tmp_path / "second.yaml"
    second.write_text(
        "turns:\n"
        "  - expect: {last_message_contains: 'The person answered: keep it'}\n"
        "    tool_calls:\n"
        "      - name: complete_step\n"
        "        arguments: {step_id: s1, success: true, summary: 'x stays 1'}\n"
    )
    # app.py would start the analyzers in both processes; no verdict is asked
    # about here (nothing changes), so none starts.
    config = tmp_path / "rein.yaml"
    config.write_text("rein:\n  gates:\n    analyzer:\n      enabled: false\n")
    common = [
        "-w", str(tmp_path), "--provider", "replay", "--storage", str(storage), "--json",
        "--config", str(config),
    ]  # fmt: skip
    out = _run("run", "check x", "--mode", "plan", *common, "--script", str(first))
    assert out.returncode == 4, out.stdout + out.stderr
    session_id = str(_result(out.stdout)["sessionId"])
    out = _run("run", "keep it", *common, "--script", str(second), "--resume", session_id)
    assert out.returncode == 0, out.stdout + out.stderr
    done = _result(out.stdout)
    assert done["status"] == "completed" and done["text"] == "x stays 1"


def test_a_subagents_question_survives_a_restart_and_resumes_the_subagent(
    tmp_path: Path,
) -> None:
    """Issue 16: the child's unanswered ask_user makes the parent wait (exit
    4); a new process (the store is the only link) resumes the child with
    the answer, the child finishes its work, then the parent goes on."""
    storage = tmp_path / "store"
    ask = tmp_path / "ask.yaml"
    ask.write_text(
        "turns:\n"
        "  - tool_calls:\n"  # the parent
        "      - name: task\n"
        "        arguments:\n"
        "          description: pick a name\n"
        "          prompt: ask which name, then write it to notes.txt\n"
        "          tools: [ask_user, write_file]\n"
        "  - tool_calls:\n"  # the child
        "      - name: ask_user\n"
        "        arguments: {question: 'Which name?'}\n"
    )
    answer = tmp_path / "answer.yaml"
    answer.write_text(
        "turns:\n"
        "  - expect:\n"  # the child, resumed from the store
        "      last_message_contains: 'The person answered: TOTAL'\n"
        "    tool_calls:\n"
        "      - name: write_file\n"
        '        arguments: {path: notes.txt, content: "TOTAL\\n"}\n'
        "  - text: wrote notes.txt\n"
        "  - expect:\n"  # the parent, with the child's answer as the task result
        "      last_role: tool\n"
        "      last_message_contains: 'wrote notes.txt'\n"
        "    text: the subagent wrote it\n"
    )
    common = ["-w", str(tmp_path), "--provider", "replay", "--storage", str(storage)]
    first = _run("run", "name it", *common, "--script", str(ask), "--json")
    assert first.returncode == 4, first.stdout + first.stderr
    waiting = _result(first.stdout)
    assert waiting["status"] == "waiting"
    assert "Which name?" in str(waiting["error"])
    session_id = str(waiting["sessionId"])
    assert not (tmp_path / "notes.txt").exists()

    second = _run(
        "run", "TOTAL", *common, "--script", str(answer), "--resume", session_id, "--json"
    )
    assert second.returncode == 0, second.stdout + second.stderr
    done = _result(second.stdout)
    assert done["text"] == "the subagent wrote it"
    assert (tmp_path / "notes.txt").read_text() == "TOTAL\n"
    (only,) = _sessions(storage)
    assert only["status"] == "completed"
