"""The republish an analyzer that publishes owes after a change it cannot
see in a document (an install, a file created or deleted, its settings
sent again to resume a stopped analysis).

Such a server republishes only the files whose diagnostics changed and
says nothing of the others, so nothing tells that it is done: each of its
open files is owed (:class:`OwedRefresh`) until it publishes for it or a
grace period passes (:data:`ENVIRONMENT_GRACE_S`, :data:`INSTALL_GRACE_S`),
and the analyzer is not idle before then (a verdict would read the
diagnostics from before the change). A server that answers pulls is asked
again instead (its files are owed as any change's are).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

__all__ = ["ENVIRONMENT_GRACE_S", "INSTALL_GRACE_S", "OwedRefresh"]

#: After a change of the file set (a file created or deleted), how long an
#: analyzer that watches files may stay silent before it is taken as having
#: nothing new to say (pyright waits 0.5 s for more library changes, then
#: republishes only what changed).
ENVIRONMENT_GRACE_S = 3.0
#: The same after an install: basedpyright rebuilds its program and resolves
#: every import again, which took over 3 s on a busy 2-core machine (the
#: verdict then still said the installed package could not be resolved).
INSTALL_GRACE_S = 15.0


class OwedRefresh(set[str]):
    """The open files owed a republish, until :attr:`until` (monotonic
    seconds, read from ``clock``)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.until = 0.0
        self._clock = clock

    def owe(self, paths: Iterable[str], grace_s: float) -> None:
        """Every one of ``paths`` is owed, for ``grace_s`` from now (what
        was owed before is replaced)."""
        self.clear()
        self.update(paths)
        self.until = self._clock() + grace_s

    def holds(self, now: float) -> bool:
        """Something is still owed at ``now`` (within the grace period)."""
        return bool(self) and now < self.until
