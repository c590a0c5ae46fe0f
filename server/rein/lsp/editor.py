"""The editor as Rein's workspace, diagnostics, approver and user channel.

* :class:`EditorWorkspace` reads open documents from the text document sync
  (the editor's buffers are the truth) and the disk for the rest; writes go
  through ``workspace/applyEdit``: a versioned TextDocumentEdit for an open
  document, CreateFile/DeleteFile/RenameFile for file operations.
* :class:`EditorDiagnostics` asks the client for its diagnostics
  (``rein/diagnostics``); ``rein/diagnosticsChanged`` feeds the coordinator.
* :class:`EditorApprover` / :class:`EditorUserChannel` back ``rein/confirm``
  and ``rein/askUser``; a client that answers MethodNotFound is remembered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from rein.harness.errors import SandboxError, ToolError
from rein.harness.generations import (
    AfterChange,
    AppliedChange,
    BeforeChange,
    ChangeHooks,
    MutationLog,
)
from rein.harness.ports import (
    ApprovalAnswer,
    ApprovalRequest,
    Diagnostic,
    DiagnosticsSnapshot,
    FileContent,
    Mutation,
    MutationOrigin,
)
from rein.lsp.channel import ClientTimeout, method_not_found

if TYPE_CHECKING:
    from rein.lsp.channel import ClientChannel

__all__ = [
    "EditorApprover",
    "EditorDiagnostics",
    "EditorUserChannel",
    "EditorWorkspace",
    "path_to_uri",
    "uri_to_path",
]

log = logging.getLogger(__name__)

NO_DIAGNOSTICS = "the client does not answer rein/diagnostics (method not found)"
NO_CONFIRM = (
    "this editor cannot ask the person (it does not support rein/confirm), so calls "
    "that need approval are denied"
)


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def _end_position(text: str) -> lsp.Position:
    """A position after the last character (clamped by editors)."""
    return lsp.Position(line=text.count("\n") + 1, character=0)


class EditorWorkspace:
    """Workspace port over the editor. One instance per server."""

    def __init__(self, client: ClientChannel, root: Path, mutations: MutationLog) -> None:
        self.client = client
        self._root = root.resolve()
        self.mutations = mutations
        self._generation = 0
        #: uri -> the text we just applied; the editor's didChange echo of it
        #: is ours, anything else is the person typing.
        self._echo: dict[str, str] = {}
        #: uris Rein asked the editor to save; their didSave is not the person's.
        self._own_saves: set[str] = set()
        self._hooks = ChangeHooks()
        #: Called with the paths right before an edit is sent to the editor
        #: (the diagnostics coordinator: the editor may publish for them
        #: before it answers).
        self.on_sending: Callable[[tuple[str, ...]], None] | None = None

    # ------------------------------------------------- around a change

    def before_change(self, callback: BeforeChange) -> Callable[[], None]:
        """Register ``callback``, awaited with the paths before a write,
        delete or rename is applied (the analyzer gate captures a file's
        baseline there, as with the headless TrackedWorkspace). Returns the
        function that removes it. A raising callback is logged; the change
        goes on."""
        return self._hooks.before_change(callback)

    def after_change(self, callback: AfterChange) -> Callable[[], None]:
        """Register ``callback``, awaited with the :class:`AppliedChange`
        once the editor applied it (checkpoints store the new content)."""
        return self._hooks.after_change(callback)

    async def _about_to_change(self, *paths: str) -> None:
        await self._hooks.about_to_change(*paths)

    # ------------------------------------------------------------------ paths

    @property
    def root(self) -> str:
        return str(self._root)

    @property
    def generation(self) -> int:
        return max(self._generation, self.mutations.latest)

    def uri(self, rel: str) -> str:
        return path_to_uri(self._path(rel))

    def _path(self, rel: str) -> Path:
        path = (self._root / rel).resolve()
        if path != self._root and self._root not in path.parents:
            raise SandboxError(f"{rel} is outside the workspace")
        return path

    def relative(self, uri: str) -> str | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        try:
            return path.resolve().relative_to(self._root).as_posix()
        except ValueError:
            return None

    def _open_document(self, uri: str) -> Any | None:
        return self.client.document(uri)

    def _mutate(self, paths: tuple[str, ...], origin: MutationOrigin = "agent") -> Mutation:
        self._generation = self.generation + 1
        mutation = Mutation(self._generation, paths, origin)
        self.mutations.record(mutation)
        return mutation

    # ------------------------------------------------------- person's edits

    def on_did_change(self, uri: str) -> Mutation | None:
        """A didChange/didOpen/didSave arrived: a person's edit unless it is
        the echo of our own applied edit."""
        rel = self.relative(uri)
        if rel is None:
            return None
        doc = self._open_document(uri)
        expected = self._echo.get(uri)
        if expected is not None and doc is not None and doc.source == expected:
            del self._echo[uri]
            return None
        return self._mutate((rel,), "person")

    def note_external(self, paths: tuple[str, ...]) -> Mutation | None:
        """Files changed on disk by something other than the editor (a
        command, a formatter, git). A file whose disk text equals its open
        buffer is the echo of a save, not a change, and is left out."""
        changed = tuple(p for p in paths if not self._saved_buffer(p))
        return self._mutate(changed, "external") if changed else None

    def _saved_buffer(self, rel: str) -> bool:
        try:
            doc = self._open_document(self.uri(rel))
        except SandboxError:
            return False
        if doc is None:
            return False
        try:
            return bool((self._root / rel).read_text(encoding="utf-8") == doc.source)
        except (OSError, UnicodeDecodeError):
            return False

    def own_save(self, uri: str) -> bool:
        """True (once) when a didSave is the echo of Rein's own save request."""
        if uri in self._own_saves:
            self._own_saves.discard(uri)
            return True
        return False

    async def _save(self, uris: list[str]) -> None:
        """Ask the editor to save what Rein changed, so commands, tests and
        the preview (which read the disk) see it. Best effort: a client
        without ``rein/saveDocuments`` leaves the buffers unsaved."""
        if not self.client.supports("rein/saveDocuments"):
            return
        self._own_saves.update(uris)
        try:
            answer = await self.client.request("rein/saveDocuments", {"uris": uris})
        except ClientTimeout as exc:
            self._own_saves.difference_update(uris)
            log.warning("%s: the buffers stay unsaved", exc)
            return
        except JsonRpcException as exc:
            self._own_saves.difference_update(uris)
            if not method_not_found(exc):
                log.warning("rein/saveDocuments failed: %s", exc)
            return
        # Left dirty by the editor: they held the person's unsaved changes
        # before Rein's edit. Their next save is the person's own, and the
        # buffer (which reads prefer) is ahead of the disk until then.
        unsaved = answer.get("unsaved") if isinstance(answer, dict) else None
        if isinstance(unsaved, list):
            left = [uri for uri in unsaved if isinstance(uri, str)]
            self._own_saves.difference_update(left)
            if left:
                log.info(
                    "left unsaved (the person's unsaved changes are in them): %s", ", ".join(left)
                )

    # ------------------------------------------------------------------ reads

    async def read_text(self, path: str) -> FileContent:
        uri = self.uri(path)
        doc = self._open_document(uri)
        if doc is not None:
            return FileContent(path, doc.source, doc.version, self.generation)
        file = self._path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ToolError(f"File not found: {path}") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory; use list_dir") from None
        except UnicodeDecodeError:
            raise ToolError(f"{path} is not UTF-8 text") from None
        return FileContent(path, text, None, self.generation)

    async def exists(self, path: str) -> bool:
        return self._open_document(self.uri(path)) is not None or self._path(path).exists()

    # ----------------------------------------------------------------- writes

    async def _apply(self, edit: lsp.WorkspaceEdit, label: str, paths: tuple[str, ...]) -> None:
        if self.on_sending is not None:
            self.on_sending(paths)
        try:
            result = await self.client.apply_edit(
                lsp.ApplyWorkspaceEditParams(edit=edit, label=label)
            )
        except ClientTimeout as exc:
            raise ToolError(
                f"{exc}, so it is not known whether the change was applied: read the "
                "file again before you redo it."
            ) from None
        except JsonRpcException as exc:
            raise ToolError(f"The editor could not apply the edit: {exc}") from exc
        if not result.applied:
            reason = result.failure_reason or "no reason given"
            raise ToolError(
                f"The editor refused the edit ({reason}). The document probably changed "
                "since you read it (the person may be typing): read the file again and "
                "redo the change on its current text. Nothing the person typed was lost."
            )

    async def write_text(
        self, path: str, text: str, *, expected_version: int | None = None
    ) -> Mutation:
        uri = self.uri(path)
        await self._about_to_change(path)
        doc = self._open_document(uri)
        changes: list[Any] = []
        if doc is not None:
            version = expected_version if expected_version is not None else doc.version
            if expected_version is not None and doc.version != expected_version:
                raise ToolError(
                    f"{path} changed in the editor since you read it (version {expected_version}, "
                    f"now {doc.version}): read it again and redo the change. Nothing the person "
                    "typed was lost."
                )
            old = doc.source
            changes.append(
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=[
                        lsp.TextEdit(
                            range=lsp.Range(lsp.Position(0, 0), _end_position(old)), new_text=text
                        )
                    ],
                )
            )
        else:
            file = self._path(path)
            if file.exists():
                old = file.read_text(encoding="utf-8", errors="replace")
                end = _end_position(old)
            else:
                changes.append(
                    lsp.CreateFile(
                        uri=uri,
                        options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                    )
                )
                end = lsp.Position(0, 0)
            changes.append(
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=None
                    ),
                    edits=[lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), end), new_text=text)],
                )
            )
        self._echo[uri] = text
        try:
            await self._apply(
                lsp.WorkspaceEdit(document_changes=changes), f"Rein: edit {path}", (path,)
            )
        except BaseException:
            self._echo.pop(uri, None)
            raise
        mutation = self._mutate((path,))
        await self._hooks.changed(AppliedChange(mutation, "write", text))
        await self._save([uri])
        return mutation

    async def delete(self, path: str) -> Mutation:
        uri = self.uri(path)
        await self._about_to_change(path)
        await self._apply(
            lsp.WorkspaceEdit(
                document_changes=[
                    lsp.DeleteFile(
                        uri=uri, options=lsp.DeleteFileOptions(ignore_if_not_exists=False)
                    )
                ]
            ),
            f"Rein: delete {path}",
            (path,),
        )
        mutation = self._mutate((path,))
        await self._hooks.changed(AppliedChange(mutation, "delete"))
        return mutation

    async def rename(self, old: str, new: str) -> Mutation:
        await self._about_to_change(old, new)
        await self._apply(
            lsp.WorkspaceEdit(
                document_changes=[
                    lsp.RenameFile(
                        old_uri=self.uri(old),
                        new_uri=self.uri(new),
                        options=lsp.RenameFileOptions(overwrite=False),
                    )
                ]
            ),
            f"Rein: rename {old} to {new}",
            (old, new),
        )
        mutation = self._mutate((old, new))
        await self._hooks.changed(AppliedChange(mutation, "rename"))
        return mutation


