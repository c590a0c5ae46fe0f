"""The compiled modules of the gate's runs: one prefix for all trees, a
tree's own when sandboxed, and nothing left that a tree does not own."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rein.testgate.pycache import drop_foreign, mirror
from rein.testgate.shadow import OWNER, ShadowTree, sweep_orphans


def _compiled(prefix: Path, folder: Path) -> Path:
    """A compiled module of ``folder`` in ``prefix``."""
    file = mirror(prefix, folder) / "mod.cpython-311.pyc"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(b"")
    return file


def test_runs_share_the_users_prefix_a_sandboxed_one_has_its_trees_own(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    (src / ".venv" / "lib").mkdir(parents=True)  # linked, not copied
    prefix = tmp_path / "prefix"
    tree = ShadowTree(src, prefix)
    other = ShadowTree(src, prefix)
    try:
        shared, sandboxed = tree.sync({}), tree.sync({}, shared=False)
        assert shared.pycache == prefix == other.sync({}).pycache
        assert sandboxed.pycache == tree.own_pycache
        assert sandboxed.pycache is not None and sandboxed.pycache.parent == sandboxed.private
        mine, theirs = _compiled(prefix, tree.root), _compiled(prefix, other.root)
        # A test's temporary folder (pytester's, a reused --basetemp):
        # what was compiled of it goes before the next run.
        temp = Path(tempfile.gettempdir())
        foreign = _compiled(prefix, temp / "pytest-of-someone" / "pytest-3" / "gen")
        # This test's own folder is in the temporary folder too: what the
        # tree links to (the environment) stays, the rest of it goes.
        linked, beside = _compiled(prefix, src / ".venv" / "lib"), _compiled(prefix, tmp_path)
        tree.sync({})
        assert (mine.exists(), theirs.exists(), foreign.exists()) == (True, True, False)
        assert tmp_path.is_relative_to(temp) and (linked.exists(), beside.exists()) == (True, False)
        # A tree's removal deletes its own modules, no other tree's.
        tree.remove()
        assert (mine.exists(), theirs.exists()) == (False, True)
    finally:
        tree.remove()
        other.remove()
    assert not mirror(prefix, other.root.parent).exists()
    drop_foreign(tmp_path / "no-prefix")  # nothing compiled yet: nothing to do


def test_a_tree_whose_owner_died_is_swept_a_living_ones_never(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    src.mkdir()
    prefix = tmp_path / "prefix"
    living = ShadowTree(src, prefix)
    # A tree whose owner was killed: its lock file is there, held by no one.
    dead = Path(tempfile.mkdtemp(prefix="rein-tests-"))
    (dead / OWNER).touch()
    dead_module = _compiled(prefix, dead / "proj")
    # A tree without a lock (being made, another version's) is left.
    unmarked = Path(tempfile.mkdtemp(prefix="rein-tests-"))
    # The modules of a tree that is gone.
    gone = _compiled(prefix, Path(tempfile.gettempdir()) / "rein-tests-gone0" / "proj")
    try:
        # (A sweep of another test worker's may have taken it first.)
        swept = sweep_orphans(prefix)
        assert living.root.parent not in swept
        assert (dead.exists(), dead_module.exists(), gone.exists()) == (False, False, False)
        assert living.root.is_dir() and unmarked.is_dir()
    finally:
        living.remove()
        unmarked.rmdir()
