"""What ``session/prompt`` carries, as the text of a Rein run, and how a
run's end becomes the prompt's stop reason.

Text blocks are joined; a resource link becomes a ``[file: <path>]`` line
(relative to the workspace when it is inside it, else the URI; a file
URI's fragment kept, as ``[file: src/x.py#L10:20]``); an embedded
text resource a ``<resource uri="...">`` block with its text. Images, audio
and binary resources are refused, naming the block: ``initialize`` does not
offer them; so is an embedded resource that is a secret file of the
workspace (``tools.secretFiles``, :mod:`rein.tools.secret_files`), as the
editor's attachments are.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from rein.acp.errors import invalid_field
from rein.harness import RunResult
from rein.harness.messages import AssistantMessage, Message
from rein.tools.secret_files import DEFAULT_SECRET_RULES, SETTING, SecretFiles

__all__ = ["TURN_CAP_SETTING", "command_line", "prompt_text", "stop_reason"]

#: The setting a run that hit the turn cap names in its error.
TURN_CAP_SETTING = "harness.maxModelTurnsPerRun"


def _link_text(uri: str, root: Path) -> str:
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        path = Path(unquote(parsed.path))
        # A mention of lines keeps them (Zed's ``#L10:20``).
        lines = f"#{parsed.fragment}" if parsed.fragment else ""
        try:
            return f"{path.resolve().relative_to(root)}{lines}"
        except ValueError:
            return f"{path}{lines}"
    return uri


def _secret(uri: str, root: Path, secret_files: SecretFiles) -> str | None:
    """The glob that makes a file URI inside ``root`` a secret file."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file") or not secret_files:
        return None
    path = Path(unquote(parsed.path))
    try:
        rel = path.relative_to(root).as_posix()
        real = path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return None
    return secret_files.matched_by(rel, real)


def prompt_text(
    blocks: Sequence[Any], root: Path, secret_files: SecretFiles = DEFAULT_SECRET_RULES
) -> str:
    """The run's text for ``blocks``; InvalidParams naming ``prompt[i]`` for
    a block Rein does not take (an embedded secret file among them)."""
    parts: list[str] = []
    for i, block in enumerate(blocks):
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[file: {_link_text(block.uri, root)}]")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if not isinstance(resource, TextResourceContents):
                raise invalid_field(
                    f"prompt[{i}]", "a binary embedded resource is not supported; embed text"
                )
            secret = _secret(resource.uri, root, secret_files)
            if secret is not None:
                raise invalid_field(
                    f"prompt[{i}]",
                    f"{resource.uri} is a secret file ({SETTING}: {secret!r}); not sent, so "
                    f"that its content never reaches the model (change {SETTING} in your "
                    "configuration to allow it)",
                )
            parts.append(f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>')
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise invalid_field(
                f"prompt[{i}]",
                f"{kind} content is not supported (initialize offers text, resource links "
                "and embedded text resources)",
            )
    text = "\n".join(parts).strip()
    if not text:
        raise invalid_field("prompt", "the prompt has no text")
    return text


def command_line(blocks: Sequence[Any], root: Path) -> tuple[str, str]:
    """A ``/name ...`` prompt's command line and what follows the expanded
    command: the text blocks joined by spaces, a mentioned file one word
    (its path, quoted when it has spaces), so ``$1`` .. ``$9`` count it as
    one; embedded resources' texts come after (second item). Call it after
    :func:`prompt_text` accepted ``blocks``."""
    words: list[str] = []
    after: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            words.append(block.text.strip())
        elif isinstance(block, ResourceContentBlock):
            words.append(shlex.quote(_link_text(block.uri, root)))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                words.append(shlex.quote(_link_text(resource.uri, root)))
                after.append(f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>')
    extra = "\n\n".join(after)
    return " ".join(w for w in words if w), f"\n\n{extra}" if extra else ""


def stop_reason(result: RunResult, messages: Sequence[Message]) -> StopReason:
    """The ACP stop reason of a run: aborted -> cancelled; the turn cap ->
    max_turn_requests; a reply cut at the model's token limit -> max_tokens;
    everything else (completed, failed, waiting) -> end_turn."""
    if result.status == "aborted":
        return "cancelled"
    if result.status == "failed" and result.error and TURN_CAP_SETTING in result.error:
        return "max_turn_requests"
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if result.status == "completed" and last is not None and last.stop_reason == "length":
        return "max_tokens"
    return "end_turn"
