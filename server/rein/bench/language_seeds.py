"""The errors ``rein bench gates --corpus`` seeds in its TypeScript, Go, C
and shell projects, and their truth from each language's command-line tool.

:func:`seed_source` inserts one new error of a kind (:data:`LANGUAGE_KINDS`)
before a top-level declaration of the file (outside any brace and, in C,
outside any ``#if``; in shell, outside blocks and here-documents), or at
its end. :func:`cli_errors` runs the language's
own tool on a checkout (``tsc --noEmit``, ``go build``, ``gcc
-fsyntax-only`` with the file's ``compile_commands.json`` entry,
``shellcheck``'s error level) and
:func:`new_errors` says which lines of an edited file that tool finds
errors on that it did not find before the edit: the truth a blocker is
judged by.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path
from random import Random

from rein.bench.corpus import SeededEdit

__all__ = ["LANGUAGE_KINDS", "CliError", "cli_errors", "new_errors", "seed_source"]

LANGUAGE_KINDS = ("undefined-name", "argument-type", "missing-import", "syntax-error")

#: A command-line error: (0-based line, message).
CliError = tuple[int, str]


def _snippet(language: str, kind: str, n: int) -> list[str]:
    if language == "typescript":
        return {
            "undefined-name": [f"export const reinProbe{n}: number = reinUndefined{n};"],
            "argument-type": [
                f"function reinProbe{n}(value: number): number {{ return value; }}",
                f'export const reinValue{n} = reinProbe{n}("{n}");',
            ],
            "missing-import": [
                f'import * as reinMissing{n} from "rein-missing-module-{n}";',
                f"export const reinProbe{n} = reinMissing{n};",
            ],
            "syntax-error": [f"export const reinProbe{n} = (1 +);"],
        }[kind]
    if language == "go":
        return {
            "undefined-name": [f"var reinProbe{n} = reinUndefined{n}"],
            "argument-type": [
                f"func reinProbe{n}(value int) int {{ return value }}",
                f'var reinValue{n} = reinProbe{n}("{n}")',
            ],
            # Go's imports must come first: a wrong return type instead.
            "missing-import": [f'func reinProbe{n}() int {{ return "{n}" }}'],
            "syntax-error": [f"var reinProbe{n} = (1 +)"],
        }[kind]
    if language == "c":
        return {
            "undefined-name": [f"int rein_probe_{n}(void) {{ return rein_undefined_{n}; }}"],
            "argument-type": [
                f"int rein_probe_{n}(int *value) {{ return *value; }}",
                f"int rein_value_{n}(void) {{ return rein_probe_{n}(1.5); }}",
            ],
            "missing-import": [f'#include "rein_missing_header_{n}.h"'],
            "syntax-error": [f"int rein_probe_{n} = (1 +);"],
        }[kind]
    if language == "shell":
        # shellcheck's error level: its analysis has no undefined names,
        # types or imports; out-of-range statuses and parse errors instead.
        return {
            "undefined-name": [f"rein_probe_{n}() {{ return 999; }}"],
            "argument-type": [f"rein_probe_{n}() {{ exit 300; }}"],
            "missing-import": [f"rein_probe_{n}=$(( 1 + ))"],
            "syntax-error": [f"rein_probe_{n}() {{ echo ( ; }}"],
        }[kind]
    raise ValueError(f"no seeds for {language!r}")


_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`|//.*$')
_DECLARATION = {
    "typescript": re.compile(r"(export |const |let |var |function |class |interface |type )"),
    "go": re.compile(r"(func |type |var |const )"),
    "c": re.compile(r"[A-Za-z_]"),
    # A command or a function at the top (not a block's closing word).
    "shell": re.compile(r"(?!(?:fi|done|esac|then|else|elif|do|in)\b)[A-Za-z_]"),
}
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)")
_OPENS = re.compile(r"^\s*(?:if|for|while|until|case)\b|\bdo\s*$")
_CLOSES = re.compile(r"^\s*(?:fi|done|esac)\b|;\s*(?:fi|done|esac)\s*$")


def _starts(language: str, lines: list[str]) -> list[int]:
    """Lines that begin a top-level declaration after a blank line, outside
    braces, block comments and (C) preprocessor conditionals; in Go, after
    the imports."""
    starts: list[int] = []
    depth = 0
    conditional = 0
    comment = False
    seen_declaration = False
    heredoc: str | None = None
    for i, line in enumerate(lines):
        if heredoc is not None:  # a shell here-document's text
            heredoc = None if line.strip() == heredoc else heredoc
            continue
        declaration = bool(_DECLARATION[language].match(line))
        if (
            i > 0
            and declaration
            and depth == 0
            and conditional == 0
            and not comment
            and not lines[i - 1].strip()
            and (language != "go" or seen_declaration or line.startswith("func "))
        ):
            starts.append(i)
        seen_declaration = seen_declaration or (declaration and depth == 0)
        stripped = line.strip()
        if language == "c" and stripped.startswith("#"):
            if re.match(r"#\s*if", stripped):
                conditional += 1
            elif re.match(r"#\s*endif", stripped):
                conditional -= 1
            continue
        if language == "shell":
            match = _HEREDOC.search(line)
            heredoc = match.group(1) if match else None
            code = line.split("#", 1)[0]
            depth += bool(_OPENS.search(code)) - bool(_CLOSES.search(code))
            depth += code.count("{") - code.count("}")
            continue
        code = _STRINGS.sub("", line)
        if comment:
            if "*/" not in code:
                continue
            code = code.split("*/", 1)[1]
            comment = False
        code = re.sub(r"/\*.*?\*/", "", code)
        if "/*" in code:
            code, comment = code.split("/*", 1)[0], True
        depth += code.count("{") - code.count("}")
    return starts


def seed_source(
    language: str, path: str, text: str, kind: str, n: int, rng: Random, category: str = ""
) -> SeededEdit:
    """``text`` with one new error of ``kind`` before a top-level
    declaration (or at its end)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    at = rng.choice(_starts(language, lines) or [len(lines)])
    snippet = [line + "\n" for line in _snippet(language, kind, n)] + ["\n"]
    edited = "".join(lines[:at] + snippet + lines[at:])
    return SeededEdit(path, kind, category, text, edited, at, at + len(snippet) - 1)


