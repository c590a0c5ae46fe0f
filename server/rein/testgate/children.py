"""Which child process a test starts can make its coverage record miss
something: the recording plugin's hooks on ``subprocess``, ``os.system``
and ``os.posix_spawn`` (:mod:`rein.testgate.recorder`; this module's text
is written beside the plugin as ``rein_testgate_children`` and imported
by it, so it is plain Python for any interpreter from 3.8, standard
library only).

A child that is a Python interpreter itself (:func:`starts_python`) is
told apart: it records what it ran (:mod:`rein.testgate.child_tracer`),
and its record decides. Any other child runs untraced, so a test
starting one is *opaque* (it runs
whenever its test file is selected) unless the child is on a short
allow-list of programs that run nothing they are not given and read only
the files they are given, none of them a workspace file: ``cat``,
``head``, ``tail``, ``wc``, ``sort``, ``uniq``, ``cut``, ``tr``, ``tee``,
``echo``, ``printf``, ``true``, ``false``, ``sleep``; the pagers ``less``
and ``more`` (unless ``LESSOPEN``/``LESSCLOSE`` or a ``+`` command is
given); ``sed`` with only ``s`` (no ``e`` or ``w`` flag), ``y``, ``p``,
``d``, ``q`` and the like, no script file; and ``sh``, ``bash``, ``dash``
given a command with ``-c`` whose every command is on the list (a line
that expands, ``$``, a backquote, a glob, a brace, ``~``, or assigns a
variable is not told; nor is a shell with ``BASH_ENV``, ``ENV``,
``SHELLOPTS``, ``BASHOPTS`` or an exported function). The program must
resolve to a native executable outside the workspace and not be Python.
Everything else is opaque wherever it runs: a shell reading its script
from standard input or a file (``sh``, ``bash -s``, ``sh run.sh``),
``make``, ``git`` (hooks, aliases, filters), ``env``, ``xargs``,
``nice``, ``timeout``, an editor (``vi``, ``ed``: their commands may come
from standard input, which the test writes), an unknown program, a
``preexec_fn`` (Python in the child), a fork. Until 2026-12-06 the rule
was the other way round (opaque only when a word named Python or the
workspace), and a shell reading stdin, ``make`` or a ``git`` hook ran the
workspace's code unseen (review23 F1, F2). click's 15 ``echo_via_pager``
tests (``cat`` as the pager) and ``test_fast_edit`` (``sed -i`` as the
editor) stay judged by their records. Not caught: a test that drives a
pager's own ``!`` command through a pseudo-terminal.
"""

from __future__ import annotations

import os
import sys
import threading

# ``re``, ``shutil`` and ``typing`` are imported only where needed: a
# Python child imports this module at its start (its start-up time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["install", "may_run_workspace_code", "starts_python"]

#: Shells judged by the command they are given with ``-c``; in any other
#: form they read their script from standard input or a file.
SHELLS = frozenset({"sh", "bash", "dash"})
#: Programs that run nothing and read only their operands and standard input.
READERS = frozenset(
    {
        *("cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "tee"),
        *("echo", "printf", "true", "false", "sleep"),
    }
)
#: Pagers: their commands come from the terminal, not from the test.
PAGERS = frozenset({"less", "more"})
ALLOWED = READERS | PAGERS | {"sed"}
#: Long options (or their unambiguous prefixes) that run a program or read
#: files named elsewhere (``sort --compress-program``, ``wc --files0-from``).
_LONG_RUNS = ("--compress-program", "--files0-from")
#: Variables a shell reads commands from.
_SHELL_VARIABLES = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS")
#: The first bytes of a native executable (ELF, Mach-O).
_NATIVE = (
    b"\x7fELF",
    b"\xfe\xed\xfa",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
)
_OPERATORS = frozenset(";&|()<>\n")
#: sed's GNU long options: what each takes.
_SED_LONG = {
    **dict.fromkeys(("quiet", "silent", "regexp-extended", "separate", "unbuffered"), ""),
    **dict.fromkeys(("null-data", "posix", "sandbox", "debug", "follow-symlinks"), ""),
    **dict.fromkeys(("in-place", "line-length", "expression", "file"), "value"),
}
_SED_ADDRESS = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?)"
#: One sed command that runs nothing and reads or writes no file.
_SED_COMMAND = (
    rf"\s*(?:{_SED_ADDRESS}(?:\s*,\s*(?:{_SED_ADDRESS}|[+~]\d+))?\s*!?\s*)?"
    r"(?:s(?P<d>[^\\\n\s])(?:(?!(?P=d))[^\\\n]|\\.)*(?P=d)(?:(?!(?P=d))[^\\\n]|\\.)*(?P=d)"
    r"[gpiImM0-9]*"
    r"|y(?P<y>[^\\\n\s])(?:(?!(?P=y))[^\\\n]|\\.)*(?P=y)(?:(?!(?P=y))[^\\\n]|\\.)*(?P=y)"
    r"|[qQ]\d*|[pdnNgGhHxDPz=])\s*"
)
_DEPTH = 8


class _Depth(threading.local):
    """How deep this thread is in a judged ``subprocess.Popen`` start (its
    ``fork_exec`` or ``posix_spawn`` is judged already)."""

    depth = 0


_inside = _Depth()


def may_run_workspace_code(
    args: Any,
    executable: Any = None,
    shell: bool = False,
    cwd: Any = None,
    env: Any = None,
    root: str = "",
) -> bool:
    """Whether a child started so (``subprocess.Popen``'s arguments) may
    run the workspace's (``root``'s) code or read its files: True unless it
    is on the allow-list (the module docstring), and when that cannot be told."""
    try:
        return _judge(args, executable, shell, cwd, env, root)
    except Exception:  # anything unforeseen: the test is opaque
        return True


class _Place:
    """Where a child runs: its folder, environment and the workspace."""

    def __init__(self, folder: str, variables: dict[str, str], root: str) -> None:
        self.folder = folder
        self.variables = variables
        self.root = root


def _judge(args: Any, executable: Any, shell: bool, cwd: Any, env: Any, root: str) -> bool:
    items = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    words = [_text(item) for item in items]
    place = _Place(
        os.path.abspath(_text(cwd) if cwd is not None else os.getcwd()), _variables(env), root
    )
    if shell:  # subprocess: [executable or /bin/sh, "-c", *args]
        command = [_text(executable) if executable is not None else "/bin/sh", "-c", *words]
    elif executable is not None:
        command = [_text(executable), *words[1:]]
    else:
        command = words
    return _runs(command, place, 0)


def _runs(command: list[str], place: _Place, depth: int) -> bool:
    """Whether the simple command ``command`` (program and its words) may
    run the workspace's code or read its files."""
    if not command:
        return False
    if depth > _DEPTH:
        return True
    program, operands = command[0], command[1:]
    name = _base(program)
    if name not in ALLOWED and name not in SHELLS:
        return True
    if not _native_program(program, place):
        return True
    if name in SHELLS:
        line = _shell_command(operands)
        if line is None or _shell_reads_commands(place.variables):
            return True  # standard input, a script file, its environment
        parsed = _commands(line)
        if parsed is None:
            return True
        commands, targets = parsed
        if any(_workspace_file(t, place) for t in targets):
            return True
        return any(_runs(c, place, depth + 1) for c in commands)
    if name in PAGERS and _pager_runs(operands, place.variables):
        return True
    if name == "sed":
        files = _sed_files(operands)
        if files is None:
            return True
        operands = files
    return any(_unsafe_operand(word, place) for word in operands)


