"""One run of pytest as data: its folder, how its environment differs
from the one it is started in, and its arguments.

The gate runs it either as a shell command through its ``CommandRunner``
(:meth:`PytestCall.shell`: a cold run, or the warm client's), or hands it
to the warm pytest process itself (:meth:`PytestCall.edits`,
:mod:`rein.testgate.direct`), which applies the same changes to the
environment it was started with. Either way the run sees the same
variables: the child environment (no secrets) as the gates' sandbox has
it, with these changes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

__all__ = ["PytestCall"]


@dataclass(frozen=True, slots=True)
class PytestCall:
    """``argv`` run in ``cwd`` with the environment it starts in changed:
    ``unset`` removed, then ``env`` set, ``defaults`` set where unset or
    empty, and ``path`` put before ``PYTHONPATH`` (or as it, when unset
    or empty)."""

    cwd: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    unset: tuple[str, ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()
    path: tuple[str, ...] = ()

    def shell(self) -> str:
        """The shell command: ``cd``, the changes, then ``exec``."""
        parts = [f"cd {shlex.quote(self.cwd)} && "]
        if self.unset:
            parts.append(f"unset {' '.join(self.unset)} && ")
        parts += [f"{name}={shlex.quote(value)} " for name, value in self.env]
        parts += [f"{name}=${{{name}:-{shlex.quote(value)}}} " for name, value in self.defaults]
        if self.path:
            joined = shlex.quote(":".join(self.path))
            parts.append(f'PYTHONPATH={joined}"${{PYTHONPATH:+:$PYTHONPATH}}" ')
        parts.append(f"exec {shlex.join(self.argv)}")
        return "".join(parts)

    def edits(self) -> list[str]:
        """The changes as the warm process reads them, in order: ``-NAME``
        unsets, ``=NAME=value`` sets, ``?NAME=value`` sets where unset or
        empty, ``+PYTHONPATH=value`` puts before."""
        edits = [f"-{name}" for name in self.unset]
        edits += [f"={name}={value}" for name, value in self.env]
        edits += [f"?{name}={value}" for name, value in self.defaults]
        if self.path:
            edits.append(f"+PYTHONPATH={':'.join(self.path)}")
        return edits
