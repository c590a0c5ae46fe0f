"""The commands a wider approval rule (``git log *``) may be kept for, and
the options its extra words may use.

A wider rule exists only for a known program and one of its subcommands
that reads, checks, builds or tests (:func:`prefix_head`): never for a
wrapper that runs another command (``sudo``, ``xargs``, ``env``, ``find``,
``nohup``, ``timeout``, a shell, an interpreter's ``-c``) nor for a
subcommand that changes things (``git push``, ``npm install``). Running the
project's own code (``npm test``, ``make test``) is the person's choice:
they chose the rule.

An extra word that is an option (it starts with ``-``) is allowed only when
the program's list below names it (:func:`option_allowed`): an unknown
option asks, so an option that writes a file or runs a program
(``--output``, ``-O``, ``--ext-diff``, ``-exec``, ``-p plugin``,
``--basetemp``, ``-f``, an abbreviation git would accept such as
``--outp``) is never allowed by a rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Options", "option_allowed", "prefix_head"]


@dataclass(frozen=True, slots=True)
class Options:
    """The options a program's extra words may use."""

    #: Options that take no value (``--stat``, ``-x``); a long one may have
    #: ``=value`` (``--color=never``).
    flags: frozenset[str]
    #: Options that take a value, attached (``-n5``, ``--grep=x``) or next.
    valued: frozenset[str] = frozenset()
    #: ``-5`` (git: that many commits).
    numbers: bool = False
    #: Short options combine (``-xq``, ``-kj4``); go's single-dash long
    #: options (``-race``) do not.
    clusters: bool = True
    #: A word with ``=`` is an assignment the program applies (make's
    #: ``CC=...``): it asks.
    assignments_ask: bool = False


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_GIT = Options(
    flags=_set(
        "--oneline --stat --shortstat --numstat --name-only --name-status --graph --all "
        "--decorate --no-decorate -p --patch -u --no-patch -s --cached --staged --color "
        "--no-color --word-diff --reverse --first-parent --merges --no-merges --follow -v "
        "--verbose -q --quiet --short -b --branch --porcelain --summary -w "
        "--ignore-all-space --ignore-space-change --abbrev-commit --no-abbrev-commit "
        "--topo-order --date-order --left-right --check --no-renames --full-diff --minimal "
        "--patience --histogram --untracked-files --ignored --long --show-stash --tags "
        "--always --dirty --root --raw --no-ext-diff --no-textconv --exit-code --full-index "
        "--no-prefix --relative -M -z --null --abbrev"
    ),
    valued=_set(
        "-n --max-count --skip --since --after --until --before --author --committer --grep "
        "--format --pretty --date -S -G -U --unified --diff-filter"
    ),
    numbers=True,
)
_GIT_GREP = Options(
    flags=_set(
        "-n --line-number -i --ignore-case -w --word-regexp -v --invert-match -l "
        "--files-with-matches -L --files-without-match -c --count -h -H -E "
        "--extended-regexp -F --fixed-strings -P --perl-regexp -G --basic-regexp --cached "
        "--untracked -q --quiet --name-only --full-name --heading --break -o "
        "--only-matching -z --null --all-match --and --or --not -I --column --color --no-color"
    ),
    valued=_set(
        "-e -A -B -C --context --after-context --before-context --max-depth -m --max-count"
    ),
)
_PYTEST = Options(
    flags=_set(
        "-x --exitfirst -q --quiet -v --verbose -s -l --showlocals --lf --last-failed --ff "
        "--failed-first --nf --new-first --sw --stepwise --sw-skip --co --collect-only "
        "--no-header --no-summary --strict-markers --runxfail --setup-show --fulltrace "
        "--disable-warnings"
    ),
    valued=_set("-k -m --tb -r --maxfail --durations --durations-min --color --capture -n"),
)
_CARGO = Options(
    flags=_set(
        "--release -r --all-features --no-default-features --workspace --all --all-targets "
        "--lib --bins --tests --benches --examples --doc -q --quiet -v --verbose --locked "
        "--offline --frozen --no-fail-fast --no-run --nocapture --exact --ignored "
        "--include-ignored --show-output"
    ),
    valued=_set(
        "-p --package --features -F --test --bin --example --bench -j --jobs --target "
        "--profile --exclude --test-threads --skip --color --message-format"
    ),
)
_GO = Options(
    flags=_set("-v -race -short -cover -benchmem -failfast -json -trimpath"),
    valued=_set(
        "-run -count -timeout -bench -benchtime -cpu -p -parallel -tags -skip -shuffle -covermode"
    ),
    clusters=False,
)
_MAKE = Options(
    flags=_set(
        "-k --keep-going -s --silent -n --dry-run --just-print -q --question -B "
        "--always-make -w --no-print-directory"
    ),
    valued=_set("-j --jobs"),
    assignments_ask=True,
)
_NPM = Options(flags=_set("--silent -s"))

_GIT_READS = _set("log show diff status blame grep shortlog ls-files describe")
_CARGO_CHECKS = _set("test check build clippy")
_GO_CHECKS = _set("test vet build")
_PACKAGE_MANAGERS = _set("npm pnpm yarn")
_PYTHONS = _set("python python3")
#: A script or make target: a name, not an option or a path.
_NAME = re.compile(r"[A-Za-z][\w:.-]*")


def prefix_head(words: Sequence[str]) -> tuple[tuple[str, ...], Options] | None:
    """The words a wider rule for this command keeps (``git log``,
    ``npm run build``, ``python -m pytest``, ``pytest``) and the options
    its extra words may use; None when no wider rule is offered."""
    program = words[0] if words else ""
    second = words[1] if len(words) > 1 else ""
    if program == "git" and second in _GIT_READS:
        return (program, second), _GIT_GREP if second == "grep" else _GIT
    if program == "pytest":
        return (program,), _PYTEST
    if program in _PYTHONS and tuple(words[1:3]) == ("-m", "pytest"):
        return (program, "-m", "pytest"), _PYTEST
    if program == "cargo" and second in _CARGO_CHECKS:
        return (program, second), _CARGO
    if program == "go" and second in _GO_CHECKS:
        return (program, second), _GO
    if program in _PACKAGE_MANAGERS and second == "test":
        return (program, second), _NPM
    if program in _PACKAGE_MANAGERS and second == "run" and len(words) > 2:
        if _NAME.fullmatch(words[2]):
            return (program, second, words[2]), _NPM
    if program == "make" and _NAME.fullmatch(second) and "=" not in second:
        return (program, second), _MAKE
    return None


def option_allowed(text: str, options: Options) -> bool:
    """An extra word (quotes removed) is not an option, or is one the
    program's list names (:class:`Options`)."""
    if options.assignments_ask and "=" in text and not text.startswith("-"):
        return False
    if not text.startswith("-") or text in ("-", "--"):
        return True
    name = text.partition("=")[0]
    if name in options.flags or name in options.valued:
        return True
    if options.numbers and re.fullmatch(r"-[0-9]+", text):
        return True
    if not options.clusters or text.startswith("--"):
        return False
    for letter in text[1:]:
        option = "-" + letter
        if option in options.valued:
            return True  # the rest of the word is its value
        if option not in options.flags:
            return False
    return True
