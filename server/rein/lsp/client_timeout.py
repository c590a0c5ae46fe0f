"""The error of a request to the client that got no answer in time, and
which setting bounds each request (the one
:func:`rein.lsp.channel.request_bound` reads for it). Imported when a request first times out (or a caller catches
it), not when the server starts: it is one of Rein's errors, and the error
tree is imported with the core."""

from __future__ import annotations

from rein.harness.errors import ReinError

__all__ = ["BOUND_SETTINGS", "ClientTimeout"]

#: Which setting bounds which client method (the docs list the same).
BOUND_SETTINGS = {
    "rein/diagnostics": "gates.analyzer.requestTimeoutMs",
    "workspace/applyEdit": "harness.clientRequestTimeoutMs",
    "rein/saveDocuments": "harness.clientRequestTimeoutMs",
    "rein/navigate": "harness.clientRequestTimeoutMs",
    "rein/confirm": "approval.timeoutMs",
    "rein/askUser": "approval.timeoutMs",
}


class ClientTimeout(ReinError, TimeoutError):
    """The client did not answer ``method`` within ``seconds``. A
    ``TimeoutError`` too: callers that catch timeouts (or ``OSError``)
    catch it."""

    def __init__(self, method: str, seconds: float) -> None:
        self.method = method
        self.seconds = seconds
        setting = BOUND_SETTINGS.get(method)
        where = f" ({setting})" if setting else ""
        super().__init__(f"the editor did not answer {method} within {seconds:g} s{where}")