# ------------------------------------------------------------------ the truth

_TSC = re.compile(r"^(?P<path>.+?)\((?P<line>\d+),\d+\): error (?P<code>TS\d+): (?P<msg>.*)$")
_SHELLCHECK = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):\d+: error: (?P<msg>.*)$")
_GO = re.compile(r"^(?P<path>[^:\s][^:]*\.go):(?P<line>\d+):\d+: (?P<msg>.*)$")
_GCC = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):\d+: (?:fatal )?error: (?P<msg>.*)$")


def _run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    return done.stdout + done.stderr


def cli_errors(language: str, root: Path, path: str, tool: str) -> list[CliError]:
    """The errors ``tool`` (tsc, go or gcc) finds in ``path`` of the checkout
    ``root``."""
    if language == "typescript":
        out = _run([tool, "--noEmit", "--pretty", "false", "-p", "."], root)
        pattern = _TSC
    elif language == "go":
        out = _run([tool, "build", "-o", "/dev/null", "./" + str(Path(path).parent)], root)
        pattern = _GO
    elif language == "c":
        out = _run(_c_command(root, path, tool), root)
        pattern = _GCC
    elif language == "shell":
        out = _run([tool, "-f", "gcc", path], root)
        pattern = _SHELLCHECK
    else:
        raise ValueError(f"no command-line truth for {language!r}")
    errors: list[CliError] = []
    for line in out.splitlines():
        m = pattern.match(line.strip())
        if m is None:
            continue
        found = Path(m["path"].removeprefix("./"))
        if found.is_absolute():
            found = found.relative_to(root.resolve()) if found.is_relative_to(root) else found
        if found.as_posix() == path:
            errors.append((int(m["line"]) - 1, m["msg"].strip()))
    return errors


def _c_command(root: Path, path: str, tool: str) -> list[str]:
    """The file's compile command as a syntax check (its folder: ``root``)."""
    for entry in json.loads((root / "compile_commands.json").read_text()):
        if Path(entry["file"]).name == Path(path).name:
            args = [a for a in entry["arguments"][1:] if a != "-c"]
            return [tool, "-fsyntax-only", *args]
    raise ValueError(f"{path} has no entry in compile_commands.json")


def new_errors(before: list[CliError], after: list[CliError], edit: SeededEdit) -> set[int]:
    """The lines of the edited file with errors the original did not have
    (the original's lines after the insertion are moved down by it)."""
    shift = edit.last - edit.first + 1
    had = Counter(
        (line + shift if line >= edit.first else line, message) for line, message in before
    )
    lines: set[int] = set()
    for line, message in after:
        if had[(line, message)] > 0:
            had[(line, message)] -= 1
        else:
            lines.add(line)
    return lines
