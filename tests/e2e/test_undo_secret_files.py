"""A run the person let delete or overwrite secret files (``tools.secretFiles``)
is undone by ``rein undo`` like any other, yet no byte of the checkpoint
database holds their text: it is kept beside it, ``0600``
(:mod:`rein.checkpoints.secret_keep`). Real ``rein run`` and ``rein undo``
processes over a folder on disk and the real store."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from rein.store._checkpoint_schema import compress
from tests.checkpoint_scenario import script_call as call
from tests.e2e.test_undo_cli import Project

pytestmark = pytest.mark.e2e

OLD_ENV = "API_TOKEN=old-env-7f3a9c\n"
OLD_NPMRC = "//registry.npmjs.org/:_authToken=npm-old-41d2e8\n"
NEW_ENV = "API_TOKEN=new-prod-9b0e77\n"


def test_secret_files_deleted_and_overwritten_are_undone_and_never_in_the_database(
    tmp_path: Path,
) -> None:
    p = Project(tmp_path, {".env": OLD_ENV, ".npmrc": OLD_NPMRC, "app.py": "x = 1\n"})
    before = {name: (p.root / name).read_bytes() for name in (".env", ".npmrc", "app.py")}
    p.run(
        [
            {"tool_calls": [call("delete_file", path=".env")]},
            {
                "tool_calls": [
                    call("write_file", path=".npmrc", content="registry=https://example.invalid/\n")
                ]
            },
            {"tool_calls": [call("write_file", path=".env.production", content=NEW_ENV)]},
            {"text": "done"},
        ],
        # The person unprotected them (approval.denyGlobs holds .env* by default).
        config={"approval": {"denyGlobs": []}},
    )
    assert not (p.root / ".env").exists()

    kept = p.storage / "checkpoint-secrets"
    for path in p.storage.rglob("*"):
        if path.is_file() and kept not in path.parents:
            data = path.read_bytes()
            # The old texts were never the model's: in no file of the store.
            for secret in (OLD_ENV, OLD_NPMRC):
                assert secret.strip().encode() not in data, path
                assert compress(secret) not in data, path  # as the store keeps a text
            # The new one is in the transcript (the model wrote it), never
            # in the checkpoints.
            if path.name.startswith("checkpoints.db"):
                assert NEW_ENV.strip().encode() not in data, path
                assert compress(NEW_ENV) not in data, path
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    texts = sorted(f.read_text() for f in kept.iterdir() if f.name != "key")
    assert texts == sorted([OLD_ENV, OLD_NPMRC, NEW_ENV, "registry=https://example.invalid/\n"])
    assert {stat.S_IMODE(f.stat().st_mode) for f in kept.iterdir()} == {0o600}

    out = p.undo()
    assert out.returncode == 0, out.stdout + out.stderr
    assert {name: (p.root / name).read_bytes() for name in before} == before
    assert not (p.root / ".env.production").exists()
