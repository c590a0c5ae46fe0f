"""The LSP client channel: the editor side of ``ClientChannel``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class FakeClientChannel:
    """The editor side of ``rein.lsp.channel.ClientChannel`` for unit tests
    of the LSP adapters: ``answers[method]`` is a list of results (or
    exceptions to raise) given in order; every request is recorded."""

    def __init__(self, answers: Mapping[str, list[Any]] | None = None) -> None:
        self.answers = {m: list(a) for m, a in (answers or {}).items()}
        self.requests: list[tuple[str, Any]] = []
        self.unsupported: set[str] = set()
        #: uri -> the open document (anything with ``source`` and ``version``).
        self.documents: dict[str, Any] = {}

    def document(self, uri: str) -> Any:
        return self.documents.get(uri)

    def open_documents(self) -> list[str]:
        return list(self.documents)

    def supports(self, method: str) -> bool:
        return method not in self.unsupported

    async def request(self, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        answer = self.answers[method].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer
