"""Isolated sessions: a run in its own copy of the folder (a git worktree,
or a plain copy), gated there, and its changes brought back by hunks
(docs/user-guide.md, "Parallel runs in isolation")."""

from rein.isolation._git import GitError
from rein.isolation.cleanup import remove_isolated, sweep
from rein.isolation.registry import IsolatedRecord, Registry

__all__ = ["GitError", "IsolatedRecord", "Registry", "remove_isolated", "sweep"]
