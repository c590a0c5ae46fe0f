"""The run record: every change a run caused, whoever made it.

A :class:`RunRecord` belongs to one run. The loop makes it active for the
run's whole scope (:func:`recording`, a context variable, so every task the
run starts sees it), and the workspace layer fills it, not the tools:

* a change applied through the workspace (:class:`~rein.harness.generations.
  MutationLog` records it) while a run is active lands in that run's record,
  origin ``"tool"``;
* a subagent runs inside its parent's tool call, so while it runs both
  records are active: its changes land in its own record and, origin
  ``"subagent"``, in the parent's;
* a change on disk that a process started by the run made (``run_command``:
  ``sed -i``, a formatter) is seen by the disk watcher as an external change
  and attributed, origin ``"command"``, to the runs whose command was running
  (:meth:`~rein.harness.generations.MutationLog.attributing_processes`).

The record also keeps what the model last saw of each file (read stamps),
the tools the run executed (and which of them succeeded), and the tokens its
subagents spent (the loop counts them in the turn that called them). Changes
of earlier runs that this run's gates must validate too (plan-act's earlier
steps) are ``carried``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from rein.harness.messages import Usage
from rein.harness.ports import FileContent, Mutation

__all__ = [
    "ReadStamp",
    "RunMutation",
    "RunMutationOrigin",
    "RunRecord",
    "active_records",
    "attribute",
    "recording",
]

#: Who in the run made a change: a tool through the workspace, a process a
#: tool started, or a subagent (a child run inside one of the run's calls).
RunMutationOrigin = Literal["tool", "command", "subagent"]


@dataclass(frozen=True, slots=True)
class RunMutation:
    """One change a run caused."""

    mutation: Mutation
    origin: RunMutationOrigin

    @property
    def generation(self) -> int:
        return self.mutation.generation

    @property
    def paths(self) -> tuple[str, ...]:
        return self.mutation.paths

    def to_json(self) -> dict[str, Any]:
        """The change as a store keeps it (what the gates need: its paths
        and who made it)."""
        return {"generation": self.generation, "paths": list(self.paths), "origin": self.origin}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunMutation:
        """A stored :meth:`to_json`. Generations restart with a new process,
        so a restored change gets generation 0 (it stays unvalidated until a
        gate pass). Raises KeyError, TypeError or ValueError on bad data."""
        paths = data["paths"]
        if not isinstance(paths, list):
            raise TypeError(f"a stored change needs a list of paths, got {paths!r}")
        origin = data.get("origin", "tool")
        if origin not in ("tool", "command", "subagent"):
            origin = "tool"
        return cls(Mutation(0, tuple(str(p) for p in paths), "agent"), origin)


@dataclass(frozen=True, slots=True)
class ReadStamp:
    """What a path looked like when the model last saw its text."""

    generation: int
    #: The editor's document version (None for text from the disk).
    version: int | None = None


class RunRecord:
    """What one run did to the workspace, in the order it happened."""

    __slots__ = (
        "_generations",
        "_subagent_usage",
        "carried",
        "mutations",
        "read_stamps",
        "run_id",
        "tools_succeeded",
        "tools_used",
        "turn",
    )

    def __init__(self, carried: Sequence[RunMutation] = (), *, run_id: str = "") -> None:
        #: The run's id (as in its run_start event; "" for a record of no run).
        self.run_id = run_id
        #: The run's current turn (1-based; 0 before its first model turn):
        #: the loop sets it as each turn starts, so a change knows its turn.
        self.turn = 0
        #: Changes of earlier runs this run's gates validate too.
        self.carried: list[RunMutation] = list(carried)
        #: Changes this run caused.
        self.mutations: list[RunMutation] = []
        #: path -> what the model last saw of it.
        self.read_stamps: dict[str, ReadStamp] = {}
        #: Names of the tools executed, in order.
        self.tools_used: list[str] = []
        #: Names of the tools whose result was not an error, in order.
        self.tools_succeeded: list[str] = []
        self._generations: set[int] = set()
        self._subagent_usage = Usage()

    def add(self, mutation: Mutation, origin: RunMutationOrigin) -> bool:
        """Count ``mutation`` (once per generation); False when it already was."""
        if mutation.generation in self._generations:
            return False
        self._generations.add(mutation.generation)
        self.mutations.append(RunMutation(mutation, origin))
        if origin == "tool":
            # The model knows what it wrote: its view of these paths is current.
            for path in mutation.paths:
                self.read_stamps[path] = ReadStamp(mutation.generation, None)
        return True

    def note_read(self, content: FileContent) -> None:
        self.read_stamps[content.path] = ReadStamp(content.generation, content.version)

    def note_tool(self, name: str) -> None:
        self.tools_used.append(name)

    def note_success(self, name: str) -> None:
        self.tools_succeeded.append(name)

    def note_subagent_usage(self, usage: Usage) -> None:
        """A subagent of this run spent ``usage`` (its whole run)."""
        self._subagent_usage = self._subagent_usage + usage

    def take_subagent_usage(self) -> Usage:
        """The subagents' usage noted since the last take (the loop adds it
        to the turn that ends)."""
        usage, self._subagent_usage = self._subagent_usage, Usage()
        return usage

    def to_validate(self) -> list[RunMutation]:
        """The carried changes and this run's: what the gates look at."""
        return [*self.carried, *self.mutations]

    @property
    def generations(self) -> list[int]:
        return sorted(self._generations)


#: The records of the runs active in this context, outermost first.
_ACTIVE: ContextVar[tuple[RunRecord, ...]] = ContextVar("rein_run_records", default=())


def active_records() -> tuple[RunRecord, ...]:
    """The records of the runs in whose context the caller is, outermost
    first (a subagent's run is inside its parent's)."""
    return _ACTIVE.get()


@contextmanager
def recording(record: RunRecord) -> Iterator[RunRecord]:
    """Make ``record`` active for the enclosed scope (and every task started
    in it), inside whatever run is active already."""
    token = _ACTIVE.set((*_ACTIVE.get(), record))
    try:
        yield record
    finally:
        _ACTIVE.reset(token)


def attribute(records: Sequence[RunRecord], mutation: Mutation, origin: RunMutationOrigin) -> None:
    """Count ``mutation`` in the innermost of ``records`` with ``origin`` and
    in the enclosing (parent) runs' records as a subagent's change."""
    for depth, record in enumerate(reversed(records)):
        record.add(mutation, origin if depth == 0 else "subagent")
