"""What a fork takes from a stored source (rein.acp.fork_source): its own
copy of the plan, the source left as it was loaded (review23 F8)."""

from __future__ import annotations

from pathlib import Path

from rein.acp.fork_source import of_stored
from rein.flows.plan_snapshot import PlanSnapshot
from rein.harness.events import PlanStep
from rein.session.ports import SessionSpec
from rein.session.stored import StoredSession
from rein.store.sqlite import SessionRecord, SqliteStore


def test_a_fork_of_a_stored_plan_waiting_on_a_question_leaves_the_source_waiting(
    tmp_path: Path,
) -> None:
    plan = PlanSnapshot(
        task="t", state="waiting", steps=[PlanStep(id="1", description="ask", status="running")]
    )
    spec = SessionSpec(mode="plan", session_id="src", plan_snapshot=plan)
    record = SessionRecord("src", "", "idle", "plan", "chat", 0.0, 0.0, 0, {})
    store = SqliteStore.open(str(tmp_path / "rein.db"))
    try:
        source = of_stored(StoredSession(store, record, spec, {}))
    finally:
        store.close()
    assert source.plan is not None and source.plan.state == "executing"
    assert source.plan is not plan and source.plan.steps == plan.steps
    assert spec.plan_snapshot is plan and plan.state == "waiting", "the source is not changed"
