"""What the pool's initialize request tells an analyzer, from its spec: the
initialization options (the spec's own, else ruff's ``{"settings": ...}``
form) and whether the client answers workspace/configuration. A tiny
language server (a real process over stdio) writes down the initialize
params it was sent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from rein.disk import analyzer_handshake
from rein.disk.analyzer_specs import AnalyzerSpec
from rein.disk.analyzers import AnalyzerPool
from tests.fakes.stdio_framing import FRAMING

#: The waits' bound here: a wait that runs it out fails the test.
BOUND_S = 10.0

#: Answers initialize (after writing its params to argv[1]) and shutdown.
RECORDER = (
    FRAMING
    + """\
for message in messages():
    if message.get("method") == "initialize":
        with open(sys.argv[1], "w") as out:
            json.dump(message["params"], out)
        send({"id": message["id"], "result": {"capabilities": {}}})
    elif message.get("method") == "shutdown":
        send({"id": message["id"], "result": None})
    elif message.get("method") == "exit":
        break
"""
)


#: Writes down each method it is sent, in order, until shutdown (which it
#: answers): what the client sends at start comes before it.
METHODS = (
    FRAMING
    + """\
with open(sys.argv[1], "w") as out:
    for message in messages():
        method = message.get("method")
        out.write(f"{method}\\n")
        if method == "initialize":
            send({"id": message["id"], "result": {"capabilities": {}}})
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
            break
"""
)


async def _initialize_params(tmp_path: Path, **fields: Any) -> dict[str, Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    record = tmp_path / "initialize.json"
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    command = (sys.executable, str(script), str(record))
    pool = AnalyzerPool(ws, [AnalyzerSpec("recorder", command, frozenset({".x"}), **fields)])
    await pool.start()
    try:
        assert [a.spec.name for a in pool.analyzers] == ["recorder"]
    finally:
        await pool.stop()
    return json.loads(record.read_text())


async def test_the_settings_are_the_initialization_options_by_default(tmp_path: Path) -> None:
    params = await _initialize_params(tmp_path, settings={"lint": {"select": ["E"]}})
    assert params["initializationOptions"] == {"settings": {"lint": {"select": ["E"]}}}
    assert params["capabilities"]["workspace"]["configuration"] is True


async def test_a_spec_sends_its_own_initialization_options(tmp_path: Path) -> None:
    # typescript-language-server's form: its options at the top level.
    options = {"disableAutomaticTypingAcquisition": True}
    params = await _initialize_params(
        tmp_path, settings={"typescript": {}}, initialization_options=options
    )
    assert params["initializationOptions"] == options


async def test_no_settings_no_initialization_options(tmp_path: Path) -> None:
    params = await _initialize_params(tmp_path)
    assert "initializationOptions" not in params


async def test_a_server_can_be_left_to_its_initialization_options(tmp_path: Path) -> None:
    # bash-language-server lints only the last file opened while it waits
    # for a workspace/configuration answer: it is not told it may ask.
    params = await _initialize_params(tmp_path, workspace_configuration=False)
    assert params["capabilities"]["workspace"]["configuration"] is False


async def _methods_at_start(tmp_path: Path, **fields: Any) -> list[str]:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    record = tmp_path / "methods.txt"
    script = tmp_path / "methods.py"
    script.write_text(METHODS)
    command = (sys.executable, str(script), str(record))
    spec = AnalyzerSpec("recorder", command, frozenset({".x"}), settings={"a": 1}, **fields)
    pool = AnalyzerPool(ws, [spec])
    await pool.start()
    await pool.stop()
    return record.read_text().split()


#: Writes down each method it is sent; at ``initialized`` asks for its
#: settings and publishes a.x (argv[2] "ask"), publishes a.x only ("not") or
#: does neither ("quiet"); told its settings, publishes a.x with the finding
#: "told".
SETTINGS = (
    FRAMING
    + """\
def publish(messages):
    diagnostics = [
        {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
         "message": m, "severity": 1}
        for m in messages
    ]
    send({"method": "textDocument/publishDiagnostics",
          "params": {"uri": root + "/a.x", "diagnostics": diagnostics}})


with open(sys.argv[1], "w") as out:
    for message in messages():
        method = message.get("method")
        out.write(f"{method}\\n")
        if method == "initialize":
            root = message["params"]["rootUri"]
            send({"id": message["id"], "result": {"capabilities": {}}})
        elif method == "initialized":
            if sys.argv[2] == "ask":
                send({"id": 1, "method": "workspace/configuration",
                      "params": {"items": [{"section": "a"}]}})
            if sys.argv[2] != "quiet":
                publish([])
        elif method == "workspace/didChangeConfiguration":
            publish(["told"])
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
            break
"""
)


async def _settings_at_start(tmp_path: Path, ask: str) -> tuple[list[str], list[str]]:
    """The methods the server was sent, and the findings of a.x it published last."""
    ws = tmp_path / "ws"
    ws.mkdir()
    record = tmp_path / "methods.txt"
    script = tmp_path / "settings.py"
    script.write_text(SETTINGS)
    command = (sys.executable, str(script), str(record), ask)
    spec = AnalyzerSpec("asker", command, frozenset({".y"}), settings={"a": 1}, asks_settings=True)
    pool = AnalyzerPool(ws, [spec])
    await pool.start()
    try:
        (analyzer,) = pool.analyzers
        while "a.x" not in analyzer.diagnostics:  # its first publish
            await asyncio.wait_for(pool.activity().wait(), BOUND_S)
        while ask != "ask" and [d.message for d in analyzer.diagnostics["a.x"]] != ["told"]:
            await asyncio.wait_for(pool.activity().wait(), BOUND_S)
        found = [d.message for d in analyzer.diagnostics["a.x"]]
    finally:
        await pool.stop()
    return [m for m in record.read_text().split() if m != "None"], found


async def test_a_server_that_asks_for_its_settings_is_not_sent_them_again(
    tmp_path: Path,
) -> None:
    # basedpyright asks at `initialized`; the notification made it set its
    # workspace up a second time (0-1.9 s later in the cold traces).
    methods, found = await _settings_at_start(tmp_path, "ask")
    assert methods == ["initialize", "initialized", "shutdown"]
    assert found == []


async def test_a_server_expected_to_ask_that_publishes_without_asking_is_sent_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Another version, or a user's command keeping the preset's
    # asksSettings: old, never told the excludes nor openFilesOnly, silently.
    methods, found = await _settings_at_start(tmp_path, "not")
    assert methods == ["initialize", "initialized", "workspace/didChangeConfiguration", "shutdown"]
    assert found == ["told"]
    assert "asker did not ask for its settings before it published" in caplog.text


async def test_a_server_expected_to_ask_is_sent_them_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing published (nothing open): sent once ASK_BOUND_S has passed.
    monkeypatch.setattr(analyzer_handshake, "ASK_BOUND_S", 0.05)
    methods, found = await _settings_at_start(tmp_path, "quiet")
    assert methods == ["initialize", "initialized", "workspace/didChangeConfiguration", "shutdown"]
    assert found == ["told"]


async def test_a_server_that_does_not_ask_is_sent_its_settings(tmp_path: Path) -> None:
    # typescript-language-server learns them from the notification only; so
    # does a server asked to ask (asks_settings) but not told it may.
    assert "workspace/didChangeConfiguration" in await _methods_at_start(tmp_path)
    unasked = await _methods_at_start(
        tmp_path / "b", asks_settings=True, workspace_configuration=False
    )
    assert unasked == ["initialize", "initialized", "workspace/didChangeConfiguration", "shutdown"]
