"""What the tests gate says: a blocker per test the run broke (its node id,
the assertion, the frames inside the workspace, the captured output's tail,
the changed files it reaches, cut to a budget) and the verdict's detail."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from rein.harness.events import Blocker
from rein.testgate.junit import Frame, TestResult, describe_frames, workspace_frames
from rein.testgate.runner import TestRun
from rein.testgate.shadow import Shadow

if TYPE_CHECKING:
    from rein.testgate.selection import TestSelection

__all__ = ["CONTEXT_BUDGET", "blocker_for", "summary"]

#: A blocker's context (frames, assertion, output) is cut to this many chars.
CONTEXT_BUDGET = 3_000
_MAX_FRAMES = 12
_OUTPUT_TAIL = 800
_MESSAGE_CHARS = 800
#: ``path:line: Kind``, the location line closing a failure's text.
_LOCATION = re.compile(r"^\S+:\d+: \w+$")
#: Names listed in the detail, per kind.
_MAX_NAMED = 10
#: pytest's advice to a person at a terminal, which the model cannot follow
#: (it does not run the gate's pytest: trial31).
_HINT = re.compile(
    r"^\s*(?:Use -v+ to get (?:more|the full) diff|\.\.\.Full output truncated.*)\s*$"
)


def _without_hints(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _HINT.match(line))


def _cut(text: str, limit: int, *, tail: bool = False) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return "[...]\n" + text[-limit:] if tail else text[:limit] + "\n[...]"


def _location(result: TestResult, frames: Sequence[Frame]) -> tuple[str | None, int | None]:
    """Where the panel links: the deepest frame in the test's own file,
    else the deepest frame in the workspace, else the test's definition."""
    own = [f for f in frames if f.path == result.file]
    chosen = own[-1] if own else (frames[-1] if frames else None)
    if chosen is not None:
        return chosen.path, chosen.line - 1
    return result.file, (result.line - 1) if result.line else None


def _said(text: str) -> str:
    """A one-line message from a failure's text when pytest gave none: a
    doctest's expected and got values, or its unexpected exception; else
    the text's last line that is not a location."""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if line.startswith("UNEXPECTED EXCEPTION:"):
            return line
        if line == "Expected:" and "Got:" in lines[at + 1 :]:
            got = at + 1 + lines[at + 1 :].index("Got:")
            want = " ".join(x.strip() for x in lines[at + 1 : got][:3])
            after = [*lines[got + 1 :], ""]
            had = " ".join(x.strip() for x in after[: after.index("")][:3])
            return f"doctest expected {want}, got {had}"
        if line.startswith("Expected nothing") or line.startswith("Expected:"):
            return line
    rest = [x.strip() for x in lines if x.strip() and not _LOCATION.match(x.strip())]
    return rest[-1] if rest else ""


def _reaches(result: TestResult, selection: TestSelection, changed: Sequence[str]) -> str | None:
    chain = selection.chains.get(result.file or "") if result.file else None
    if not chain:
        return None
    reached = [p for p in chain if p in changed]
    head = ", ".join(reached) if reached else chain[0]
    return f"reaches the run's change to {head} ({' -> '.join(chain)})"


def blocker_for(
    result: TestResult, shadow: Shadow, selection: TestSelection, changed: Sequence[str]
) -> Blocker:
    """The blocker of one test the run broke (or of a changed test file
    that cannot be collected)."""
    frames = workspace_frames(result.text, shadow.relative)
    path, line = _location(result, frames)
    if "diff" in result.message or "truncated" in result.message:
        result = replace(result, message=_without_hints(result.message))
    # A failure without pytest's one-line crash message (a doctest's): its
    # text says what went wrong, the frames alone do not.
    bare = not result.message.strip() and bool(result.text.strip())
    first = (result.message or _said(result.text) or result.outcome).strip().splitlines()
    if len(first) > 1 and first[0].rstrip().endswith(":"):
        # An empty assertion message (``assert x, out.stderr`` with no
        # stderr): the assertion is on the next line.
        first[0] = f"{first[0].rstrip()} {first[1].strip()}"
    if result.collection_error:
        message = f"{result.node_id} cannot be collected (importing it or making its tests failed)"
    else:
        message = f"{result.node_id} failed: {first[0] if first else result.outcome}"
    parts: list[str] = []
    if result.message.strip() and (len(first) > 1 or result.collection_error):
        parts.append(_cut(result.message, _MESSAGE_CHARS))
    if bare and frames:
        text = result.text.replace(f"{shadow.root}/", "")
        parts.append(_cut(text, _MESSAGE_CHARS, tail=True))
    if frames:
        parts.append(
            "traceback (frames in the workspace):\n" + describe_frames(frames[-_MAX_FRAMES:])
        )
    elif result.text.strip():
        parts.append(_cut(result.text, _MESSAGE_CHARS, tail=True))
    reach = _reaches(result, selection, changed)
    if reach:
        parts.append(reach)
    if result.output.strip():
        parts.append("captured output (tail):\n" + _cut(result.output, _OUTPUT_TAIL, tail=True))
    return Blocker(
        gate="tests",
        message=message,
        path=path,
        line=line,
        source="tests",
        context=_cut("\n".join(parts), CONTEXT_BUDGET) or None,
    )


def _named(kind: str, names: Sequence[str]) -> str:
    shown = ", ".join(names[:_MAX_NAMED])
    more = len(names) - _MAX_NAMED
    return f"{kind}: {shown}" + (f" and {more} more" if more > 0 else "")


def summary(
    run: TestRun,
    selection: TestSelection,
    flaky: Sequence[str],
    pre_existing: Sequence[str],
    custom: bool,
) -> str:
    """ "N of M tests passed; K of T test files selected (why)", then the
    flaky and the pre-existing failures by name."""
    ran = [r for r in run.results if r.outcome != "skipped" and not r.collection_error]
    passed = sum(1 for r in ran if not r.failing)
    text = f"{passed} of {len(ran)} tests passed"
    # A file that cannot be collected is no test (trial31: 8 such files of
    # 128 tests read "0 of 8 tests passed").
    # (pytest may report one file twice: its tests' module and its doctests')
    uncollected = len({r.file or r.node_id for r in run.results if r.collection_error})
    if uncollected:
        collected = f"{uncollected} test file(s) could not be collected"
        text = f"{text}, {collected}" if ran else f"no test ran: {collected}"
    if custom:
        text += f" ({selection.reason})"
    elif selection.run_all:
        text += f"; the whole suite ran ({selection.reason})"
    else:
        text += (
            f"; {len(selection.files)} of {selection.total_files} test files selected "
            f"({selection.reason})"
        )
    if flaky:
        text += "; " + _named("flaky, passed on a re-run (not blocking)", flaky)
    if pre_existing:
        text += "; " + _named("failing before the run too (not blocking)", pre_existing)
    return text