def _native_program(program: str, place: _Place) -> bool:
    """``program`` is no Python, no script and no file of the workspace
    (a name not found runs nothing)."""
    if _pythonish(program):
        return False
    found = _resolve(program, place.folder, place.variables.get("PATH", os.defpath))
    if found is None:
        return True
    real = os.path.realpath(found)
    if _under(os.path.abspath(found), place.root) or _under(real, place.root):
        return False
    if real == os.path.realpath(sys.executable) or _pythonish(os.path.basename(real)):
        return False
    if os.path.isfile(real):
        with open(real, "rb") as handle:
            return handle.read(4).startswith(_NATIVE)
    return False


def _unsafe_operand(word: str, place: _Place) -> bool:
    """A word given to an allowed program: it names Python, an existing
    workspace file (read), or an option that runs or reads elsewhere."""
    if _pythonish(word):
        return True
    option, _, value = word.partition("=")
    if option.startswith("--") and len(option) > 2:
        if any(long.startswith(option) for long in _LONG_RUNS):
            return True
        return bool(value) and _workspace_file(value, place)
    return _workspace_file(word, place)


def _workspace_file(word: str, place: _Place) -> bool:
    if not word or (word.startswith("-") and word != "-"):
        return False
    path = os.path.abspath(os.path.join(place.folder, os.path.expanduser(word)))
    return os.path.lexists(path) and (
        _under(path, place.root) or _under(os.path.realpath(path), place.root)
    )


def _shell_command(operands: list[str]) -> str | None:
    """The command a shell is given (``sh -c CMD``, ``bash -ec CMD``); None
    when it reads standard input or a script, or takes other options
    (``-x`` runs ``PS4``, ``-l``/``-i`` read profiles)."""
    import re

    letters, at = "", 0
    while at < len(operands) and re.fullmatch(r"-[ceu]+", operands[at]):
        letters += operands[at][1:]
        at += 1
    if "c" not in letters or at >= len(operands):
        return None
    return operands[at]


def _shell_reads_commands(variables: dict[str, str]) -> bool:
    return any(variables.get(n) for n in _SHELL_VARIABLES) or any(
        n.startswith("BASH_FUNC_") for n in variables
    )


def _pager_runs(operands: list[str], variables: dict[str, str]) -> bool:
    """A pager told to run something: ``LESSOPEN``/``LESSCLOSE``, a ``+``
    command (``+!cmd``; ``+NUMBER`` is a line) in its words or ``LESS``/``MORE``."""
    if variables.get("LESSOPEN") or variables.get("LESSCLOSE"):
        return True
    if "+" in variables.get("LESS", "") or "+" in variables.get("MORE", ""):
        return True
    return any(w.startswith("+") and not w[1:].isdigit() for w in operands)


def _sed_files(operands: list[str]) -> list[str] | None:
    """The files a ``sed`` reads when its scripts run nothing and read or
    write no other file (:data:`_SED_COMMAND`); None otherwise (``-f``, an
    ``e`` command or flag, ``r``, ``w``, an option not known)."""
    scripts: list[str] = []
    rest: list[str] = []
    at = 0
    while at < len(operands):
        word = operands[at]
        at += 1
        if word == "--":
            rest += operands[at:]
            break
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            full = [o for o in _SED_LONG if o.startswith(name)] if name else []
            if len(full) != 1 or full[0] == "file":
                return None
            if full[0] == "expression":
                if not equals:
                    if at >= len(operands):
                        return None
                    value, at = operands[at], at + 1
                scripts.append(value)
            elif full[0] == "line-length" and not equals:
                at += 1
            continue
        if word.startswith("-") and word != "-":
            for index, char in enumerate(word[1:], 1):
                if char in "nErsuz":
                    continue
                if char == "i":
                    break  # the rest is the backup's suffix
                if char in "el":
                    value = word[index + 1 :]
                    if not value:
                        if at >= len(operands):
                            return None
                        value, at = operands[at], at + 1
                    if char == "e":
                        scripts.append(value)
                    break
                return None  # -f, or an option not known
            continue
        rest.append(word)
    if not scripts and rest:
        scripts.append(rest.pop(0))
    return rest if all(_plain_sed(s) for s in scripts) else None


