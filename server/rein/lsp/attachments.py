"""The attachments of ``rein/prompt``: what the person picked with ``@`` in
the panel (a file, the selection, Problems, the terminal's last output),
each rendered as a tagged block the model reads after the prompt text::

    <attachment kind="file" path="src/x.py">
    ...the file as the editor holds it...
    </attachment>

Files are read through the workspace (an open buffer wins over the disk)
under the file tools' sandbox: a file outside the workspace, behind a
symlink out of it, protected by ``approval.denyGlobs`` or a secret file
(``tools.secretFiles``, :mod:`rein.tools.secret_files`: a file, or a
selection or problems in one) is refused with InvalidParams naming
``attachments[i].uri``, before any session is made.
Every block is cut to its share of :data:`MAX_ATTACHMENT_CHARS` with a note
saying what was left out (a terminal keeps its last output).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from rein.harness.errors import SandboxError, ToolError
from rein.harness.ports import Workspace
from rein.lsp.params import Attachment
from rein.tools.sandbox import Sandbox
from rein.tools.secret_files import DEFAULT_SECRET_RULES, SETTING, SecretFiles

__all__ = [
    "MAX_ATTACHMENTS_CHARS",
    "MAX_ATTACHMENT_CHARS",
    "render_attachments",
    "with_attachments",
]

#: The most characters one attachment's body brings into the prompt.
MAX_ATTACHMENT_CHARS = 40_000
#: The most characters all of a prompt's attachments bring together.
MAX_ATTACHMENTS_CHARS = 100_000

_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
#: Per kind, the field it needs and how to read it.
_NEEDS: dict[str, tuple[str, Callable[[Attachment], object]]] = {
    "file": ("uri", lambda item: item.uri),
    "selection": ("text", lambda item: item.text),
    "problems": ("diagnostics", lambda item: item.diagnostics),
    "terminal": ("text", lambda item: item.text),
}


def _invalid(index: int, field: str, problem: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(
        f"rein/prompt: invalid params: attachments[{index}].{field}: {problem}"
    )


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _body(text: str) -> str:
    # A closing tag inside the content must not end the block early.
    return text.replace("</attachment>", "<\\/attachment>")


def _lines(rng: Any) -> str:
    return f"{rng.start.line + 1}-{rng.end.line + 1}"


def _problem(diagnostic: Any) -> str:
    severity = _SEVERITY.get(diagnostic.severity or 1, "error")
    code = f" {diagnostic.code}" if diagnostic.code not in (None, "") else ""
    source = f" ({diagnostic.source})" if diagnostic.source else ""
    message = " ".join(diagnostic.message.split())
    return f"- line {diagnostic.range.start.line + 1}: {severity}{code}{source} {message}"


def _cut_head(text: str, room: int, what: str) -> str:
    if len(text) <= room:
        return text
    return (
        text[:room] + f"\n[... cut: {what} has {len(text)} characters; the first {room} are "
        "attached ...]"
    )


def _cut_tail(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    left_out = len(text) - room
    return f"[... the first {left_out} characters of the output are left out ...]\n" + text[-room:]


class _Renderer:
    def __init__(
        self, workspace: Workspace, relative: Callable[[str], str | None], sandbox: Sandbox
    ) -> None:
        self._workspace = workspace
        self._relative = relative
        self._sandbox = sandbox
        self._left = MAX_ATTACHMENTS_CHARS

    def _room(self) -> int:
        return max(0, min(MAX_ATTACHMENT_CHARS, self._left))

    def _spend(self, text: str) -> str:
        self._left -= len(text)
        return text

    def _path(self, index: int, uri: str) -> str:
        rel = self._relative(uri)
        if rel is None:
            raise _invalid(index, "uri", f"{uri} is not a file inside the workspace")
        try:
            resolved = self._sandbox.resolve(rel)
        except SandboxError as exc:
            raise _invalid(index, "uri", str(exc)) from exc
        secret = self._sandbox.secret_by(resolved)
        if secret is not None:
            raise _invalid(
                index,
                "uri",
                f"{resolved} is a secret file ({SETTING}: {secret!r}); not attached, so that "
                f"its content never reaches the model (change {SETTING} in your user "
                "settings to allow it)",
            )
        glob = self._sandbox.denied_by(resolved)
        if glob is not None:
            raise _invalid(
                index,
                "uri",
                f"{resolved} is protected by approval.denyGlobs ({glob}); not attached",
            )
        return resolved

    async def render(self, index: int, item: Attachment) -> str:
        needed, value_of = _NEEDS[item.kind]
        if value_of(item) is None:
            raise _invalid(index, needed, f"required for a {item.kind} attachment")
        path = self._path(index, item.uri) if item.uri is not None else None
        attrs = f'kind="{item.kind}"'
        if path is not None:
            attrs += f' path="{_attribute(path)}"'
        if item.range is not None:
            attrs += f' lines="{_lines(item.range)}"'
        if item.kind == "file":
            assert path is not None
            try:
                content = await self._workspace.read_text(path)
            except (ToolError, SandboxError) as exc:
                raise _invalid(index, "uri", str(exc)) from exc
            body = _cut_head(content.text, self._room(), path)
        elif item.kind == "problems":
            found = [_problem(d) for d in item.diagnostics or []]
            body = _cut_head("\n".join(found) or "(no problems)", self._room(), "the list")
        elif item.kind == "terminal":
            body = _cut_tail(item.text or "", self._room())
        else:
            body = _cut_head(item.text or "", self._room(), "the selection")
        return f"<attachment {attrs}>\n{_body(self._spend(body))}\n</attachment>"


async def render_attachments(
    attachments: Sequence[Attachment],
    workspace: Workspace,
    relative: Callable[[str], str | None],
    root: str,
    deny_globs: Sequence[str],
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> list[str]:
    """One tagged block per attachment, in order. ``relative`` maps a URI to
    its workspace-relative path (None outside the workspace). Raises
    InvalidParams naming ``attachments[i].field`` for one that cannot be
    attached."""
    renderer = _Renderer(workspace, relative, Sandbox(root, deny_globs, secret_files))
    return [await renderer.render(i, item) for i, item in enumerate(attachments)]


async def with_attachments(
    text: str,
    attachments: Sequence[Attachment],
    workspace: Workspace,
    relative: Callable[[str], str | None],
    root: str,
    deny_globs: Sequence[str],
    secret_files: SecretFiles = DEFAULT_SECRET_RULES,
) -> str:
    """The prompt text followed by its attachments' blocks."""
    if not attachments:
        return text
    blocks = await render_attachments(
        attachments, workspace, relative, root, deny_globs, secret_files
    )
    return "\n\n".join([text, *blocks])
