"""Hypothesis strategies for :mod:`rein.fuzz`: requests to every custom
method and command with generated params, and malformed frames.

Params are generated from the pydantic params models of
:mod:`rein.lsp.params`: either valid, or with exactly one field broken (a
value its type does not accept, a required field left out, an unknown key),
in which case the expected answer is InvalidParams naming that field.
"""

from __future__ import annotations

import json
import types
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import MinLen
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from rein.lsp import params as P

__all__ = ["Case", "any_case", "fixed_cases", "nested_case"]

INVALID_PARAMS = -32602
INVALID_REQUEST = -32600


@dataclass(frozen=True)
class Case:
    """One thing to send. ``raw``: bytes sent as they are (then
    ``parse_errors`` answers with a null id are expected (None: zero or
    one), and ``answer_id``
    is a request inside them that must be answered); otherwise a
    well-formed request of ``method`` with ``params``. ``expect_code`` and
    ``field``: the error expected, and the name its message must hold."""

    label: str
    method: str = ""
    params: Any = None
    raw: bytes | None = None
    parse_errors: int | None = 0
    answer_id: Any = None
    expect_code: int | None = None
    field: str | None = None

    def __repr__(self) -> str:  # hypothesis prints failing cases; keep them short
        shown = self.raw[:200] if self.raw is not None else json.dumps(self.params)[:200]
        return f"Case({self.label!r}, {shown!r})"


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_names = st.from_regex(r"[a-z]{1,8}", fullmatch=True)


