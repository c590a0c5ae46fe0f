"""Rein's options of an ACP ``session/new``: ``_meta: {"rein": {...}}``
(the SDK passes ``_meta``'s keys as arguments: this is the ``rein`` one).

- ``isolated``: true runs the session in its own copy of ``cwd``
  (:mod:`rein.acp.isolated`);
- ``allowHosts``: hosts this session's sandboxed commands may reach
  besides ``sandbox.network`` (presets or host names, with a ``:port`` or
  not), as ``rein/newSession``'s ``allowHosts`` and ``rein run
  --allow-host``; no other session sees them. Not for an isolated session
  yet.

Anything else, or a value of the wrong kind, is InvalidParams naming the
field (``_meta.rein.allowHosts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rein.acp import errors
from rein.sandboxing.settings import check_hosts

__all__ = ["SessionOptions", "session_options"]

_FIELD = "_meta.rein"


@dataclass(frozen=True)
class SessionOptions:
    isolated: bool = False
    allow_hosts: tuple[str, ...] = ()


def session_options(meta: Any) -> SessionOptions:
    """The options ``meta`` (``_meta.rein``, None when absent) asks for."""
    if meta is None:
        return SessionOptions()
    if not isinstance(meta, dict):
        raise errors.invalid_field(_FIELD, 'an object, e.g. {"isolated": true}')
    unknown = sorted(set(meta) - {"isolated", "allowHosts"})
    if unknown:
        raise errors.invalid_field(f"{_FIELD}.{unknown[0]}", "not an option of Rein")
    isolated = meta.get("isolated", False)
    if not isinstance(isolated, bool):
        raise errors.invalid_field(f"{_FIELD}.isolated", "true or false")
    hosts = meta.get("allowHosts", [])
    try:
        check_hosts(hosts)
    except ValueError as exc:
        raise errors.invalid_field(f"{_FIELD}.allowHosts", str(exc)) from None
    if hosts and isolated:
        raise errors.invalid_field(
            f"{_FIELD}.allowHosts", "not available for an isolated session yet"
        )
    return SessionOptions(isolated, tuple(hosts))
