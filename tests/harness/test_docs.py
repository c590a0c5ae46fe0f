"""docs/protocol.md and docs/events.schema.json agree with the event models;
docs/agent-api.md and docs/testing.md name only tests that exist."""

from __future__ import annotations

import ast
import re
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


AGENT_API = DOCS / "agent-api.md"
_TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::([\w:]+)`")


def _defined_tests(path: Path) -> set[str]:
    """``name`` for every module-level test function, ``Class::name`` for
    every method of a module-level class."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return names


def test_every_test_named_in_agent_api_md_exists() -> None:
    text = AGENT_API.read_text(encoding="utf-8")
    refs = _TEST_REF.findall(text)
    assert len(refs) > 20, "docs/agent-api.md names its tests as `tests/x.py::test_name`"
    root = DOCS.parent
    missing = []
    for file, name in sorted(set(refs)):
        path = root / file
        if not path.is_file() or name not in _defined_tests(path):
            missing.append(f"{file}::{name}")
    assert missing == [], f"docs/agent-api.md names tests that do not exist: {missing}"


def test_every_test_named_in_testing_md_exists() -> None:
    text = (DOCS / "testing.md").read_text(encoding="utf-8")
    refs = _TEST_REF.findall(text)
    assert len(refs) >= 4, "docs/testing.md names its end-to-end tests as `tests/x.py::name`"
    missing = [
        f"{file}::{name}"
        for file, name in sorted(set(refs))
        if not (DOCS.parent / file).is_file() or name not in _defined_tests(DOCS.parent / file)
    ]
    assert missing == [], f"docs/testing.md names tests that do not exist: {missing}"


def test_every_row_of_the_agent_api_table_names_a_test_or_a_section() -> None:
    text = AGENT_API.read_text(encoding="utf-8")
    table = text[
        text.index("## The whole API") : text.index("\n## ", text.index("## The whole API") + 1)
    ]
    rows = [
        line
        for line in table.splitlines()
        if line.startswith("| `") and not line.startswith("| reference item")
    ]
    assert len(rows) >= 60, f"expected every reference item, found {len(rows)} rows"
    for row in rows:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert len(cells) == 4, f"a row needs 4 cells: {row}"
        test = cells[3]
        assert _TEST_REF.search(test) or "see §" in test, f"a row without a test: {row}"
