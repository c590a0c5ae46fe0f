"""The baseline's run started with the first run, fed the failing tests as
they fail.

A failing test's run in the baseline used to start when its failure was
read, a pytest process of its own: on toolz its start and collection
(0.25-0.30 s loaded) came after the first run's last test, since a test
fails late in a run that is mostly pytest's start. Now the baseline's run
starts with the first run (beside it: one more process, on the other
core), collects what the first run collects in the tree of the workspace
before the run (the same files, of those that existed then, and the same
per-test choice), and then, instead of running its tests, waits for a
*feed*: a file in its shadow's own folder (``REIN_TESTS_FEED``) to which
the gate appends the node id of each test the first run reports failing
(a file's path for a file that could not be collected), and runs each
matching test as its name comes (a file's path: all its tests, a class's
node id: all its tests, a test's: all its parameters), tearing down all
of its fixtures after each one (what test comes next is not known). The
gate appends :data:`END` when the first run has ended and the rest of its
failing tests are fed: the run ends after them. So the baseline's verdict
comes a test's time after the first run's end, not a pytest start's.

The plugin, ``rein_testgate_feed``, is written beside the report plugin.
It waits at most ``REIN_TESTS_FEED_S`` seconds (the verdict's time left)
for :data:`END`, polling every 5 ms; past that the session is interrupted
(pytest's exit code 2: no verdict, never "passed"). A verdict whose first
run fails no test ends the feed's run (killed, as any run a verdict no
longer needs). Not used for a run of the whole suite, one big enough for
pytest-xdist, or a custom runner (:mod:`rein.testgate.waves`).
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