def _convert(path: str, d: dict[str, Any]) -> Diagnostic:
    rng = d.get("range") or {}
    start = rng.get("start") or {}
    end = rng.get("end") or {}
    code = d.get("code")
    if isinstance(code, dict):  # some clients send {value, target}
        code = code.get("value")
    return Diagnostic(
        path=path,
        line=int(start.get("line", 0)),
        character=int(start.get("character", 0)),
        end_line=end.get("line"),
        end_character=end.get("character"),
        severity=int(d.get("severity") or 1),
        code=str(code) if code is not None else None,
        source=d.get("source"),
        message=str(d.get("message", "")),
    )


#: The bound on one rein/diagnostics answer: a client that does not answer
#: within it leaves that snapshot blind (never an unbounded wait).
ANSWER_TIMEOUT_S = 10.0
#: Without a settle bound from the caller, how long a ``pending`` answer is
#: waited on before the snapshot says ``stale``.
PENDING_WAIT_S = 5.0
#: The bound on the next asks after one went unanswered.
RETRY_TIMEOUT_S = 1.0


class _Answer:
    """One rein/diagnostics answer: its items and whether the client says
    more are coming; ``blind`` says why there is no answer."""

    __slots__ = ("blind", "items", "pending")

    def __init__(
        self, items: list[dict[str, Any]], pending: bool = False, blind: str | None = None
    ) -> None:
        self.items = items
        self.pending = pending
        self.blind = blind