def _plain_sed(script: str) -> bool:
    import re

    command = re.compile(_SED_COMMAND)
    at = 0
    while at < len(script):
        match = command.match(script, at)
        if match is None or match.end() == at:
            return script[at:].strip(" \t;\n") == ""
        at = match.end()
        if at < len(script):
            if script[at] not in ";\n":
                return False
            at += 1
    return True


def _commands(line: str) -> tuple[list[list[str]], list[str]] | None:
    """A shell line's simple commands (program and words) and the files
    its redirections name; None when what it runs cannot be told (it
    expands, assigns a variable, or does not end its quotes)."""
    tokens = _shell_tokens(line)
    if tokens is None:
        return None
    commands: list[list[str]] = [[]]
    targets: list[str] = []
    redirect = ""
    for text, operator in tokens:
        if operator:
            if "<" in text or ">" in text:
                if commands[-1] and commands[-1][-1].isdigit():
                    commands[-1].pop()  # a descriptor: ``2>``
                redirect = text
            else:
                commands.append([])
                redirect = ""
        elif redirect:
            if not (redirect.endswith("&") and (text.isdigit() or text == "-")):
                targets.append(text)
            redirect = ""
        elif not commands[-1] and "=" in text and text.split("=")[0].isidentifier():
            return None  # ``NAME=value cmd``: its environment
        else:
            commands[-1].append(text)
    return [c for c in commands if c], targets


def _shell_tokens(line: str) -> list[tuple[str, bool]] | None:
    """A POSIX shell line's words (quotes removed) and operators (a
    redirection with what follows it: ``>&``, ``>>``, ``<<``), each with
    whether it is an operator; None when it expands anything (``$``, a
    backquote, a glob, a brace, ``~``) or does not end its quotes."""
    tokens: list[tuple[str, bool]] = []
    word: list[str] = []
    started = False
    quote = ""
    escaped = False
    for char in line:
        if escaped:
            word.append(char)
            escaped, started = False, True
        elif quote == "'":
            if char == "'":
                quote = ""
            else:
                word.append(char)
        elif quote == '"':
            if char == '"':
                quote = ""
            elif char == "\\":
                escaped = True
            elif char in "$`":
                return None
            else:
                word.append(char)
        elif char in "'\"":
            quote, started = char, True
        elif char == "\\":
            escaped = True
        elif char.isspace() or char in _OPERATORS:
            if started:
                tokens.append(("".join(word), False))
            word, started = [], False
            if char in _OPERATORS:
                last = tokens[-1] if tokens else ("", False)
                if last[1] and last[0][-1:] in "<>" and char in "<>&|":
                    tokens[-1] = (last[0] + char, True)
                else:
                    tokens.append((char, True))
        elif char == "#" and not started:
            break  # a comment (to the line's end: a newline ends it)
        elif char in "$`*?[{}" or (char == "~" and not started):
            return None
        else:
            word.append(char)
            started = True
    if quote or escaped:
        return None
    if started:
        tokens.append(("".join(word), False))
    return tokens


def _resolve(token: str, folder: str, path: str) -> str | None:
    """The file a word names: a path (from ``folder``), a file in
    ``folder``, or a program on ``path``; None for none."""
    if not token or token.startswith("-"):
        return None
    candidate = os.path.join(folder, token)
    if os.path.exists(candidate):
        return candidate
    if os.sep in token:
        return None
    import shutil

    return shutil.which(token, path=path)


def _variables(env: Any) -> dict[str, str]:
    source = os.environ if env is None else env
    out = {}
    for key, value in source.items():
        out[_text(key)] = _text(value)
    return out


def _text(value: Any) -> str:
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    return str(value)


def _base(word: str) -> str:
    return os.path.basename(word)


def _pythonish(word: str) -> bool:
    lowered = word.lower()
    return "python" in lowered or "pypy" in lowered


def _under(path: str, root: str) -> bool:
    if not root:
        return False
    base = os.path.abspath(root).rstrip(os.sep) + os.sep
    return path == base[:-1] or path.startswith(base)


