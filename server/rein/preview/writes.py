"""What the preview writes: the output mark at each workspace write (a
program that reloads itself, ``reload: "self"``, is observed from the write
that made it reload), which writes changed a manifest (the next load is a
restart), and which changed files are the preview's own output
(``gates.preview.outputs``, and what its process holds open for writing)."""

from __future__ import annotations

import fnmatch
import logging
import posixpath
from collections import deque
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rein.harness.config import PreviewGateConfig
from rein.harness.gating.dependencies import DEFAULT_MANIFESTS
from rein.harness.ports import Mutation
from rein.preview.output_log import OutputLog
from rein.preview.values import _PreviewRun

__all__ = ["WRITES_KEPT", "WriteWatch", "WritesFiles", "is_manifest"]

log = logging.getLogger("rein.preview.coordinator")

#: Writes remembered for "self" reloads (older ones are long loaded).
WRITES_KEPT = 256


@runtime_checkable
class WritesFiles(Protocol):
    """A PreviewProcess that can tell which workspace files it holds open
    for writing (optional; the local processes can, on Linux)."""

    def files_open_for_writing(self) -> set[str]: ...


@dataclass(frozen=True, slots=True)
class _Write:
    """A mutation as the preview saw it: where its output stood then."""

    generation: int
    mark: int
    code: bool
    #: It changed a dependency manifest (``pyproject.toml``, ...).
    manifest: bool = False


def is_manifest(path: str) -> bool:
    """``path`` is a dependency manifest: a change installs (the
    dependencies gate) and changes what the program runs."""
    name = posixpath.basename(path)
    return any(fnmatch.fnmatch(name, pattern) for pattern in DEFAULT_MANIFESTS)


class WriteWatch:
    """Mixed into :class:`~rein.preview.coordinator.PreviewCoordinator`."""

    config: PreviewGateConfig
    loaded_generation: int
    _output: OutputLog
    _run: _PreviewRun | None
    _writes: deque[_Write]
    _written: set[str]

    def on_mutation(self, mutation: Mutation) -> None:
        """A MutationListener: note where the output stands at this write (a
        program that reloads itself starts its reload here)."""
        if any(w.generation == mutation.generation for w in self._writes):
            return
        paths = mutation.paths
        if mutation.origin == "external":  # the preview's own log is no reason to reload
            paths = self.without_outputs(paths)
        code = any(self.config.is_code(p) for p in paths)
        manifest = any(is_manifest(p) for p in paths)
        self._writes.append(_Write(mutation.generation, self._output.total, code, manifest))

    def _manifest_changed(self, generation: int) -> bool:
        """A write the preview has not loaded yet, up to ``generation``,
        changed a manifest: the load must be a restart, not a hot reload."""
        return any(
            w.manifest for w in self._writes if self.loaded_generation < w.generation <= generation
        )

    def _self_reload_mark(self, generation: int) -> tuple[int, bool] | None:
        """For a "self" reload of ``generation``: the output index at the
        newest write of code the preview has not loaded yet, and whether
        there is one (a change of documentation alone does not make the
        program reload: the mark is then now). None when no write was noted
        (the host does not report its mutations)."""
        pending = [w for w in self._writes if self.loaded_generation < w.generation <= generation]
        if not pending:
            return None
        code = [w for w in pending if w.code]
        if code:
            return code[-1].mark, True
        return self._output.total, False

    def is_preview_output(self, path: str) -> bool:
        """``path`` (workspace-relative) is the preview's own output: it
        matches ``gates.preview.outputs``, or the running preview holds (or
        held) it open for writing, like a log. Hosts leave such files out of
        the external changes, so they do not reset the analyzer's quiet
        period."""
        return not self.without_outputs((path,))

    def without_outputs(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """``paths`` less the preview's own output: the hosts' filter of the
        external changes their disk watcher reports. The running preview's
        open files are looked up once per call, and only when a path is
        neither listed nor known already."""
        kept = tuple(p for p in paths if p not in self._written and not self.config.is_output(p))
        if kept and self._look_up_written():
            kept = tuple(p for p in kept if p not in self._written)
        return kept

    def _look_up_written(self) -> bool:
        """Add what the running preview holds open for writing to the files
        known as its output; False when it cannot tell (or it has exited: what
        it wrote stays known, as its last writes may be reported late)."""
        run = self._run
        if run is None or not run.alive or not isinstance(run.process, WritesFiles):
            return False
        try:
            self._written |= run.process.files_open_for_writing()
        except Exception:
            log.exception("looking up the files the preview writes failed")
            return False
        return True
