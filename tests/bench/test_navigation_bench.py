"""The navigation bench's downloads and greps are bounded: an archive is
unpacked with tarfile's data filter, every subprocess has a timeout."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from rein.bench import navigation


def test_an_archive_that_writes_outside_its_folder_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        member = tarfile.TarInfo("../escaped.txt")
        member.size = 3
        tar.addfile(member, io.BytesIO(b"bad"))
    with pytest.raises(tarfile.FilterError):
        navigation.unpack(archive, tmp_path / "into")
    assert not (tmp_path / "escaped.txt").exists()


def test_every_subprocess_of_the_bench_has_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen.append(kwargs)
        raise subprocess.TimeoutExpired(args, kwargs.get("timeout") or 0)

    monkeypatch.setattr(navigation.subprocess, "run", run)
    monkeypatch.setattr(navigation, "corpus_cache", lambda: tmp_path)
    with pytest.raises(subprocess.TimeoutExpired):
        navigation._grep(tmp_path, "f", "*.py")
    with pytest.raises(subprocess.TimeoutExpired):
        navigation._typescript_source()
    assert [k.get("timeout") for k in seen] == [
        navigation.GREP_TIMEOUT_S,
        navigation.NPM_TIMEOUT_S,
    ]
