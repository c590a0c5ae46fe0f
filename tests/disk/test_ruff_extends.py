"""The files ruff's settings ``extend``, whatever their names
(:mod:`rein.disk.ruff_extends`): followed through chains, relative to the
file naming them, outside the workspace left out, worked out again after a
settings change; and the reach of a change to one is not known."""

from __future__ import annotations

from pathlib import Path

from rein.disk.ruff_extends import RuffExtends


def _extends(files: dict[str, str], root: Path = Path("/w")) -> RuffExtends:
    return RuffExtends(root, files.get, lambda: list(files))


def test_chains_are_followed_from_every_settings_file() -> None:
    files = {
        "pyproject.toml": '[tool.ruff]\nextend = "config/ruff-base"\n',
        "config/ruff-base": 'extend = "../shared/more.cfg"\n',
        "shared/more.cfg": "",
        "sub/.ruff.toml": 'extend = "../config/ruff-base"\n',
        "other/ruff.toml": 'extend = "/elsewhere/base.toml"\n',  # outside
        "tools/pyproject.toml": '[tool.black]\nextend = "x"\n',  # not ruff's
    }
    assert _extends(files).named() == {
        "config/ruff-base": ("pyproject.toml", "sub/.ruff.toml"),
        "shared/more.cfg": ("pyproject.toml", "sub/.ruff.toml"),
    }


def test_a_cycle_ends_and_unreadable_settings_name_nothing() -> None:
    files = {
        "ruff.toml": 'extend = "a.cfg"\n',
        "a.cfg": 'extend = "ruff.toml"\n',
        "pyproject.toml": "[tool.ruff\n",
    }
    assert _extends(files).named() == {"a.cfg": ("ruff.toml",), "ruff.toml": ("ruff.toml",)}


def test_a_settings_change_is_read_again() -> None:
    files = {"ruff.toml": 'extend = "one.cfg"\n', "one.cfg": ""}
    extends = _extends(files)
    assert set(extends.named()) == {"one.cfg"}
    files["ruff.toml"] = 'extend = "two.cfg"\n'
    extends.changed(["app.py"])
    assert set(extends.named()) == {"one.cfg"}  # nothing of ruff's changed
    extends.changed(["ruff.toml"])
    assert set(extends.named()) == {"two.cfg"}
