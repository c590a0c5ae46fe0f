"""The pool's memory of files' texts before a change it did not see coming
(a command's): :class:`rein.disk.prior_texts.TextMemory`."""

from __future__ import annotations

from rein.disk.prior_texts import MAX_REMEMBERED_CHARS, TextMemory


def memory(files: dict[str, str]) -> TextMemory:
    texts = TextMemory(files.get)
    texts.remember(sorted(files))
    return texts


def test_a_changed_file_keeps_its_text_before_the_first_change() -> None:
    files = {"pkg/util.py": "def double(x): ...\n", "pkg/app.py": "import pkg.util\n"}
    texts = memory(files)
    assert texts.before_change("pkg/util.py") is None  # not changed
    texts.changed("pkg/util.py", "def twice(x): ...\n")
    texts.changed("pkg/util.py", "def thrice(x): ...\n")
    assert texts.before_change("pkg/util.py") == "def double(x): ...\n"
    assert texts.text("pkg/util.py") == "def thrice(x): ...\n"
    assert texts.before_change("pkg/app.py") is None


def test_forgetting_the_changes_makes_the_next_change_keep_the_text_from_then() -> None:
    texts = memory({"a.py": "one\n"})
    texts.changed("a.py", "two\n")
    texts.forget_changes()
    assert texts.before_change("a.py") is None
    texts.changed("a.py", "three\n")
    assert texts.before_change("a.py") == "two\n"


def test_a_created_file_and_a_file_too_long_have_no_text_before() -> None:
    texts = memory({"long.py": "x" * (MAX_REMEMBERED_CHARS + 1)})
    texts.changed("new.py", "made\n")
    texts.changed("long.py", "short\n")
    assert texts.before_change("new.py") is None
    assert texts.before_change("long.py") is None


def test_read_answers_from_memory_and_reads_what_it_never_read() -> None:
    disk = {"a.py": "on disk\n", "b.py": "b\n"}
    texts = TextMemory(disk.get)
    texts.remember(["a.py"])
    disk["a.py"] = "changed on disk\n"
    assert texts.read("a.py") == "on disk\n"
    assert texts.read("b.py") == "b\n"