class EditorDiagnostics:
    """The raw source: the editor's current diagnostics from all its
    language servers, asked with ``rein/diagnostics``.

    It is a :class:`~rein.harness.ports.SettlingDiagnostics` as far as an
    editor allows (it has no progress API for other extensions' servers):

    * :meth:`ensure_open` asks ``rein/diagnostics`` for the files; the client
      opens (loads) the documents it is asked about, so its language servers
      analyse them before the run changes them.
    * :meth:`wait_idle`: idle is a quiet period (``quiet_ms``) after the last
      ``rein/diagnosticsChanged``, and no ``pending: true`` in the client's
      answer for the files opened or changed since the last idle point (a
      client whose analysis is progressive says so until the last layer is
      published).
    * :meth:`environment_changed` does nothing beyond what wait_idle waits
      for: the editor's servers watch the files themselves.

    Never blind silently: a client without ``rein/diagnostics``, one that
    does not answer within ``answer_timeout_s`` or answers with an error
    gives a snapshot whose ``blind`` says so.
    """

    def __init__(
        self,
        client: ClientChannel,
        workspace: EditorWorkspace,
        *,
        quiet_ms: int = 150,
        answer_timeout_s: float = ANSWER_TIMEOUT_S,
        pending_wait_s: float = PENDING_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.workspace = workspace
        self.quiet_s = quiet_ms / 1000.0
        self.answer_timeout_s = answer_timeout_s
        self.pending_wait_s = pending_wait_s
        self._clock = clock
        self._last_change = -1e9
        self._changed = asyncio.Event()
        #: Files opened or changed since the last idle point: wait_idle asks
        #: the client whether their analysis is still pending.
        self._watched: set[str] = set()
        #: The last ask got no answer in time.
        self._silent = False

    @property
    def supported(self) -> bool:
        return self.client.supports("rein/diagnostics")

    # ------------------------------------------------------------ feeding

    def notify_changed(self, paths: Sequence[str]) -> None:
        """A ``rein/diagnosticsChanged`` arrived for ``paths`` (they restart
        the quiet period; they are not asked about: the client opens what it
        is asked about, and an editor may publish for thousands of files)."""
        self._last_change = self._clock()
        self._changed.set()
        self._changed = asyncio.Event()

    def notify_mutation(self, mutation: Mutation) -> None:
        """A file changed: its analysis is owed until the client says done."""
        self._watched.update(mutation.paths)

    # ------------------------------------------------------------ asking

    async def _ask(self, uris: list[str] | None) -> _Answer:
        if not self.supported:
            return _Answer([], blind=NO_DIAGNOSTICS)
        # After one unanswered ask, the next ones wait briefly until the
        # client answers again (a verdict asks up to three times).
        bound = (
            min(self.answer_timeout_s, RETRY_TIMEOUT_S) if self._silent else self.answer_timeout_s
        )
        try:
            result = await asyncio.wait_for(
                self.client.request("rein/diagnostics", {"uris": uris}), bound
            )
        except TimeoutError:
            log.warning("rein/diagnostics: no answer within %g s", bound)
            self._silent = True
            return _Answer(
                [],
                blind=(
                    "the client does not answer rein/diagnostics (no answer within "
                    f"{bound:g} s, gates.analyzer.requestTimeoutMs)"
                ),
            )
        except JsonRpcException as exc:
            if method_not_found(exc):
                log.warning(
                    "the client does not answer rein/diagnostics: the analyzer gate is blind"
                )
                return _Answer([], blind=NO_DIAGNOSTICS)
            log.warning("rein/diagnostics failed: %s", exc)
            return _Answer([], blind=f"the client's rein/diagnostics failed: {exc}")
        except Exception as exc:  # the client went away, or a bad frame: not fatal
            log.warning("rein/diagnostics failed", exc_info=True)
            return _Answer(
                [], blind=f"the client's rein/diagnostics failed: {type(exc).__name__}: {exc}"
            )
        self._silent = False
        if not isinstance(result, dict):
            return _Answer([])
        items = [i for i in result.get("items") or [] if isinstance(i, dict)]
        return _Answer(items, pending=result.get("pending") is True)

    async def _wait_change(self, seconds: float) -> None:
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), max(seconds, 0.0))

    def _uris(self, paths: Sequence[str]) -> list[str]:
        out: list[str] = []
        for path in sorted(set(paths)):
            try:
                out.append(self.workspace.uri(path))
            except SandboxError:
                continue
        return out

    async def _settled_answer(
        self, uris: list[str] | None, deadline: float
    ) -> tuple[_Answer, bool]:
        """Ask until the client no longer says ``pending`` (each pending
        answer waits for the next rein/diagnosticsChanged), at most until
        ``deadline``. Returns the last answer and whether it is settled."""
        while True:
            answer = await self._ask(uris)
            if answer.blind is not None or not answer.pending:
                return answer, True
            left = deadline - self._clock()
            if left <= 0:
                return answer, False
            await self._wait_change(left)

    # ------------------------------------------------------------ the port

    async def snapshot(
        self, paths: Sequence[str] | None = None, *, min_generation: int = 0
    ) -> DiagnosticsSnapshot:
        uris = self._uris(paths) if paths is not None else None
        answer, settled = await self._settled_answer(uris, self._clock() + self.pending_wait_s)
        generation = max(self.workspace.generation, min_generation)
        if answer.blind is not None:
            return DiagnosticsSnapshot((), generation, stale=True, blind=answer.blind)
        out: list[Diagnostic] = []
        for item in answer.items:
            path = self.workspace.relative(str(item.get("uri", "")))
            if path is None:
                continue
            out.extend(_convert(path, d) for d in item.get("diagnostics") or [])
        return DiagnosticsSnapshot(
            tuple(out),
            generation,
            stale=not settled,
            sources=("editor",),
            stale_reason=None
            if settled
            else "the editor still said pending after gates.analyzer.maxWaitMs",
        )

    async def ensure_open(self, paths: Sequence[str], *, importers: bool = True) -> Sequence[str]:
        """Ask the client about ``paths``: it opens (loads) the documents it
        is asked about, so the editor's servers analyse them. The answer
        itself is not used (wait_idle asks again). The editor's analyzers
        decide what else they analyse: nothing else is opened."""
        uris = self._uris(paths)
        if not uris:
            return ()
        self._watched.update(paths)
        await self._ask(uris)
        return ()

    async def wait_idle(self, timeout_s: float) -> bool:
        """No ``pending`` for the watched files and a quiet period after the
        last rein/diagnosticsChanged; False when ``timeout_s`` passed first.
        A blind client has nothing to wait for (its snapshot says blind)."""
        deadline = self._clock() + timeout_s
        watched = sorted(self._watched)
        while True:
            if watched:
                answer, settled = await self._settled_answer(self._uris(watched), deadline)
                if answer.blind is not None:
                    return True
                if not settled:
                    return False
            quiet_left = self.quiet_s - (self._clock() - self._last_change)
            if quiet_left <= 0:
                self._watched.difference_update(watched)
                return True
            left = deadline - self._clock()
            if left <= 0:
                return False
            await self._wait_change(min(left, quiet_left))

    async def environment_changed(self, paths: Sequence[str]) -> None:
        """Nothing to tell: the editor's language servers watch the files
        and the environment themselves; the verdict waits for their quiet
        period (:meth:`wait_idle`)."""
        return None


