"""Input schemas the providers would reject are found before they are offered."""

from __future__ import annotations

import pytest

from rein.mcp.schemas import schema_problem

OK = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def test_an_object_schema_passes() -> None:
    assert schema_problem(OK) is None


def test_acyclic_local_refs_pass() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Point"}},
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }
    assert schema_problem(schema) is None


@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        pytest.param(["not", "a", "dict"], "not a JSON object schema", id="list"),
        pytest.param({"type": "string"}, 'need "object"', id="not-object"),
        pytest.param({"properties": {}}, 'need "object"', id="no-type"),
        pytest.param(
            {"type": "object", "properties": {"n": {"type": 5}}},
            "not valid JSON Schema at properties/n/type",
            id="invalid",
        ),
        pytest.param(
            {"type": "object", "properties": {"n": {"$ref": "#/$defs/Missing"}}},
            "does not resolve",
            id="dangling-ref",
        ),
        pytest.param(
            {"type": "object", "properties": {"n": {"$ref": "https://example.org/s.json"}}},
            "not local",
            id="remote-ref",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/Node"}},
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {
                            "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                        },
                    }
                },
            },
            "recursive",
            id="ref-cycle",
        ),
    ],
)
def test_rejected_schemas_say_why(schema: object, needle: str) -> None:
    problem = schema_problem(schema)
    assert problem is not None
    assert needle in problem
