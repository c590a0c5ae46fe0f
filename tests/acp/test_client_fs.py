"""The workspace through the ACP client's ``fs/*`` methods
(``rein.acp.client_fs``), against the fake client of tests/fakes.py: the
client's unsaved buffer is what is read, a write goes into its buffer and is
a mutation generation like a disk write, the disk answers without the
capability or outside a session, a client error is a ToolError the model
reads, and the disk watcher takes the editor's save of Rein's text for no
change."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest
from acp.exceptions import RequestError

from rein.acp.client_fs import ClientFsWorkspace
from rein.acp.context import current_session
from rein.disk.analyzer_specs import DEFAULT_ANALYZERS
from rein.disk.analyzers import AnalyzerPool
from rein.disk.disk_workspace import DiskWorkspace
from rein.disk.watcher import DiskWatcher
from rein.harness.errors import FileChangedError, ToolError
from rein.harness.generations import MutationLog, TrackedWorkspace
from rein.harness.ports import FileUpdate
from rein.harness.tools import ToolEnvironment
from rein.tools import EditFileTool, ReadFileTool
from rein.tools.settings import ApprovalSettings, ToolSettings
from tests.faithful_bytes import FAITHFUL_BYTES, FIELDS
from tests.fakes.acp_client import FakeAcpClient, FakeClientLink
from tests.fakes.clock import run_in_virtual_time
from tests.fakes.tools import ToolCallRecorder

RUFF = DEFAULT_ANALYZERS[0]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("x = 1\n")
    return tmp_path


@contextmanager
def in_session(session_id: str = "sess-1") -> Iterator[None]:
    token = current_session.set(session_id)
    try:
        yield
    finally:
        current_session.reset(token)


def client_fs(
    root: Path, client: FakeAcpClient, **link: object
) -> tuple[ClientFsWorkspace, TrackedWorkspace]:
    fs = ClientFsWorkspace(
        DiskWorkspace(root),
        FakeClientLink(client, **link),
        current_session.get,  # type: ignore[arg-type]
    )
    return fs, TrackedWorkspace(fs, MutationLog())


async def test_a_read_is_the_client_s_unsaved_buffer(root: Path) -> None:
    app = str(root / "app.py")
    client = FakeAcpClient(buffers={app: "x = 2  # unsaved\n"})
    fs, workspace = client_fs(root, client)
    with in_session():
        content = await workspace.read_text("app.py")
    assert content.text == "x = 2  # unsaved\n"
    assert client.calls == [("fs/read_text_file", {"session_id": "sess-1", "path": app})]
    assert fs.text_of("app.py") == "x = 2  # unsaved\n"
    assert (root / "app.py").read_text() == "x = 1\n"


async def test_read_file_shows_the_unsaved_buffer(root: Path) -> None:
    # The tool refuses a disk read that differs from the file it checked;
    # the editor's buffer (a text with a version) is no such read.
    client = FakeAcpClient(buffers={str(root / "app.py"): "x = 2\ny = 3\n"})
    _, workspace = client_fs(root, client)
    recorder = ToolCallRecorder(
        ToolEnvironment(
            workspace=workspace, settings=ToolSettings(approval=ApprovalSettings(read="allow"))
        )
    )
    with in_session():
        result = await recorder.run(ReadFileTool(), path="app.py")
        again = await recorder.run(ReadFileTool(), path="app.py")
    assert not result.is_error, result.content
    assert "x = 2" in result.content and "y = 3" in result.content
    assert result.details["version"] == again.details["version"] == 1
    client.buffers[str(root / "app.py")] = "x = 4\n"
    with in_session():
        changed = await recorder.run(ReadFileTool(), path="app.py")
    assert changed.details["version"] == 2 and "x = 4" in changed.content


async def test_edit_file_changes_the_buffer_as_the_person_left_it(root: Path) -> None:
    app = str(root / "app.py")
    client = FakeAcpClient(buffers={app: "x = 1\nname = 'draft'\n"})  # unsaved line
    _, workspace = client_fs(root, client)
    recorder = ToolCallRecorder(
        ToolEnvironment(
            workspace=workspace, settings=ToolSettings(approval=ApprovalSettings(write="allow"))
        )
    )
    with in_session():
        result = await recorder.run(
            EditFileTool(), path="app.py", old_string="'draft'", new_string="'final'"
        )
    assert not result.is_error, result.content
    assert client.buffers[app] == "x = 1\nname = 'final'\n"
    assert (root / "app.py").read_text() == "x = 1\n"
    assert workspace.generation == 1
    assert [m.paths for m in recorder.record.to_validate()] == [("app.py",)]


async def test_a_read_that_shows_an_unsaved_change_is_announced(root: Path) -> None:
    (root / "same.py").write_text("s = 1\n")
    app = str(root / "app.py")
    client = FakeAcpClient(buffers={app: "x = 2\n"})
    fs, workspace = client_fs(root, client)
    announced: list[str] = []
    fs.on_text = announced.append
    with in_session():
        await workspace.read_text("same.py")  # the buffer is the disk's text
        await workspace.read_text("app.py")  # an unsaved change
        await workspace.read_text("app.py")  # known now
        client.buffers[app] = "x = 3\n"
        await workspace.read_text("app.py")  # changed again
    assert announced == ["app.py", "app.py"]


async def test_a_write_goes_to_the_buffer_and_is_a_new_generation(root: Path) -> None:
    client = FakeAcpClient()
    fs, workspace = client_fs(root, client)
    seen = []
    workspace.mutations.subscribe(seen.append)
    with in_session("sess-7"):
        first = await workspace.write_text("app.py", "x = 3\n")
        second = await workspace.write_text("pkg/new.py", "y = 1\n")
        back = await workspace.read_text("pkg/new.py")
    app = str(root / "app.py")
    assert client.params("fs/write_text_file")[0] == {
        "session_id": "sess-7",
        "path": app,
        "content": "x = 3\n",
    }
    assert client.buffers[app] == "x = 3\n"
    # The disk is the editor's to save: untouched, and the new file not made.
    assert (root / "app.py").read_text() == "x = 1\n"
    assert not (root / "pkg").exists()
    assert (first.generation, first.paths, first.origin) == (1, ("app.py",), "agent")
    assert (second.generation, second.paths) == (2, ("pkg/new.py",))
    assert seen == [first, second] and workspace.generation == 2
    assert fs.text_of("app.py") == "x = 3\n" and fs.text_of("pkg/new.py") == "y = 1\n"
    assert await workspace.exists("pkg/new.py")
    assert back.text == "y = 1\n"


@pytest.mark.parametrize(
    "link",
    [
        pytest.param({"fs": ()}, id="no-fs-capability"),
        pytest.param({"initialized": False}, id="before-initialize"),
    ],
)
async def test_without_the_capability_the_disk_answers(root: Path, link: dict[str, object]) -> None:
    client = FakeAcpClient(buffers={str(root / "app.py"): "ignored\n"})
    fs, workspace = client_fs(root, client, **link)
    with in_session():
        assert (await workspace.read_text("app.py")).text == "x = 1\n"
        mutation = await workspace.write_text("app.py", "x = 4\n")
    assert client.calls == []
    assert (root / "app.py").read_text() == "x = 4\n"
    assert mutation.generation == 1 and workspace.generation == 1
    assert fs.text_of("app.py") is None


async def test_outside_a_session_the_disk_answers(root: Path) -> None:
    client = FakeAcpClient(buffers={str(root / "app.py"): "ignored\n"})
    _, workspace = client_fs(root, client)
    assert (await workspace.read_text("app.py")).text == "x = 1\n"
    await workspace.write_text("app.py", "x = 5\n")
    assert client.calls == [] and (root / "app.py").read_text() == "x = 5\n"


async def test_write_only_clients_read_back_what_rein_wrote(root: Path) -> None:
    client = FakeAcpClient()
    _, workspace = client_fs(root, client, fs=("write",))
    with in_session():
        await workspace.write_text("app.py", "x = 6\n")
        assert (await workspace.read_text("app.py")).text == "x = 6\n"
    assert client.methods() == ["fs/write_text_file"]


async def test_read_only_clients_keep_an_unsaved_buffer_from_a_disk_write(root: Path) -> None:
    # Found with a TypeScript-SDK client offering fs.readTextFile only: the
    # edit, made on the buffer's text, never matched the disk and was
    # retried until it gave up ("kept changing", 41 reads).
    app = str(root / "app.py")
    client = FakeAcpClient(buffers={app: "x = 1\nname = 'draft'\n"})  # unsaved line
    fs, workspace = client_fs(root, client, fs=("read",))
    recorder = ToolCallRecorder(
        ToolEnvironment(
            workspace=workspace, settings=ToolSettings(approval=ApprovalSettings(write="allow"))
        )
    )
    with in_session():
        with pytest.raises(ToolError) as refused:  # the model reads the reason
            await recorder.run(
                EditFileTool(), path="app.py", old_string="'draft'", new_string="'final'"
            )
        client.buffers[app] = "x = 1\n"  # the person saved (the disk's text)
        (root / "other.py").write_text("y = 1\n")
        await workspace.read_text("other.py")
        saved = await recorder.run(EditFileTool(), path="other.py", old_string="1", new_string="2")
    assert "app.py has unsaved changes in the editor" in str(refused.value)
    assert "fs.writeTextFile" in str(refused.value)
    assert client.methods().count("fs/read_text_file") == 3  # one per edit and read: no retry
    assert (root / "app.py").read_text() == "x = 1\n"
    assert not saved.is_error, saved.content
    assert (root / "other.py").read_text() == "y = 2\n"  # a clean buffer: the disk
    assert "fs/write_text_file" not in client.methods() and fs.text_of("other.py") is None


async def test_a_client_error_is_a_tool_error_the_model_reads(root: Path) -> None:
    client = FakeAcpClient(
        fail={
            "fs/read_text_file": RequestError(-32603, "Internal error", {"details": "EACCES"}),
            "fs/write_text_file": ConnectionError("Connection closed"),
        }
    )
    fs, workspace = client_fs(root, client)
    with in_session():
        with pytest.raises(ToolError, match=r"fs/read_text_file with an error.*EACCES"):
            await workspace.read_text("app.py")
        with pytest.raises(ToolError, match="not connected any more"):
            await workspace.write_text("app.py", "x = 7\n")
        # Through the read_file tool: the model reads the reason.
        recorder = ToolCallRecorder(
            ToolEnvironment(
                workspace=workspace,
                settings=ToolSettings(approval=ApprovalSettings(read="allow")),
            )
        )
        with pytest.raises(ToolError, match="EACCES"):
            await recorder.run(ReadFileTool(), path="app.py")
    assert workspace.generation == 0 and fs.text_of("app.py") is None


async def test_a_missing_file_is_not_found_without_asking(root: Path) -> None:
    client = FakeAcpClient()
    _, workspace = client_fs(root, client)
    with in_session(), pytest.raises(ToolError, match=r"File not found: nope\.py"):
        await workspace.read_text("nope.py")
    assert client.calls == []


def test_a_client_that_does_not_answer_is_bounded(root: Path) -> None:
    client = FakeAcpClient(hang=["fs/read_text_file"])
    _, workspace = client_fs(root, client)

    async def main() -> None:
        started = anyio.current_time()
        with (
            in_session(),
            pytest.raises(ToolError, match="did not answer fs/read_text_file within 30 s"),
        ):
            await workspace.read_text("app.py")
        assert anyio.current_time() - started == pytest.approx(30)

    run_in_virtual_time(main)


async def test_delete_and_rename_go_to_the_disk_and_the_overlay_follows(root: Path) -> None:
    (root / "old.py").write_text("o = 1\n")
    client = FakeAcpClient()
    fs, workspace = client_fs(root, client)
    with in_session():
        await workspace.read_text("old.py")
        await workspace.write_text("app.py", "x = 8\n")
        moved = await workspace.rename("old.py", "new.py")
        gone = await workspace.delete("app.py")
    assert (moved.paths, gone.paths) == (("old.py", "new.py"), ("app.py",))
    assert not (root / "old.py").exists() and (root / "new.py").read_text() == "o = 1\n"
    assert not (root / "app.py").exists()
    assert fs.text_of("new.py") == "o = 1\n" and fs.text_of("app.py") is None
    assert not await workspace.exists("app.py")
    assert client.methods() == ["fs/read_text_file", "fs/write_text_file"]


async def test_a_file_the_person_deleted_is_gone(root: Path) -> None:
    client = FakeAcpClient()
    fs, workspace = client_fs(root, client)
    with in_session():
        await workspace.read_text("app.py")
    (root / "app.py").unlink()
    assert not await workspace.exists("app.py")
    assert fs.text_of("app.py") is None
    with in_session(), pytest.raises(ToolError, match=r"File not found: app\.py"):
        await workspace.read_text("app.py")
    assert client.methods() == ["fs/read_text_file"]


async def test_the_overlay_yields_to_a_newer_text_on_disk(root: Path) -> None:
    app = str(root / "app.py")
    client = FakeAcpClient()
    fs, workspace = client_fs(root, client)
    with in_session():
        await workspace.write_text("app.py", "x = 9\n")
    client.save(app)  # the editor saves Rein's text: still known
    assert fs.text_of("app.py") == "x = 9\n"
    (root / "app.py").write_text("x = 10  # the person's\n")
    assert fs.text_of("app.py") is None
    with in_session():
        assert (await workspace.read_text("app.py")).text == "x = 9\n"  # the buffer


@asynccontextmanager
async def watching(
    root: Path, fs: ClientFsWorkspace, seen: list[str]
) -> AsyncIterator[DiskWatcher]:
    watcher = DiskWatcher(root, seen.extend, debounce_ms=20, known_text=fs.text_of)
    async with anyio.create_task_group() as tg:
        tg.start_soon(watcher.run)
        with anyio.fail_after(15):
            await watcher.ready.wait()
        yield watcher
        watcher.stop()
        tg.cancel_scope.cancel()


async def test_the_editor_saving_rein_s_text_is_no_external_change(root: Path) -> None:
    app = str(root / "app.py")
    client = FakeAcpClient()
    fs, workspace = client_fs(root, client)
    seen: list[str] = []
    async with watching(root, fs, seen) as watcher:
        workspace.mutations.subscribe(watcher.on_own_mutation)
        with in_session():
            await workspace.write_text("app.py", "x = 11\n")
        client.save(app)
        with anyio.fail_after(15):
            await watcher.settle()
        assert seen == []
        # A save of another text is the person's change.
        (root / "app.py").write_text("x = 12\n")
        with anyio.fail_after(15):
            await watcher.settle()
        assert seen == ["app.py"]


@pytest.mark.e2e
async def test_the_headless_analyzers_judge_the_client_s_text_not_the_disk(root: Path) -> None:
    # The disk's app.py is clean; Rein's edit lives in the editor's buffer.
    # A real ruff server, shown the pool's text of the file, must flag the
    # buffer's undefined name; the disk's copy would give nothing.
    (root / "clean.py").write_text("y = 2\n")
    client = FakeAcpClient(buffers={str(root / "clean.py"): "y = 2\nimport os\n"})
    fs, workspace = client_fs(root, client)
    pool = AnalyzerPool(root, [RUFF], read=fs.text_of)
    fs.on_text = lambda path: pool.refresh([path])
    workspace.mutations.subscribe(pool.on_mutation)
    await pool.start()
    try:
        assert pool.analyzers, "ruff is needed for this test"
        assert await pool.wait_initial(60)
        assert (await pool.snapshot(["app.py", "clean.py"])).diagnostics == ()
        with in_session():
            await workspace.write_text("app.py", "x = 1\nprint(undefined_name)\n")
            await workspace.read_text("clean.py")  # an unsaved import in the editor
        assert await pool.wait_idle(30)
        found = (await pool.snapshot(["app.py", "clean.py"])).diagnostics
        assert sorted((d.path, d.code) for d in found) == [
            ("app.py", "F821"),
            ("clean.py", "F401"),
        ]
        assert (root / "app.py").read_text() == "x = 1\n"
        assert (root / "clean.py").read_text() == "y = 2\n"
    finally:
        await pool.stop()


async def test_parallel_edits_of_one_buffer_both_land(root: Path) -> None:
    app = str(root / "app.py")
    client = FakeAcpClient(buffers={app: "a = 1\nb = 2\nc = 3\n"})
    _, workspace = client_fs(root, client)
    recorder = ToolCallRecorder(
        ToolEnvironment(
            workspace=workspace, settings=ToolSettings(approval=ApprovalSettings(write="allow"))
        )
    )
    results = []

    async def edit(old: str, new: str) -> None:
        results.append(
            await recorder.run(EditFileTool(), path="app.py", old_string=old, new_string=new)
        )

    with in_session():
        async with anyio.create_task_group() as tg:
            for name in "abc":
                tg.start_soon(edit, f"{name} = ", f"{name} = 1")
    assert [r.content for r in results if r.is_error] == []
    assert client.buffers[app] == "a = 11\nb = 12\nc = 13\n"


@pytest.mark.parametrize(FIELDS, FAITHFUL_BYTES)
@pytest.mark.parametrize("capability", [True, False], ids=["client-fs", "disk"])
async def test_edits_keep_every_byte_they_do_not_change(
    root: Path, before: bytes, old: str, new: str, after: bytes, capability: bool
) -> None:
    (root / "f.py").write_bytes(before)
    client = FakeAcpClient()
    _, workspace = client_fs(root, client)
    recorder = ToolCallRecorder(
        ToolEnvironment(
            workspace=workspace, settings=ToolSettings(approval=ApprovalSettings(write="allow"))
        )
    )
    if capability:
        with in_session():
            result = await recorder.run(EditFileTool(), path="f.py", old_string=old, new_string=new)
        # The client's text (an editor keeps a byte order mark out of it)
        # changed where the edit is and nowhere else; its save keeps the rest.
        client.save(str(root / "f.py"))
        assert (root / "f.py").read_bytes() == after
    else:
        result = await recorder.run(EditFileTool(), path="f.py", old_string=old, new_string=new)
        assert (root / "f.py").read_bytes() == after
    assert not result.is_error, result.content


async def test_a_multi_file_change_goes_to_the_client_file_by_file_as_one_generation(
    root: Path,
) -> None:
    app, other = str(root / "app.py"), str(root / "other.py")
    (root / "other.py").write_text("y = 1\n")
    client = FakeAcpClient(buffers={app: "x = 1  # unsaved\n"})
    fs, workspace = client_fs(root, client)
    with in_session():
        mutation = await workspace.apply_changes(
            [
                FileUpdate("app.py", "x = 2  # unsaved\n", "x = 1  # unsaved\n"),
                FileUpdate("other.py", "y = 2\n", "y = 1\n"),
            ]
        )
        assert [m.paths for m in fs.disk.mutations] == [("app.py", "other.py")]
        assert mutation == fs.disk.mutations[0]
        assert client.buffers[app] == "x = 2  # unsaved\n"
        assert client.buffers[other] == "y = 2\n"
        assert [p for m, p in client.calls if m == "fs/write_text_file"] == [
            {"session_id": "sess-1", "path": app, "content": "x = 2  # unsaved\n"},
            {"session_id": "sess-1", "path": other, "content": "y = 2\n"},
        ]
        # A buffer that changed since: nothing is written.
        client.buffers[other] = "y = 3  # typed\n"
        with pytest.raises(FileChangedError):
            await workspace.apply_changes(
                [
                    FileUpdate("app.py", "x = 3\n", "x = 2  # unsaved\n"),
                    FileUpdate("other.py", "y = 4\n", "y = 2\n"),
                ]
            )
    assert client.buffers[app] == "x = 2  # unsaved\n"
    assert len(fs.disk.mutations) == 1
