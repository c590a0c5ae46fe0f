"""A scripted :class:`~rein.harness.navigation_ports.Navigator`: answers
from tables keyed by (path, position), and records what it was asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rein.harness.navigation_ports import (
    CodeLocation,
    CodeRange,
    CodeSymbol,
    NavigationUnavailable,
    Position,
    TextReplacement,
)


def at(path: str, line: int, character: int, length: int = 1) -> CodeLocation:
    """A location of ``length`` characters at a 0-based line and character."""
    return CodeLocation(
        path, CodeRange(Position(line, character), Position(line, character + length))
    )


@dataclass
class FakeNavigator:
    source: str = "fake-server"
    references_of: dict[tuple[str, Position], Sequence[CodeLocation]] = field(default_factory=dict)
    definitions_of: dict[tuple[str, Position], Sequence[CodeLocation]] = field(default_factory=dict)
    hovers: dict[tuple[str, Position], str] = field(default_factory=dict)
    outlines: dict[str, Sequence[CodeSymbol]] = field(default_factory=dict)
    renames: dict[tuple[str, Position], Mapping[str, Sequence[TextReplacement]]] = field(
        default_factory=dict
    )
    #: Every question: (method, path, position).
    asked: list[tuple[str, str, Position | None]] = field(default_factory=list)

    def _answer(self, table: Mapping[tuple[str, Position], object], method: str, path: str,
                position: Position) -> object:  # fmt: skip
        self.asked.append((method, path, position))
        if (path, position) not in table:
            raise NavigationUnavailable(f"fake-server knows nothing at {path} {position}")
        return table[(path, position)]

    async def definition(self, path: str, position: Position) -> Sequence[CodeLocation]:
        return self._answer(self.definitions_of, "definition", path, position)  # type: ignore[return-value]

    async def references(
        self, path: str, position: Position, *, include_declaration: bool = True
    ) -> Sequence[CodeLocation]:
        return self._answer(self.references_of, "references", path, position)  # type: ignore[return-value]

    async def hover(self, path: str, position: Position) -> str | None:
        return self.hovers.get((path, position))

    async def document_symbols(self, path: str) -> Sequence[CodeSymbol]:
        self.asked.append(("document_symbols", path, None))
        return self.outlines.get(path, ())

    async def workspace_symbols(self, query: str) -> Sequence[CodeSymbol]:
        return [s for symbols in self.outlines.values() for s in symbols if query in s.name]

    async def rename(
        self, path: str, position: Position, new_name: str
    ) -> Mapping[str, Sequence[TextReplacement]]:
        return self._answer(self.renames, "rename", path, position)  # type: ignore[return-value]
