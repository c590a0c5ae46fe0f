"""``rein sessions`` on a storage folder that holds no session store."""

from __future__ import annotations

from pathlib import Path

import pytest

from rein.headless.session_list import list_sessions


@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_without_a_store_lists_nothing_and_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    # Defect: listing a mistyped --storage created the folder and an empty
    # sessions.db there.
    folder = tmp_path / "typo"
    assert list_sessions(str(folder), as_json=as_json) == 0
    assert capsys.readouterr().out == ("" if as_json else f"no sessions in {folder}\n")
    assert not folder.exists()