def _valid(annotation: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is str:
        min_size = max([m.min_length for m in metadata if isinstance(m, MinLen)], default=0)
        return st.text(min_size=min_size, max_size=40)
    if annotation is int:
        return st.integers(min_value=0, max_value=2**31)
    if annotation is type(None):
        return st.none()
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (Union, types.UnionType):
        return st.one_of(*(_valid(a, metadata) for a in args))
    if origin is list:
        return st.lists(_valid(args[0], []), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), json_values, max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return valid_params(annotation)
    return json_values


def _fields(model: type[BaseModel]) -> list[tuple[str, Any, list[Any], bool]]:
    return [
        (info.alias or name, info.annotation, list(info.metadata), info.is_required())
        for name, info in model.model_fields.items()
    ]


def valid_params(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for alias, annotation, metadata, is_required in _fields(model):
        if alias == "range":
            strategy: st.SearchStrategy[Any] = st.none() | _ranges
        elif alias == "diagnostics":
            strategy = st.none() | st.lists(_diagnostics, max_size=2)
        else:
            strategy = _valid(annotation, metadata)
        (required if is_required else optional)[alias] = strategy
    return st.fixed_dictionaries(required, optional=optional)


_positions = st.fixed_dictionaries(
    {"line": st.integers(0, 10**6), "character": st.integers(0, 10**6)}
)
_ranges = st.fixed_dictionaries({"start": _positions, "end": _positions})
_diagnostics = st.fixed_dictionaries(
    {"range": _ranges, "message": st.text(max_size=30)},
    optional={
        "severity": st.sampled_from([1, 2, 3, 4]),
        "code": st.none() | st.text(max_size=8) | st.integers(0, 9999),
        "source": st.text(max_size=8),
    },
)


def _accepts(model: type[BaseModel], params: dict[str, Any]) -> bool:
    try:
        TypeAdapter(model).validate_python(params)
    except ValidationError:
        return False
    return True


@st.composite
def broken_params(draw: st.DrawFn, model: type[BaseModel]) -> tuple[dict[str, Any], str]:
    """Valid params with one field broken, and that field's name."""
    params = dict(draw(valid_params(model)))
    fields = _fields(model)
    how = draw(st.sampled_from(["value", "missing", "unknown"]))
    required = [f for f in fields if f[3]]
    if how == "missing" and required:
        alias = draw(st.sampled_from([f[0] for f in required]))
        params.pop(alias, None)
        return params, alias
    if how == "unknown" and model.model_config.get("extra") == "forbid":
        alias = "x" + draw(_names)
        params[alias] = draw(json_values)
        return params, alias
    if not fields:
        alias = "x" + draw(_names)
        params[alias] = draw(json_values)
        return params, alias
    alias = draw(st.sampled_from([f[0] for f in fields]))
    params[alias] = draw(json_values.filter(lambda v: not _accepts(model, {**params, alias: v})))
    return params, alias


_METHODS: dict[str, type[BaseModel]] = {
    "rein/prompt": P.PromptParams,
    "rein/steer": P.SteerParams,
    "rein/followUp": P.FollowUpParams,
    "rein/abort": P.AbortParams,
    "rein/sessions": P.SessionsParams,
    "rein/session": P.SessionParams,
    "rein/preview": P.PreviewParams,
}
_CONTEXT_COMMANDS = ("rein.fix", "rein.explain", "rein.ask")
_OTHER_COMMANDS = ("rein.abort", "rein.preview.stop")


@st.composite
def method_case(draw: st.DrawFn) -> Case:
    method = draw(st.sampled_from(sorted(_METHODS)))
    model = _METHODS[method]
    if draw(st.booleans()):
        params = draw(valid_params(model))
        if method == "rein/prompt":
            params.pop("sessionId", None)  # a new session each time (an unknown one is broken)
        return Case(f"{method} valid", method, params)
    params, field = draw(broken_params(model))
    return Case(f"{method} broken {field}", method, params, expect_code=INVALID_PARAMS, field=field)


@st.composite
def command_case(draw: st.DrawFn) -> Case:
    name = draw(st.sampled_from(_CONTEXT_COMMANDS + _OTHER_COMMANDS))
    if name in _CONTEXT_COMMANDS:
        if draw(st.booleans()):
            args = [draw(valid_params(P.PromptContext))]
            return Case(
                f"{name} valid", "workspace/executeCommand", {"command": name, "arguments": args}
            )
        if draw(st.booleans()):
            context, field = draw(broken_params(P.PromptContext))
            return Case(
                f"{name} broken {field}",
                "workspace/executeCommand",
                {"command": name, "arguments": [context]},
                expect_code=INVALID_PARAMS,
                field=field,
            )
    args = draw(st.lists(json_values, max_size=3))
    expect = (
        INVALID_PARAMS
        if name in _CONTEXT_COMMANDS and (not args or not isinstance(args[0], dict))
        else None
    )
    return Case(
        f"{name} junk",
        "workspace/executeCommand",
        {"command": name, "arguments": args},
        expect_code=expect,
    )


def _request(msg_id: Any, method: str = "rein/sessions", params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


def _framed(body: bytes, header: bytes | None = None) -> bytes:
    head = header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)
    return head + body


def _nested(msg_id: str, depth: int) -> bytes:
    """A rein/steer whose text is an object nested ``depth`` levels (written
    out: json.dumps itself recurses)."""
    value = b'{"a":' * depth + b'"leaf"' + b"}" * depth
    return (
        b'{"jsonrpc": "2.0", "id": "%s", "method": "rein/steer", '
        b'"params": {"sessionId": "x", "text": %s}}' % (msg_id.encode(), value)
    )


def fixed_cases() -> list[Case]:
    """Every frame and message defect the issue lists, once."""
    follow = _framed(json.dumps(_request("next")).encode())
    body = json.dumps(_request("lost")).encode()
    cases = [
        Case(
            f"Content-Length: {v.decode()}",
            raw=_framed(body, b"Content-Length: %s\r\n\r\n" % v) + follow,
            parse_errors=1,
            answer_id="next",
        )
        for v in (
            b"abc",
            b"-5",
            b"1099511627776",
            b"99999999999999999999",
            b"",
            b"1e3",
            b"70000000",
        )
    ]
    cases += [
        Case(
            "length 20 too big",
            raw=_framed(body, b"Content-Length: %d\r\n\r\n" % (len(body) + 20)) + follow,
            parse_errors=1,
            answer_id="next",
        ),
        Case(
            "length 10 too small",
            raw=_framed(body, b"Content-Length: %d\r\n\r\n" % (len(body) - 10)) + follow,
            parse_errors=1,
            answer_id="next",
        ),
        Case("missing header", raw=body + follow, parse_errors=1, answer_id="next"),
        Case("blank header", raw=b"\r\n" + body + follow, parse_errors=1, answer_id="next"),
        Case(
            "LF-only line ends",
            raw=b"Content-Length: %d\n\n" % len(body) + body + follow,
            parse_errors=1,
            answer_id="next",
        ),
        Case(
            "lower-case content-length",
            raw=_framed(
                json.dumps(_request("lower")).encode(),
                b"content-length: %d\r\n\r\n" % len(json.dumps(_request("lower"))),
            ),
            answer_id="lower",
        ),
        Case("not JSON", raw=_framed(b"{not json") + follow, parse_errors=1, answer_id="next"),
        Case(
            "not UTF-8",
            raw=_framed(b'{"jsonrpc": "2.0", "id": "u", "method": "\xff\xfe"}') + follow,
            parse_errors=1,
            answer_id="next",
        ),
        Case(
            "batch",
            raw=_framed(json.dumps([_request("b1"), _request("b2")]).encode()) + follow,
            parse_errors=1,
            answer_id="next",
        ),
        Case("a number", raw=_framed(b"42") + follow, parse_errors=1, answer_id="next"),
        Case(
            "nested 200 levels",
            raw=_framed(_nested("deep", 200)),
            answer_id="deep",
            expect_code=INVALID_PARAMS,
            field="text",
        ),
        Case(
            "nested 990 levels",
            raw=_framed(_nested("deeper", 990)),
            answer_id="deeper",
            expect_code=INVALID_PARAMS,
            field="text",
        ),
        Case(
            "nested 100000 levels",
            raw=_framed(_nested("deepest", 100_000)),
            answer_id="deepest",
            expect_code=INVALID_PARAMS,
            field="text",
        ),
        Case(
            "nested 100000 levels before the id",
            raw=_framed(
                b'{"params": {"text": %s}, "jsonrpc": "2.0", "id": "late", "method": "rein/steer"}'
                % (b"[" * 100_000 + b"]" * 100_000)
            )
            + follow,
            parse_errors=1,
            answer_id="next",
        ),
        Case(
            "nested notification",
            raw=_framed(
                b'{"jsonrpc": "2.0", "method": "rein/diagnosticsChanged", "params": {"uris": %s}}'
                % (b"[" * 5000 + b"]" * 5000)
            )
            + follow,
            answer_id="next",
        ),
        Case(
            "nested jsonrpc key",
            "rein/steer",
            {"sessionId": {"jsonrpc": "2.0", "id": 1, "method": "x"}, "text": "t"},
            expect_code=INVALID_PARAMS,
            field="sessionId",
        ),
        Case(
            "lone surrogate",
            raw=_framed(
                b'{"jsonrpc": "2.0", "id": "sur", "method": "rein/prompt", "params": {"text": "a\\ud800b"}}'
            ),
            answer_id="sur",
            expect_code=INVALID_PARAMS,
            field="text",
        ),
        Case(
            "missing jsonrpc",
            raw=_framed(b'{"id": "nojsonrpc", "method": "rein/sessions", "params": {}}'),
            answer_id="nojsonrpc",
            expect_code=INVALID_REQUEST,
        ),
        Case(
            "10 MB command name",
            "workspace/executeCommand",
            {"command": "x" * 10_000_000},
            expect_code=INVALID_PARAMS,
            field="command",
        ),
        Case(
            "10 MB steer",
            "rein/steer",
            {"sessionId": "y" * 100, "text": "z" * 10_000_000},
            expect_code=INVALID_PARAMS,
            field="sessionId",
        ),
        Case(
            "codeAction {}",
            "textDocument/codeAction",
            {},
            expect_code=INVALID_PARAMS,
            field="textDocument",
        ),
    ]
    for label, params in (
        ("no command", {}),
        ("null", None),
        ("array", []),
        ("string", "rein.fix"),
        ("arguments 5", {"command": "rein.fix", "arguments": 5}),
        ("arguments true", {"command": "rein.abort", "arguments": True}),
    ):
        cases.append(
            Case(
                f"executeCommand {label}",
                "workspace/executeCommand",
                params,
                expect_code=INVALID_PARAMS,
            )
        )
    for label, msg_id in (
        ("float", 1.5),
        ("bool", True),
        ("object", {}),
        ("array", []),
        ("null", None),
    ):
        cases.append(
            Case(f"id {label}", raw=_framed(json.dumps(_request(msg_id)).encode()), parse_errors=1)
        )
    for label, method in (("number", 5), ("null", None), ("array", []), ("empty", "")):
        cases.append(
            Case(
                f"method {label}",
                raw=_framed(
                    json.dumps({"jsonrpc": "2.0", "id": f"m-{label}", "method": method}).encode()
                ),
                answer_id=f"m-{label}",
                expect_code=INVALID_REQUEST,
            )
        )
    return cases


@st.composite
def junk_case(draw: st.DrawFn) -> Case:
    """Random bytes, then a well-formed request that must be answered."""
    junk = draw(st.binary(max_size=200).filter(lambda b: b"ength" not in b.lower()))
    follow = _framed(json.dumps(_request("after-junk")).encode())
    return Case("junk bytes", raw=junk + follow, parse_errors=None, answer_id="after-junk")


@st.composite
def odd_header_case(draw: st.DrawFn) -> Case:
    value = draw(
        st.binary(max_size=30).filter(
            lambda b: b"\n" not in b and b"ength" not in b.lower() and not b.strip().isdigit()
        )
    )
    body = json.dumps(_request("lost")).encode()
    follow = _framed(json.dumps(_request("after-header")).encode())
    raw = b"Content-Length: " + value + b"\r\n\r\n" + body + follow
    return Case("odd Content-Length", raw=raw, parse_errors=1, answer_id="after-header")


@st.composite
def odd_id_case(draw: st.DrawFn) -> Case:
    """A request whose id is any JSON value: an integer or a string is
    answered under it; anything else gets InvalidRequest with a null id."""
    msg_id = draw(json_values)
    valid = (isinstance(msg_id, int) and not isinstance(msg_id, bool)) or isinstance(msg_id, str)
    raw = _framed(json.dumps(_request(msg_id)).encode())
    if valid:
        return Case("generated id", raw=raw, answer_id=msg_id)
    return Case("generated invalid id", raw=raw, parse_errors=1)


@st.composite
def nested_case(draw: st.DrawFn) -> Case:
    """A request to any method whose params hold a value nested deeper than
    the bound (objects, arrays or both, up to 200,000 levels): answered at
    once under its id, InvalidParams naming the member."""
    depth = draw(st.integers(129, 200_000))
    member = draw(_names)
    opens = draw(st.sampled_from([b'{"a":', b"[", b'[{"b":']))
    closes = {b'{"a":': b"}", b"[": b"]", b'[{"b":': b"}]"}[opens]
    count = max(1, depth // (2 if opens == b'[{"b":' else 1))
    value = opens * count + b"0" * (opens != b"[") + closes * count
    method = draw(st.sampled_from([*sorted(_METHODS), "workspace/executeCommand", "x/unknown"]))
    msg_id = f"nest-{draw(_names)}"
    body = b'{"jsonrpc": "2.0", "id": "%s", "method": "%s", "params": {"%s": %s}}' % (
        msg_id.encode(),
        method.encode(),
        member.encode(),
        value,
    )
    return Case(
        f"nested {depth} levels",
        raw=_framed(body),
        answer_id=msg_id,
        expect_code=INVALID_PARAMS,
        field=member,
    )


def any_case() -> st.SearchStrategy[Case]:
    return st.one_of(
        method_case(),
        nested_case(),
        command_case(),
        odd_id_case(),
        junk_case(),
        odd_header_case(),
        st.sampled_from(fixed_cases()),
    )
