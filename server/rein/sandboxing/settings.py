"""``rein.sandbox``: what the OS sandbox of the model's commands hides and
opens, beyond the workspace (``approval.command: "sandboxed"`` turns it
on; :mod:`rein.tools.settings`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel

__all__ = ["DEFAULT_HIDDEN_PATHS", "SandboxSettings"]

#: The person's secrets, relative to their home folder: not visible in the
#: sandbox at all (an empty folder, an empty file).
DEFAULT_HIDDEN_PATHS: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".password-store",
    ".local/share/keyrings",
    "Library/Keychains",
)


def _paths(value: Any, what: str) -> Any:
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, str) and v.strip() for v in value
    ):
        raise ValueError(f'must be a list of paths, e.g. ["{what}"]')
    return value


class SandboxSettings(BaseModel):
    """``rein.sandbox``."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: More paths hidden in the sandbox, besides :data:`DEFAULT_HIDDEN_PATHS`:
    #: absolute, or ``~/...`` (the home folder).
    hidden: tuple[str, ...] = ()
    #: More folders the sandboxed commands may write, besides the workspace
    #: and the session's temporary folder: absolute, or ``~/...``.
    writable: tuple[str, ...] = ()
    #: The bubblewrap program: a name on ``PATH`` or a path.
    bwrap: str = "bwrap"

    @field_validator("hidden", "writable", mode="before")
    @classmethod
    def _absolute(cls, value: Any) -> Any:
        _paths(value, "~/.config/my-tool")
        relative = [repr(v) for v in value if not v.startswith(("/", "~/"))]
        if relative:
            raise ValueError(f"{', '.join(relative)}: a path is absolute or starts with ~/")
        return value
