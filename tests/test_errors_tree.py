"""Every exception class Rein defines is in its one error tree
(:mod:`rein.harness.errors`): a caller can catch ``ReinError`` for every
error Rein raises on purpose, and a host maps the tree in one place
(:mod:`rein.lsp.errors`, :mod:`rein.acp.errors`).

Left out, on purpose: private classes (a leading ``_``: control flow inside
one module, each saying so in its docstring), and the wire forms of the
mapped errors (JSON-RPC error classes such as
:class:`rein.lsp.errors.RequestFailed`: what a Rein error becomes on the
wire, not one of Rein's errors).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pygls.exceptions import JsonRpcException

import rein
from rein.harness.errors import BusyError, ReinError


def _modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(rein.__path__, "rein.")
        if not info.name.rsplit(".", 1)[-1].startswith("__")
    )


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for name in _modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == name and issubclass(value, BaseException):
                found.append(value)
    return found


def test_every_public_exception_class_is_a_rein_error() -> None:
    classes = _exception_classes()
    outside = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in classes
        if not cls.__name__.startswith("_")
        and not issubclass(cls, JsonRpcException)
        and not issubclass(cls, ReinError)
    ]
    assert outside == []
    # The walk found the tree itself (the check can fail).
    assert BusyError in classes and ReinError in classes


def test_a_private_exception_outside_the_tree_says_why() -> None:
    for cls in _exception_classes():
        if cls.__name__.startswith("_") and not issubclass(cls, ReinError):
            assert cls.__doc__ and "outside" in cls.__doc__, cls


def test_the_agent_and_the_session_raise_one_busy_error() -> None:
    from rein.harness import AgentBusyError
    from rein.session import SessionBusyError

    assert AgentBusyError is BusyError
    assert SessionBusyError is BusyError
    assert issubclass(BusyError, ReinError) and issubclass(BusyError, RuntimeError)
