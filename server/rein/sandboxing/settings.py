"""``rein.sandbox``: what the OS sandbox of the model's commands hides and
opens, beyond the workspace (``approval.command: "sandboxed"`` turns it
on; :mod:`rein.tools.settings`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel

from rein.sandboxing.proxy import HOST_NAME, PRESETS

__all__ = ["ALSO_KINDS", "DEFAULT_ALSO", "DEFAULT_HIDDEN_PATHS", "SandboxSettings", "check_hosts"]

#: The other commands ``sandbox.also`` can run in the sandbox: the gates'
#: (tests, runtime, custom), the preview's, the dependency installs, the
#: hooks' and the MCP stdio servers'.
ALSO_KINDS: tuple[str, ...] = ("gates", "preview", "install", "hooks", "mcp")

#: The kinds sandboxed unless the person's settings say otherwise: those
#: whose commands run code the model wrote or chose (the tests and the
#: project's own scripts, its dev server, the packages it added and their
#: install scripts). The hooks and MCP servers are the person's own
#: programs, which often write to the home folder: theirs is opt-in.
DEFAULT_ALSO: tuple[str, ...] = ("gates", "preview", "install")

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
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".gem/credentials",
    ".password-store",
    ".local/share/keyrings",
    "Library/Keychains",
    # Other agents' and Rein's own credentials and stores.
    ".claude",
    ".claude.json",
    ".codex",
    ".local/share/rein",
    ".config/rein",
    # Sockets of daemons that run commands for whoever connects.
    ".docker/run",
    ".colima",
)


def _host_entry(value: str) -> bool:
    """A host name, with a port of its own or not (``example.com:8443``)."""
    host, colon, port = value.partition(":")
    if colon and not (port.isdigit() and 0 < int(port) < 65536):
        return False
    return bool(HOST_NAME.match(host.rstrip(".")))


def check_hosts(value: Any) -> Any:
    """``value`` when it is a list of presets and host names (with a
    ``:port`` or not), else ValueError naming the bad entries."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError('must be a list of presets or host names, e.g. ["pypi", "example.com"]')
    bad = [repr(v) for v in value if v not in PRESETS and not _host_entry(v)]
    if bad:
        raise ValueError(
            f"{', '.join(bad)}: each entry is a host name (with a :port or not) or one "
            f"of the presets {', '.join(sorted(PRESETS))}"
        )
    return value


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
    #: Hosts the sandboxed commands may reach, through Rein's allowlist
    #: proxy (``HTTP_PROXY``/``HTTPS_PROXY``): host names, or presets
    #: (``pypi``, ``npm``, ``github``, ``crates``, ``go``); a host is reached on
    #: ports 80 and 443 unless its entry names one (``example.com:8443``).
    #: Empty: no network.
    network: tuple[str, ...] = ()
    #: The other commands that run in the same sandbox (:data:`ALSO_KINDS`);
    #: empty: only ``run_command``'s. By default those that run code the
    #: model wrote or chose (:data:`DEFAULT_ALSO`). Installs also reach the
    #: package registries of the presets (:data:`~rein.sandboxing.proxy.REGISTRY_PRESETS`).
    also: tuple[str, ...] = DEFAULT_ALSO

    @field_validator("also", mode="before")
    @classmethod
    def _kinds(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"must be a list of kinds of command, e.g. {list(ALSO_KINDS[:2])}")
        bad = [repr(v) for v in value if v not in ALSO_KINDS]
        if bad:
            raise ValueError(f"{', '.join(bad)}: each entry is one of {', '.join(ALSO_KINDS)}")
        return value

    @field_validator("network", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        return check_hosts(value)

    @field_validator("hidden", "writable", mode="before")
    @classmethod
    def _absolute(cls, value: Any) -> Any:
        _paths(value, "~/.config/my-tool")
        relative = [repr(v) for v in value if not v.startswith(("/", "~/"))]
        if relative:
            raise ValueError(f"{', '.join(relative)}: a path is absolute or starts with ~/")
        return value
