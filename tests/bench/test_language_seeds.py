"""The errors ``rein bench gates --corpus`` seeds in its TypeScript, Go, C
and shell projects, and how the command-line tool's findings become the
truth."""

from __future__ import annotations

import random

import pytest

from rein.bench.language_seeds import LANGUAGE_KINDS, new_errors, seed_source

SOURCES = {
    "typescript": (
        'import { a } from "./a";\n\nexport class K {\n  m() {\n    return "}";\n  }\n\n'
        "  n() {}\n}\n\n/* { */\n\nfunction f() {}\n"
    ),
    "go": (
        'package main\n\nimport (\n\t"fmt"\n)\n\nfunc main() {\n\tfmt.Println("{")\n\n'
        "\tvar x = 1\n\t_ = x\n}\n\ntype T struct{}\n"
    ),
    "c": (
        "#include <stdio.h>\n\nstatic int a(void) {\n    return 1;\n\n    int b;\n}\n\n#if 0\n\n"
        "int hidden;\n#endif\n\nint main(void) { return a(); }\n"
    ),
    "shell": (
        "#!/bin/bash\n\nf() {\n\techo hi\n}\n\nif true; then\n\necho inside\nfi\n\n"
        'cat <<EOF\n\nx=1\nEOF\n\nmain "$@"\n'
    ),
}
#: The lines (0-based) a seed may go before: top-level declarations after a
#: blank line, outside braces, comments, #if, shell blocks and here-documents.
STARTS = {"typescript": {2, 12}, "go": {6, 13}, "c": {2, 13}, "shell": {2, 6, 11, 16}}


@pytest.mark.parametrize("language", list(SOURCES))
def test_a_seed_goes_before_a_top_level_declaration_and_leaves_the_rest(language: str) -> None:
    text = SOURCES[language]
    seen: set[int] = set()
    for n in range(40):
        kind = LANGUAGE_KINDS[n % len(LANGUAGE_KINDS)]
        seeded = seed_source(language, "f", text, kind, n, random.Random(n))
        lines = seeded.edited.splitlines()
        # The rest of the file is untouched, in order (a blank line after).
        assert lines[: seeded.first] + lines[seeded.last + 1 :] == text.splitlines()
        assert lines[seeded.last] == ""
        assert all(str(n) in line for line in lines[seeded.first : seeded.last])
        seen.add(seeded.first)
    assert seen == STARTS[language]


def test_new_errors_are_the_edited_files_errors_the_original_did_not_have() -> None:
    original = "a\nb\nc\n"
    seeded = seed_source("go", "f.go", original, "undefined-name", 1, random.Random(1))
    assert (seeded.first, seeded.last) == (3, 4)  # no declaration: at the end
    before = [(0, "old error"), (2, "old error")]
    # The old errors (the one after the insertion moved down) are not new;
    # the seed's and a second one on line 0 are.
    after = [(0, "old error"), (0, "old error"), (2, "old error"), (3, "undefined: x")]
    assert new_errors(before, after, seeded) == {0, 3}
