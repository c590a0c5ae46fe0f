"""Shared pytest setup. Unit tests are offline: a guard refuses network
connections to anything but loopback. End-to-end tests (real subprocesses and
analyzers) carry the ``e2e`` marker and run last."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forkserver import VARIABLE, fork_server

_TESTS = Path(__file__).resolve().parent
_E2E_DIR = _TESTS / "e2e"
_LSP_DIR = _TESTS / "lsp"


def _is_e2e(item: pytest.Item) -> bool:
    path = Path(str(item.path)).resolve()
    if item.get_closest_marker("e2e") is not None or path.is_relative_to(_E2E_DIR):
        return True
    # The LSP editor fixture runs `rein serve` and a real ruff server.
    return path.is_relative_to(_LSP_DIR) and "client" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every end-to-end test ``e2e`` (whether or not its module says so)
    and move them after the others, keeping each group's order."""
    e2e = {id(item) for item in items if _is_e2e(item)}
    for item in items:
        if id(item) in e2e and item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.e2e)
    items.sort(key=lambda item: id(item) in e2e)


_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: object) -> object:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and not (
        host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")
    ):
        raise RuntimeError(f"tests must not reach the network (tried {address!r})")
    return _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


#: What a test keeps of the real home folder: variable -> folder in it.
_TOOL_HOMES = {
    "XDG_CACHE_HOME": ".cache",
    "XDG_CONFIG_HOME": ".config",
    "RUSTUP_HOME": ".rustup",
    "CARGO_HOME": ".cargo",
    "GOPATH": "go",
    "NPM_CONFIG_CACHE": ".npm",
    "NPM_CONFIG_USERCONFIG": ".npmrc",
}


@pytest.fixture(autouse=True, scope="session")
def _private_user_data(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sessions that tests (and the servers and ``rein run`` they start) keep
    in the default store go to a temporary folder, not the user's; HOME is a
    temporary folder too."""
    import os

    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))
    # Nor the person's home folder: their own ~/.claude hooks (and skills,
    # agents, commands) never reach a test. The toolchains and caches kept
    # there (rustup's, Go's, npm's, Rein's analyzers) and the git identity
    # stay where they were.
    real = Path.home()
    home = tmp_path_factory.mktemp("home")
    for name, folder in _TOOL_HOMES.items():
        if (real / folder).exists():
            os.environ.setdefault(name, str(real / folder))
    if (real / ".gitconfig").is_file():
        shutil.copyfile(real / ".gitconfig", home / ".gitconfig")
    os.environ["HOME"] = str(home)
    # The tests gate of every `rein serve`, `rein run` and `rein acp` a test
    # starts runs its tiny project's pytest with this interpreter, whose
    # entry-point plugins (pytest-lsp's lsprotocol, hypothesis, anyio,
    # xdist...) take about 2 s of CPU per pytest run, against 0.2 s bare;
    # the tiny projects use none of them (the gate names xdist itself with
    # `-p xdist`). A test about plugins sets up its own.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"


@pytest.fixture(autouse=True, scope="session")
def _rein_fork_server(
    _private_user_data: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The worker's fork server, which the tests' ``rein`` processes
    (tests.forkserver.REIN) start from: a start costs milliseconds instead of
    the second the interpreter's start and rein's imports take."""
    with fork_server(tmp_path_factory.mktemp("forkserver")) as path:
        os.environ[VARIABLE] = path
        yield
        os.environ.pop(VARIABLE, None)
