"""What ``rein run`` prints for a run's errors: each said once."""

from __future__ import annotations

from rein.harness.events import ErrorEvent, RunEnd
from tests.printed import printed


def test_a_failed_runs_reason_is_said_once_by_its_end() -> None:
    # Defect: "! run: X" (the run's fatal error), then "■ failed (X) ...".
    reason = "model error: the API key was rejected (401)"
    text = printed(
        ErrorEvent(message=reason, where="run", fatal=True),
        RunEnd(run_id="r1", status="failed", reason=reason, turns=1),
    )
    assert text.count(reason) == 1, text
    assert text.startswith(f"■ failed ({reason}) after 1 turn(s)")
    # An error that does not end the run is still printed.
    assert printed(ErrorEvent(message="a listener raised", where="listener")) == (
        "  ! listener: a listener raised\n"
    )
