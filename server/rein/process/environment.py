"""The environment of the server's children: without secrets.

Every process Rein starts for the workspace (``run_command``, the gates'
installs and checks, previews, ripgrep) gets :func:`child_environment`: the
server's environment minus every variable that holds a secret, so a model
that runs ``env`` or a test that prints its environment never sees a
provider key. A variable is a secret when its name is one a configured
provider reads its key from (:func:`remember_secret_name`), or when it looks
like one (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ...).
The configuration passes one on explicitly (``tools.passEnv``); an explicit
``extra`` mapping (a preview's configured env) is added last, as configured.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["child_environment", "is_secret_name", "remember_secret_name"]

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|ACCESS_KEY|"
    r"PRIVATE_KEY|CREDENTIALS?|AUTH)$",
    re.IGNORECASE,
)

_secret_names: set[str] = set()


def remember_secret_name(name: str | None) -> None:
    """A variable a provider reads its key from: never passed to a child."""
    if name:
        _secret_names.add(name)


def is_secret_name(name: str) -> bool:
    return name in _secret_names or _SECRET_NAME.search(name) is not None


def child_environment(
    extra: Mapping[str, str] | None = None, *, pass_env: Iterable[str] = ()
) -> dict[str, str]:
    """The server's environment without secrets; ``pass_env`` names are
    kept even when they look secret; ``extra`` is added as given."""
    keep = set(pass_env)
    env = {k: v for k, v in os.environ.items() if k in keep or not is_secret_name(k)}
    if extra:
        env.update(extra)
    return env
