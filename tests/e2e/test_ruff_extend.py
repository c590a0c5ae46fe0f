"""A run that changes a file ruff's settings ``extend`` names, whatever its
name (no ``.toml`` or ``.json`` suffix: ``extend = "config/ruff-base"``,
``"ruff-base.cfg"``, ``"../shared/ruff-base"`` from a nested project), so
that an unchanged module gets new findings: the real ruff server, a real
headless session. Before, the change was taken for a file no analyzer reads
(``ruff-base.cfg``, ``ruff-base``: the reach narrowed to nothing) or for a
folder's name (``config/ruff-base``: ruff was never told), and ruff went on
with the old rules: the verdict passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_setting_changes import MODULE, _gate

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("files", "changed"),
    [
        pytest.param(
            {"pyproject.toml": '[tool.ruff]\nextend = "config/ruff-base"\n'},
            "config/ruff-base",
            id="no suffix",
        ),
        pytest.param(
            {"ruff.toml": 'extend = "ruff-base.cfg"\n'},
            "ruff-base.cfg",
            id="another suffix",
        ),
        pytest.param(
            {
                "sub/pyproject.toml": '[tool.ruff]\nextend = "../shared/ruff-base"\n',
            },
            "shared/ruff-base",
            id="from a nested project",
        ),
        pytest.param(
            {
                ".ruff.toml": 'extend = "one.toml"\n',
                "one.toml": 'extend = "two.rules"\n',
            },
            "two.rules",
            id="a chain",
        ),
    ],
)
async def test_a_change_to_what_ruff_extends_blocks_on_the_new_findings(
    tmp_path: Path, files: dict[str, str], changed: str
) -> None:
    root = tmp_path / "w"
    for path, text in {**files, changed: '[lint]\nselect = ["E"]\n'}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    module = "sub/m.py" if "sub/pyproject.toml" in files else "m.py"
    (root / module).write_text(MODULE)
    edit = {"path": changed, "old_string": '["E"]', "new_string": '["ALL"]'}
    # ruff's findings are warnings.
    gate = await _gate(root, "ruff", edit, severity="warning")
    assert gate.status == "blocked", gate.detail
    codes = {(b.path, b.code) for b in gate.blockers}
    assert {(module, "F401"), (module, "ANN001"), (module, "D103")} <= codes, codes
