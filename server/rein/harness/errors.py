"""Rein's one error tree. Foreign exceptions are mapped into it at the boundary.

::

    ReinError
    ├── ConfigError            invalid configuration (names the bad key)
    ├── ModelError             a model turn could not be completed
    │   ├── ProviderError      the provider answered with an error
    │   │   ├── AuthError          401/403 (says which env var was read)
    │   │   ├── RequestError       400/404/422: the request was refused
    │   │   │   └── ContextLengthError  the prompt exceeds the model's window
    │   │   └── RateLimitError     429 (retryable)
    │   ├── TransientError     5xx, connection errors, stalls (retryable)
    │   ├── StreamError        malformed SSE event or JSON chunk
    │   └── ScriptError        replay script exhausted or expectation failed
    ├── ToolError              raised by a tool; becomes an is_error result
    │   ├── TransientToolError a failure that may pass (retried, harness.toolRetries)
    │   ├── SandboxError       a path outside the workspace or a denied glob
    │   └── FileChangedError   a write computed from a text the file no longer
    │                          holds (someone changed it since it was read);
    │                          nothing was written
    ├── StoreError             a store (sessions.db, checkpoints.db) cannot be
    │                          used; ``reason`` says why in a word (disk_full,
    │                          locked, read_only, io, corrupt, newer, ...)
    ├── ReviewError            a review request names no reviewed run or file
    ├── RestoreError           a restore that cannot be done (unknown or pruned
    │                          run, path outside the workspace, content not
    │                          stored); nothing was changed
    ├── CheckpointsOffError    checkpoints, a review or a restore asked of a
    │                          session that keeps no checkpoints
    └── BusyError              an agent or a session is running (or restoring)
                               and cannot take this now; nothing was changed

Every public exception class of ``rein`` is in the tree (tests/test_errors_tree.py
checks it); where callers catch a built-in kind too (``ValueError``,
``TimeoutError``) the class inherits both.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "BusyError",
    "CheckpointsOffError",
    "ConfigError",
    "ContextLengthError",
    "FileChangedError",
    "ModelError",
    "ProviderError",
    "RateLimitError",
    "ReinError",
    "RequestError",
    "RestoreError",
    "ReviewError",
    "SandboxError",
    "ScriptError",
    "StoreError",
    "StreamError",
    "ToolError",
    "TransientError",
    "TransientToolError",
]


class ReinError(Exception):
    """Base of every error Rein raises on purpose."""


class ConfigError(ReinError):
    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class ModelError(ReinError):
    """A model turn failed. ``retryable`` tells the retry policy what to do."""

    retryable: bool = False

    def __init__(self, message: str, *, streamed: bool = False) -> None:
        super().__init__(message)
        #: True when content had already reached the user: never retried then.
        self.streamed = streamed


class ProviderError(ModelError):
    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        streamed: bool = False,
    ) -> None:
        super().__init__(message, streamed=streamed)
        self.status = status
        self.retry_after = retry_after


class AuthError(ProviderError):
    pass


class RequestError(ProviderError):
    pass


class ContextLengthError(RequestError):
    """The provider refused the request because the prompt is longer than
    the model's context window (OpenAI ``context_length_exceeded``,
    Anthropic "prompt is too long"). The loop answers it with its
    over-window relief and one retry."""


class RateLimitError(ProviderError):
    retryable = True


class TransientError(ProviderError):
    retryable = True


class StreamError(ModelError):
    pass


class ScriptError(ModelError):
    pass


class ToolError(ReinError):
    """Raised by a tool to report a failure the model should read."""


class TransientToolError(ToolError):
    """Raised by a tool for a failure that may pass if the call runs again
    (a flaky network, a busy service). The tool vouches that running the
    call again is safe: the executor retries it up to
    ``harness.toolRetries`` times, with a ``tool_retry`` event before each
    retry, and the model reads the last error when every attempt failed."""


class SandboxError(ToolError):
    pass


class FileChangedError(ToolError):
    """A write carried the text it was computed from
    (``Workspace.write_text(expected_text=...)``) and the file no longer
    holds it: another edit, session, process or the person changed it since
    it was read. Nothing was written; the caller may read it again and redo
    its change on the new text."""


class StoreError(ReinError):
    """A store that cannot be used. The message names the file and the cause
    for the person; ``reason`` is the cause in a word for code ("disk_full",
    "locked", "read_only", "io", "corrupt", "missing", "" when unknown)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class ReviewError(ReinError):
    """A review request (:mod:`rein.checkpoints.review`) that cannot be done: an
    unknown run, a path or hunk that is not under review. Nothing changed."""


class RestoreError(ReinError):
    """A restore (or a checkpoint lookup) that cannot be done: an unknown or
    pruned run, a path outside the workspace or not changed by the run,
    content that was not stored. Raised before any write: nothing changed."""


class CheckpointsOffError(ReinError):
    """Checkpoints, a review or a restore asked of a session that keeps no
    checkpoints (``checkpoints.enabled`` is false). Nothing changed."""


class BusyError(ReinError, RuntimeError):
    """An agent or a session that cannot take this now: a prompt while a run
    is active (steer or queue a follow-up), a restore or undo while a run or
    another restore is. Nothing was changed. ``AgentBusyError`` is its
    documented name on :class:`rein.harness.Agent`."""
