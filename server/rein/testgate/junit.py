"""Test results, a configured runner's JUnit XML report read into them,
and a traceback cut to the frames inside the workspace.

jest-junit, vitest's ``junit`` reporter, gotestsum, cargo nextest and
ctest write the shape read here (``testsuites`` / ``testsuite`` /
``testcase`` with ``failure``, ``error`` or ``skipped``); so does pytest's
``--junitxml`` when the configured command is pytest (its ``xunit1``
family's test cases carry ``file`` and ``line``). The gate's own pytest
runs are read from pytest's report objects instead
(:mod:`rein.testgate.pytest_run`). The console is never read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Frame",
    "Outcome",
    "TestResult",
    "describe_frames",
    "parse_junit",
    "workspace_frames",
]

Outcome = Literal["passed", "failed", "error", "skipped"]

#: pytest's header lines in ``system-out`` / ``system-err``.
_CAPTURE_HEADER = re.compile(r"^-{3,} Captured \w+(?: \w+)? -{3,}$")
#: A frame of a Python traceback (``--tb=native``).
_NATIVE_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
#: A frame of pytest's own traceback style (collection errors use it).
_PYTEST_FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): (?P<rest>.*)$")


@dataclass(frozen=True, slots=True)
class TestResult:
    """One test case of a report."""

    __test__ = False  # not a pytest test class

    #: Re-runnable where the runner has names (pytest: ``path::Class::name``).
    node_id: str
    outcome: Outcome
    #: The failure's message (pytest: the assertion, ``assert 2 == 1``).
    message: str = ""
    #: The failure's text (a traceback).
    text: str = ""
    #: Captured stdout and stderr.
    output: str = ""
    #: The test's file as the report names it (relative to where it ran).
    file: str | None = None
    #: 1-based, when the report says.
    line: int | None = None
    #: pytest's "collection failure": the file could not be imported.
    collection_error: bool = False

    @property
    def failing(self) -> bool:
        return self.outcome in ("failed", "error")


@dataclass(frozen=True, slots=True)
class Frame:
    """A traceback frame inside the workspace."""

    path: str
    #: 1-based.
    line: int
    function: str
    code: str = ""


def parse_junit(xml_text: str) -> list[TestResult]:
    """Every test case of a JUnit XML report, in order. Raises ``ValueError``
    when the text is not such a report."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"the JUnit report is not XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the JUnit report's root is <{root.tag}>, not <testsuites>")
    return [_case(case) for case in root.iter("testcase")]


def _case(case: ET.Element) -> TestResult:
    classname = case.get("classname") or ""
    name = case.get("name") or ""
    file = case.get("file") or None
    line = _int(case.get("line"))
    outcome: Outcome = "passed"
    message = text = ""
    collection = False
    for tag, kind in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        found = case.find(tag)
        if found is not None:
            outcome = kind  # type: ignore[assignment]
            message = found.get("message") or ""
            text = found.text or ""
            collection = tag == "error" and not classname and message == "collection failure"
            break
    output = "\n".join(
        _strip_headers(part.text or "")
        for tag in ("system-out", "system-err")
        for part in case.findall(tag)
    ).strip()
    if collection and file is None:
        file = name.replace(".", "/") + ".py"
    node_id = _node_id(classname, name, file, collection)
    if line is not None and file is not None and file.endswith(".py"):
        line += 1  # pytest's xunit1 ``line`` is 0-based
    return TestResult(
        node_id=node_id,
        outcome=outcome,
        message=message,
        text=text,
        output=output,
        file=file,
        line=line,
        collection_error=collection,
    )


def _node_id(classname: str, name: str, file: str | None, collection: bool) -> str:
    """pytest's node id from the case's file, class name and name: the
    class name is the file's dotted module and the classes in it."""
    if collection and file is not None:
        return file
    if file is not None and file.endswith(".py"):
        module = file[: -len(".py")].replace("/", ".")
        rest = classname[len(module) :].lstrip(".") if classname.startswith(module) else ""
        parts = [file, *(p for p in rest.split(".") if p), name]
        return "::".join(parts)
    return f"{classname}::{name}" if classname else name


def _strip_headers(text: str) -> str:
    return "\n".join(
        line for line in text.splitlines() if not _CAPTURE_HEADER.match(line.strip())
    ).strip()


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def workspace_frames(text: str, relative: Callable[[str], str | None]) -> list[Frame]:
    """The frames of a traceback ``text`` whose file is in the workspace:
    ``relative`` maps a frame's path to a workspace-relative one, or None
    for a file outside it (the library's, the interpreter's)."""
    frames: list[Frame] = []
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        native = _NATIVE_FRAME.match(raw)
        if native is not None:
            path, number, func = native["path"], native["line"], native["func"] or ""
        else:
            short = _PYTEST_FRAME.match(raw)
            if short is None:
                continue
            path, number = short["path"], short["line"]
            rest = short["rest"]
            func = rest[len("in ") :] if rest.startswith("in ") else ""
        where = relative(path)
        if where is None:
            continue
        code = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if _NATIVE_FRAME.match(code) or _PYTEST_FRAME.match(code):
            code = ""
        frames.append(Frame(where, int(number), func, code))
    return frames


def describe_frames(frames: Sequence[Frame]) -> str:
    """The frames one a line: ``path:line in function: code``."""
    return "\n".join(
        f"{f.path}:{f.line}"
        + (f" in {f.function}" if f.function else "")
        + (f": {f.code}" if f.code else "")
        for f in frames
    )
