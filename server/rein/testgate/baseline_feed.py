"""The baseline's run started at a test's first failure, fed the failing
tests of its file as they fail.

A failing test's run in the baseline used to start when its failure was
read, then run only that test: on toolz its start and collection (0.25-0.30
s loaded) came after the first run's last test, and a test failing while
it ran waited for another run after it. Now, when the first test fails
while the first run goes on, the baseline's run of its test file starts
(beside the first run: one more process, on the other core), collects
that file as the first run does (the same per-test choice) in the tree of
the workspace before the run, and then, instead of running its tests,
waits for a *feed*: a file in its shadow's own folder
(``REIN_TESTS_FEED``) to which the gate appends the node id of each test
of that file the first run reports failing, and runs each matching test
as its name comes (a class's node id: all its tests, a test's: all its
parameters), tearing down all of its fixtures after each one (what test
comes next is not known). The gate appends :data:`END` when the first
run's report says its session finished (every failing test said), or when
a test of another file fails (that one gets a baseline run of its own
after this one, :mod:`rein.testgate.waves`): the run ends after the tests
fed. So the baseline's verdict of a one-file run comes about when the first
run's process ends, not a pytest start later.

The plugin, ``rein_testgate_feed``, is written beside the report plugin.
It waits at most ``REIN_TESTS_FEED_S`` seconds (the verdict's time left)
for :data:`END`, polling every 5 ms; past that the session is interrupted
(pytest's exit code 2: no verdict, never "passed"). Not used for a run of
the whole suite, one big enough for pytest-xdist, or a custom runner.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["END", "FEED_PLUGIN", "Feed", "write_feed_plugin"]

#: The plugin's module name.
FEED_PLUGIN = "rein_testgate_feed"
#: The feed's last line: no more tests.
END = "#end"
#: The environment naming the feed, and the wait's bound in seconds.
FEED_ENV = "REIN_TESTS_FEED"
FEED_S_ENV = "REIN_TESTS_FEED_S"

_SOURCE = '''"""Written by Rein's tests gate: run the tests named in a feed as they come."""
import os
import time

import pytest

_POLL_S = 0.005


def _named(item, names):
    parts = item.nodeid.split("[")[0].split("::")
    return item.nodeid in names or any(
        "::".join(parts[:end]) in names for end in range(1, len(parts) + 1)
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    feed = os.environ.get("REIN_TESTS_FEED")
    if not feed or hasattr(session.config, "workerinput"):
        return None
    bound = time.monotonic() + float(os.environ.get("REIN_TESTS_FEED_S") or 60)
    done, offset, partial = set(), 0, b""
    while True:
        with open(feed, "rb") as stream:
            stream.seek(offset)
            chunk = stream.read()
        offset += len(chunk)
        lines = (partial + chunk).split(b"\\n")
        partial = lines.pop()  # a line not written whole yet
        names = set(line.decode("utf-8", "replace") for line in lines if line)
        ended = "#end" in names
        if names:
            for item in session.items:
                if item.nodeid not in done and _named(item, names):
                    done.add(item.nodeid)
                    item.config.hook.pytest_runtest_protocol(item=item, nextitem=None)
                    if session.shouldfail or session.shouldstop:
                        return True
        if ended:
            return True
        if time.monotonic() > bound:
            raise session.Interrupted("the tests gate's feed did not end in time")
        time.sleep(_POLL_S)
'''


def write_feed_plugin(folder: Path) -> None:
    """Write the plugin into ``folder`` (the report plugin's)."""
    (folder / f"{FEED_PLUGIN}.py").write_text(_SOURCE, encoding="utf-8")


class Feed:
    """The gate's side of a feed: the names given before its file exists
    (the run not started yet) are written when it is made."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self._given: list[str] = []
        self.ended = False

    def attach(self, path: Path) -> None:
        """The run's feed file is ``path``: made now, with the names given
        so far (before its pytest starts)."""
        self.path = path
        path.write_text("".join(f"{name}\n" for name in self._given), encoding="utf-8")

    def give(self, names: Iterable[str]) -> None:
        """Append ``names`` (node ids, files) to the feed."""
        names = [n for n in names if n and n != END and "\n" not in n]
        self._given += names
        self._write(names)

    def end(self) -> None:
        """No more names: the run ends after the given ones."""
        if not self.ended:
            self.ended = True
            self._given.append(END)
            self._write([END])

    def _write(self, names: list[str]) -> None:
        if self.path is not None and names:
            with self.path.open("a", encoding="utf-8") as out:
                out.write("".join(f"{name}\n" for name in names))
