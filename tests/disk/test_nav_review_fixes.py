"""review14b's defects in the navigation work: the line a position is on,
a file that cannot be read, a header chain's depth, and the files a
question opens (each test fails before its fix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from rein.disk.analyzer_server import _Analyzer
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.importers import ImportIndex
from rein.disk.nav_servers import Stamp, WordCache, naming, word_at
from rein.disk.pool_navigator import PoolNavigator
from rein.harness.navigation_ports import Position
from tests.fakes.lsp_client import RecordingLanguageClient


def test_the_word_at_a_place_counts_lines_as_lsp_does() -> None:
    # A form feed (GNU C, CPython's own sources) is no line break in LSP.
    text = "x = 1\x0cy = 2\ndef total(): ...\n"
    assert word_at(text, 1, 5) == "total"
    assert word_at("a\u2028b\r\nc\rtotal\n", 2, 0) == "total"


def test_a_file_that_cannot_be_read_is_kept_among_those_to_see() -> None:
    # Dropped, it was neither opened nor named, and a rename went ahead
    # without it; kept, it stays unseen and the rename is refused naming it.
    texts = {"a.c": "total();\n", "b.c": None, "c.c": "subtotal();\n"}
    assert naming(texts.get, sorted(texts), "total") == ["a.c", "b.c"]


def test_the_words_of_a_file_are_read_again_only_when_its_stamp_changed() -> None:
    texts: dict[str, str | None] = {"a.c": "total();\n", "b.c": "subtotal();\n", "c.c": None}
    stamps: dict[str, Stamp | None] = {"a.c": (1, 9), "b.c": (1, 12), "c.c": (1, 0)}
    reads: list[str] = []

    def read(path: str) -> str | None:
        reads.append(path)
        return texts[path]

    cache = WordCache()
    paths = sorted(texts)
    assert cache.naming(read, stamps.get, paths, "total") == ["a.c", "c.c"]
    assert cache.naming(read, stamps.get, paths, "subtotal") == ["b.c", "c.c"]
    assert reads == ["a.c", "b.c", "c.c", "c.c"]  # the unreadable one: again
    texts["a.c"], stamps["a.c"] = "count();\n", (2, 9)
    texts["b.c"], stamps["b.c"] = "total();\n", None  # the editor's buffer: no stamp
    reads.clear()
    assert cache.naming(read, stamps.get, paths, "total") == ["b.c", "c.c"]
    assert cache.naming(read, stamps.get, paths, "count") == ["a.c", "c.c"]
    assert reads == ["a.c", "b.c", "c.c", "b.c", "c.c"]


def test_a_c_file_five_headers_from_the_changed_one_is_its_importer() -> None:
    files = {f"h{i}.h": f'#include "h{i + 1}.h"\n' for i in range(1, 7)}
    files["h7.h"] = '#include "h1.h"\nint f(void);\n'  # a cycle: ends all the same
    files["main.c"] = '#include "h1.h"\n'
    index = ImportIndex(files, files.get)
    assert index.importers("h7.h", 100) == [f"h{i}.h" for i in range(1, 7)] + ["main.c"]


class _Answering(RecordingLanguageClient):
    async def text_document_references_async(self, params: Any) -> list[Any]:
        return []


async def test_the_files_a_question_opened_are_closed_after_its_answer(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def total(): ...\ndef count(): ...\n")
    for i in range(3):
        (tmp_path / f"t{i}.py").write_text("from a import total\n")
        (tmp_path / f"c{i}.py").write_text("from a import count\n")
    spec = next(s for s in DEFAULT_ANALYZERS if s.name == "basedpyright")
    # Over workspaceMaxFiles (0): basedpyright sees only its open files.
    pool = AnalyzerPool(tmp_path, [spec], workspace_max_files=0, quiet_ms=0)
    await pool.prepare()
    analyzer = _Analyzer(spec, "basedpyright-langserver", pool)
    analyzer.client = cast(Any, _Answering())
    analyzer.alive = True
    analyzer.capabilities = {"referencesProvider": True}
    pool.analyzers = [analyzer]
    pool._started.set()
    navigator = PoolNavigator(pool, index_wait_s=0.1)
    assert analyzer.file_by_file
    await navigator.references("a.py", Position(0, 4))
    sent = cast(_Answering, analyzer.client).sent
    opened = sorted(p.text_document.uri.rsplit("/", 1)[1] for m, p in sent if m.endswith("didOpen"))
    closed = sorted(
        p.text_document.uri.rsplit("/", 1)[1] for m, p in sent if m.endswith("didClose")
    )
    assert opened == ["a.py", "t0.py", "t1.py", "t2.py"]
    # The files naming `total` were open for the question, and closed after it;
    # none is reopened at a restart. The asked-about file stays.
    assert closed == ["t0.py", "t1.py", "t2.py"]
    assert sorted(analyzer.versions) == ["a.py"]
    assert pool.requested == ["a.py"]
    # A change's file is not closed: one open before the question stays.
    await pool.ensure_open(["c0.py"], importers=False)
    await navigator.references("a.py", Position(1, 4))
    assert sorted(analyzer.versions) == ["a.py", "c0.py"]
    assert pool.requested == ["a.py", "c0.py"]
