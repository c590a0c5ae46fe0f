"""A corpus benchmark's table: named columns, right-aligned, one row per project."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["print_columns"]


def print_columns(columns: Sequence[tuple[str, str]], rows: list[dict[str, Any]]) -> None:
    """Print a header of the columns' titles and, per row, each column's key's value."""
    cells = [[title for title, _ in columns]]
    cells += [[str(row.get(key)) for _, key in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for line in cells:
        print("  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)))