class EditorApprover:
    """``rein/confirm``; a client without it makes "ask" fall back to deny,
    and so does no answer within ``approval.timeoutMs`` (the model reads why)."""

    def __init__(self, client: ClientChannel, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def confirm(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        if not self.client.supports("rein/confirm"):
            raise ToolError(NO_CONFIRM)
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "tool": request.tool,
            "title": request.title,
            "detail": request.detail,
        }
        if request.rules:
            # "Always allow" keeps all of them; ``rule`` is the first, shown.
            rules = [{"kind": r.kind, "pattern": r.pattern} for r in request.rules]
            params["rule"] = rules[0]
            params["rules"] = rules
        try:
            result = await self.client.request("rein/confirm", params)
        except ClientTimeout as exc:
            raise ToolError(
                f"nobody answered the approval request within {exc.seconds:g} s "
                "(approval.timeoutMs), so the call is refused"
            ) from None
        except JsonRpcException as exc:
            if method_not_found(exc):
                raise ToolError(NO_CONFIRM) from None
            log.info("rein/confirm failed: %s", exc)
            return False
        approved = bool(isinstance(result, dict) and result.get("approved"))
        remember = result.get("remember") if isinstance(result, dict) else None
        if remember is None or not approved:
            return approved
        if remember not in ("session", "workspace"):
            log.warning(
                'rein/confirm: remember must be "session" or "workspace", not %r; '
                "the call is approved this once",
                remember,
            )
            return approved
        return ApprovalAnswer(approved=True, remember=remember)


class EditorUserChannel:
    """``rein/askUser``; None when the client has no answer or no support,
    or none within ``approval.timeoutMs``."""

    def __init__(self, client: ClientChannel, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def ask(self, question: str) -> str | None:
        if not self.client.supports("rein/askUser"):
            return None
        try:
            result = await self.client.request(
                "rein/askUser", {"sessionId": self.session_id, "question": question}
            )
        except ClientTimeout as exc:
            log.warning("%s: the question stays unanswered", exc)
            return None
        except JsonRpcException:
            return None
        answer = result.get("answer") if isinstance(result, dict) else None
        return answer if isinstance(answer, str) and answer.strip() else None


def workspace_root(server: Any) -> Path:
    root = server.workspace.root_path
    return Path(root) if root else Path(os.getcwd())
