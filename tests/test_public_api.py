"""What the docs tell people to import is importable from where they say
(issue 31 item 9): every ``from rein... import ...`` line of a code block and
every backticked dotted Python name (``rein.harness.Agent``) in
docs/agent-api.md, docs/toolkits.md and docs/testing.md resolves. A module
may move behind these names; the names may not break. Backticked names that
are VS Code settings (``rein.model.provider``) are settings, not Python."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("agent-api.md", "toolkits.md", "testing.md")
_FROM = re.compile(r"^\s*from (rein(?:\.\w+)*) import \(?([\w, ]+)\)?\s*$", re.M)
_DOTTED = re.compile(r"`(rein(?:\.\w+)+)`")


def _settings() -> set[str]:
    manifest = json.loads((ROOT / "vscode-client" / "package.json").read_text(encoding="utf-8"))
    return set(manifest["contributes"]["configuration"]["properties"])


def documented_names() -> list[tuple[str, str, str]]:
    """(page, module or dotted prefix, name) for each documented import."""
    settings = _settings()
    found: set[tuple[str, str, str]] = set()
    for page in PAGES:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        for module, names in _FROM.findall(text):
            for name in (n.strip() for n in names.split(",")):
                if name:
                    found.add((page, module, name))
        for dotted in _DOTTED.findall(text):
            if dotted in settings or any(s.startswith(dotted + ".") for s in settings):
                continue
            module, _, name = dotted.rpartition(".")
            found.add((page, module, name))
    return sorted(found)


def resolve(module: str, name: str) -> object:
    """``module.name`` as an attribute or a submodule; the module part may
    itself be ``package.Class`` (``rein.harness.tools.ToolContext.update``)."""
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in [*parts[cut:], name]:
            try:
                value = getattr(value, attr)
            except AttributeError:
                value = importlib.import_module(f"{value.__name__}.{attr}")  # type: ignore[attr-defined]
        return value
    raise ModuleNotFoundError(module)


def test_the_docs_name_some_imports() -> None:
    names = {(module, name) for _, module, name in documented_names()}
    assert ("rein.harness", "Agent") in names
    assert ("rein.harness.toolkit", "tool") in names


@pytest.mark.parametrize(
    ("page", "module", "name"),
    [pytest.param(*entry, id=f"{entry[1]}.{entry[2]}") for entry in documented_names()],
)
def test_a_documented_name_is_importable_from_where_the_docs_say(
    page: str, module: str, name: str
) -> None:
    assert resolve(module, name) is not None, f"docs/{page}: {module}.{name}"
