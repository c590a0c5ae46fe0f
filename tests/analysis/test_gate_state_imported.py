"""A session saved before diagnostics were redacted as they enter holds raw
messages in its analyzer baselines (review25a): resumed, they are redacted
as they are read back, so an old error that quotes a key is still told
from a new one and the key is not stored back."""

from __future__ import annotations

from typing import Any

from rein.analysis.baselines import blocking_untouched
from rein.analysis.gate_state import exported, imported
from rein.disk._lsp_diagnostics import diagnostic_from_json

KEY = "sk-proj-abcdefghijklmnopqrstuvwx"
MESSAGE = f'Type "Literal[\'{KEY}\']" is not assignable to declared type "int"'


def _saved(code: str | None) -> dict[str, Any]:
    """A baseline as the code before the redaction on the way in saved it."""
    old = {
        "path": "a.py",
        "line": 4,
        "character": 0,
        "end_line": 4,
        "end_character": 9,
        "severity": 1,
        "code": code,
        "source": "basedpyright",
        "message": MESSAGE,
    }
    return {
        "files": [{"path": "a.py", "text": None, "diagnostics": [old]}],
        "late": {"b.py": [old]},
    }


def _now(code: str | None) -> Any:
    raw = {
        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 9}},
        "severity": 1,
        "code": code,
        "source": "basedpyright",
        "message": MESSAGE,
    }
    return diagnostic_from_json("a.py", raw, "basedpyright")


def test_an_old_sessions_code_less_error_quoting_a_key_is_not_read_as_new() -> None:
    files, _ = imported(_saved(None))
    assert blocking_untouched([_now(None)], files["a.py"].diagnostics) == []


def test_an_old_sessions_raw_messages_are_not_stored_back() -> None:
    files, late = imported(_saved("reportAssignmentType"))
    assert KEY not in repr(exported(files, late))
    assert "[redacted]" in files["a.py"].diagnostics[0].message
    assert "[redacted]" in late["b.py"][0].message