def starts_python(
    args: Any, executable: Any = None, shell: bool = False, cwd: Any = None, env: Any = None
) -> bool:
    """Whether a child started so (``subprocess.Popen``'s arguments) is a
    Python interpreter itself: its program resolves to a native executable
    outside the workspace named as Python (a venv's ``bin/python`` is a
    link to one), not a shell, not a script. Such a child records what it
    ran when it is traced (:mod:`rein.testgate.child_tracer`); whether it
    was is known only by its record."""
    try:
        if shell:
            return False
        items = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        program = _text(executable) if executable is not None else _text(items[0])
        folder = os.path.abspath(_text(cwd) if cwd is not None else os.getcwd())
        found = _resolve(program, folder, _variables(env).get("PATH", os.defpath))
        if found is None:
            return False
        real = os.path.realpath(found)
        if real != os.path.realpath(sys.executable) and not _pythonish(os.path.basename(real)):
            return False
        with open(real, "rb") as handle:
            return handle.read(4).startswith(_NATIVE)
    except Exception:  # anything unforeseen: not told, the test is opaque
        return False


def install(
    root: str,
    on_child: Callable[[Any], None],
    on_python: Callable[[int, float, Any], None] | None = None,
) -> None:
    """Hook where a test starts a child: ``on_child(frame)`` (the frame
    that started it) for each that may run ``root``'s code or read its
    files (:func:`may_run_workspace_code`), and for multiprocessing's
    starts; not for the others. With ``on_python``, a ``subprocess`` child
    that is a Python interpreter (:func:`starts_python`) is told to it
    instead, once started: ``on_python(pid, since, frame)``, ``since`` the
    monotonic clock before the start (its record must be newer)."""
    import subprocess
    import time

    real_execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: Any, *args: Any, **kwargs: Any) -> Any:
        # (args, executable, preexec_fn, close_fds, pass_fds, cwd, env,
        # startupinfo, creationflags, shell, ...), positional from 3.8 on.
        frame = sys._getframe(1)
        judged = len(args) >= 10 and args[2] is None
        python = (
            judged
            and on_python is not None
            and starts_python(args[0], args[1], bool(args[9]), args[5], args[6])
        )
        if not judged or (
            not python
            and may_run_workspace_code(args[0], args[1], bool(args[9]), args[5], args[6], root)
        ):
            on_child(frame)
        since = time.monotonic()
        _inside.depth += 1
        try:
            started = real_execute(self, *args, **kwargs)
        finally:
            _inside.depth -= 1
        if python and on_python is not None:
            on_python(self.pid, since, frame)
        return started

    subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]

    def spawn(path: Any, argv: Any, env: Any = None, *args: Any, **kwargs: Any) -> bool:
        return may_run_workspace_code(argv, path, False, None, env, root)

    def system(command: Any, *args: Any, **kwargs: Any) -> bool:
        return may_run_workspace_code(command, None, True, None, None, root)

    posix = sys.modules.get("_posixsubprocess")
    if posix is not None:  # multiprocessing's: always a Python child
        posix.fork_exec = _wrapped(posix.fork_exec, None, on_child)  # type: ignore[attr-defined]
    os.system = _wrapped(os.system, system, on_child)
    try:
        os.posix_spawn = _wrapped(os.posix_spawn, spawn, on_child)
        os.posix_spawnp = _wrapped(os.posix_spawnp, spawn, on_child)
    except AttributeError:  # not on this system
        pass


def _wrapped(
    real: Callable[..., Any], judge: Callable[..., bool] | None, on_child: Callable[[Any], None]
) -> Callable[..., Any]:
    """``real``, telling ``on_child`` of a child ``judge`` finds may run
    the workspace's code (None: every child), unless a judged
    ``subprocess.Popen`` starts it."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not _inside.depth and (judge is None or judge(*args, **kwargs)):
            on_child(sys._getframe(1))
        return real(*args, **kwargs)

    return wrapped
