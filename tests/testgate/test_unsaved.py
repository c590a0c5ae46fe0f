"""The person's unsaved typing in files the run did not change: the tests
read those files' saved text, and the gate's detail names the ones a
selected test imports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rein.harness.gating.gate_types import UnsavedDocuments
from tests.fakes.workspace import FakeWorkspace
from tests.testgate.projects import BAD, GOOD, changed, gate_for, project, snapshot, verdict

HELPER = "EXPECTED = [1, 2]\n"
TESTS = """from helper import EXPECTED
from mod import first_n


def test_first_two():
    assert first_n([1, 2, 3], 2) == EXPECTED
"""


class EditorLike(FakeWorkspace):
    """A workspace that knows the person's unsaved documents, as the editor's."""

    def __init__(self, *args: object, unsaved: Sequence[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.unsaved = list(unsaved)

    def unsaved_paths(self) -> Sequence[str]:
        return self.unsaved


async def test_unsaved_files_a_selected_test_imports_are_named_and_not_judged(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path / "proj",
        {"mod.py": GOOD, "helper.py": HELPER, "other.py": "", "tests/test_mod.py": TESTS},
    )
    before = snapshot(root)
    # The person is typing in helper.py (a wrong value, not saved) and other.py.
    workspace = EditorLike(
        {"mod.py": GOOD, "helper.py": "EXPECTED = [9]\n", "other.py": "x = 1\n"},
        root=str(root),
        unsaved=["helper.py", "mod.py", "other.py"],
    )
    assert isinstance(workspace, UnsavedDocuments)
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", GOOD + "\n")

    outcome = await verdict(gate, workspace, "mod.py")

    # helper.py's saved text was tested: its unsaved [9] would have failed.
    assert outcome.blockers == [] and outcome.unverified is None
    assert outcome.detail.endswith(
        "; not saved in the editor, so the tests read their saved text: helper.py"
    ), outcome.detail

    await changed(gate, workspace, "mod.py", BAD)
    outcome = await verdict(gate, workspace, "mod.py")

    assert [b.message for b in outcome.blockers] == [
        "tests/test_mod.py::test_first_two failed: assert [1, 2, 3] == [1, 2]"
    ]
    assert "their saved text: helper.py" in outcome.detail
    assert snapshot(root) == before


async def test_a_workspace_without_unsaved_documents_names_none(tmp_path: Path) -> None:
    root = project(
        tmp_path / "proj", {"mod.py": GOOD, "helper.py": HELPER, "tests/test_mod.py": TESTS}
    )
    workspace = FakeWorkspace({"mod.py": GOOD, "helper.py": HELPER}, root=str(root))
    gate = gate_for(root)
    await changed(gate, workspace, "mod.py", GOOD + "\n")

    outcome = await verdict(gate, workspace, "mod.py")

    assert outcome.blockers == [] and "not saved" not in outcome.detail


async def test_a_file_whose_import_runs_the_change_names_what_it_imports_unsaved(
    tmp_path: Path,
) -> None:
    """Old (review31, LOW): a test file reaching the change only through a
    package's ``__init__`` was left out of the files the note looks at."""
    files = {
        "mypkg/__init__.py": "from .core import *  # noqa\nfrom .util import slug  # noqa\n",
        "mypkg/core.py": "def double(x):\n    return 2 * x\n",
        "mypkg/util.py": "from mypkg.helper import SEP\n\n\ndef slug(s):\n    return s.replace(' ', SEP)\n",
        "mypkg/helper.py": 'SEP = "-"\n',
        "tests/test_util.py": (
            "from mypkg.util import slug\n\n\ndef test_slug():\n    assert slug('a b') == 'a-b'\n"
        ),
    }
    root = project(tmp_path / "proj", files)
    workspace = EditorLike(
        {"mypkg/core.py": files["mypkg/core.py"], "mypkg/helper.py": 'SEP = "+"\n'},
        root=str(root),
        unsaved=["mypkg/helper.py"],
    )
    gate = gate_for(root)
    await changed(gate, workspace, "mypkg/core.py", "def double(x):\n    return x + x\n")

    outcome = await verdict(gate, workspace, "mypkg/core.py")

    assert outcome.blockers == [] and outcome.unverified is None, outcome.detail
    assert outcome.detail.endswith(
        "; not saved in the editor, so the tests read their saved text: mypkg/helper.py"
    ), outcome.detail
