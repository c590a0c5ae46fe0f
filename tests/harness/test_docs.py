"""docs/protocol.md and docs/events.schema.json agree with the event models."""

from __future__ import annotations

from pathlib import Path

from rein.docs_gen import BEGIN, END, EXAMPLES, _event_classes, event_reference, schema_text

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_event_type_has_a_documented_example() -> None:
    types = {cls.model_fields["type"].default for cls in _event_classes()}
    assert types == set(EXAMPLES)


def test_protocol_md_event_reference_matches_the_models() -> None:
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    documented = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert documented == event_reference(), "run `rein schema events --write-docs docs`"


def test_committed_schema_matches_the_models() -> None:
    assert (DOCS / "events.schema.json").read_text(encoding="utf-8") == schema_text(), (
        "run `rein schema events --write-docs docs`"
    )
