"""Which child process a test starts can make its coverage record miss
something: the recording plugin's hooks on ``subprocess``, ``os.system``
and ``os.posix_spawn`` (:mod:`rein.testgate.recorder`; this module's text
is written beside the plugin as ``rein_testgate_children`` and imported
by it, so it is plain Python for any interpreter from 3.8, standard
library only).

A child runs untraced. One that can run the workspace's Python code, or
read its files, makes the test *opaque* (it runs whenever its test file
is selected): a Python interpreter (``sys.executable``, any ``python*``
or ``pypy*``), a script (``#!``, or an executable that is no native
binary: an entry point, a wrapper), a file of the workspace, a word that
names Python anywhere in the command (``env python``, ``sh -c "python
..."``, ``PYTHONPATH=...``), a shell line that expands (``$VAR``, a
backquote, a glob, ``~``) or changes folder (``cd``), a shell reading a
script file (``sh run.sh``, ``. env.sh``), a program the environment
names as a command (``EDITOR``, ``PAGER``, ``GIT_EDITOR``, ...) that is
one of those, a ``preexec_fn`` (Python in the child), a fork. Started in
the workspace's folder, a child must also be a program that reads only
what it is given (a pager, ``cat``, ``sed``, an editor, a shell or
launcher whose command is judged the same way): ``git status`` or
``grep -r`` there reads the workspace's files unnamed. Any other child
(a pager, an editor on a temporary file, ``git`` in a temporary
repository) cannot make the record miss anything: the test is judged by
its record. click's 15 ``echo_via_pager`` tests (``cat`` as the pager)
and ``test_fast_edit`` (``sed -i`` as the editor) were opaque, run at
every verdict that selected their files.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["install", "may_run_workspace_code"]

#: Shells: the words they are given are commands too (tokenized).
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
#: Programs that read only their operands and standard input, or run only
#: the command they are given (judged as any word): harmless in the
#: workspace's folder.
OPERANDS_ONLY = SHELLS | frozenset(
    {
        *("cat", "less", "more", "most", "pg", "head", "tail", "sed", "tr", "sort", "uniq"),
        *("wc", "cut", "tee", "echo", "printf", "true", "false", "sleep", "yes", "stty"),
        *("tput", "clear", "vi", "vim", "nvim", "view", "nano", "pico", "ed", "ex", "emacs"),
        *("mg", "micro", "joe", "env", "nice", "nohup", "timeout", "stdbuf", "xargs"),
    }
)
#: Environment variables whose value a program may run as a command.
COMMAND_VARIABLES = (
    *("EDITOR", "VISUAL", "PAGER", "MANPAGER", "GIT_EDITOR", "GIT_PAGER", "GIT_SEQUENCE_EDITOR"),
    *("GIT_SSH_COMMAND", "LESSOPEN", "LESSCLOSE", "BROWSER", "SUDO_ASKPASS", "SSH_ASKPASS"),
)
#: The first bytes of a native executable (ELF, Mach-O).
_NATIVE = (
    b"\x7fELF",
    b"\xfe\xed\xfa",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
)
_OPERATORS = frozenset(";&|()<>\n")
_FOLDER_CHANGES = frozenset({"cd", "pushd", "popd", ".", "source", "eval", "exec"})


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
    run the workspace's (``root``'s) Python code or read its files; True
    when that cannot be told."""
    try:
        return _judge(args, executable, shell, cwd, env, root)
    except Exception:  # anything unforeseen: the test is opaque
        return True


def _judge(args: Any, executable: Any, shell: bool, cwd: Any, env: Any, root: str) -> bool:
    items = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    words = [_text(item) for item in items]
    tokens = words[1:] if shell else list(words)
    if executable is not None:
        tokens.append(_text(executable))
    scripted = shell or any(_base(w) in SHELLS for w in tokens)
    if scripted:
        # The shell's line, and a list's word that is one (``sh -c "..."``).
        for line in words[:1] if shell else []:
            found, expands = _shell_words(line)
            if expands:
                return True
            tokens += found
        for word in list(tokens):
            if any(c.isspace() or c in _OPERATORS for c in word):
                found, expands = _shell_words(word)
                if expands:
                    return True
                tokens += found
        if any(w in _FOLDER_CHANGES for w in tokens):
            return True  # another folder, or a script file read: not told
    variables = _variables(env)
    folder = os.path.abspath(_text(cwd) if cwd is not None else os.getcwd())
    # What the environment names as a command (a pager, an editor): the
    # user's, not the project's, unless it names Python or the workspace.
    for name in COMMAND_VARIABLES:
        for token in _shell_words(variables.get(name, ""))[0]:
            named = _resolve(token, folder, variables.get("PATH", os.defpath))
            if _pythonish(token) or (named is not None and _under(os.path.abspath(named), root)):
                return True
    # A shell given a file reads it as a script (``sh run.sh``).
    shells = any(_base(t) in SHELLS for t in tokens)
    return any(_unsafe(t, folder, variables, root, shells) for t in tokens)


def _unsafe(token: str, folder: str, variables: dict[str, str], root: str, shells: bool) -> bool:
    """Whether the word ``token`` of a child's command may run the
    workspace's code or read its files (see the module docstring)."""
    if _pythonish(token):
        return True
    found = _resolve(token, folder, variables.get("PATH", os.defpath))
    if found is None:
        return False  # no file: an option, a text, a name not on the path
    real = os.path.realpath(found)
    if _under(os.path.abspath(found), root) or _under(real, root):
        return True  # a workspace file: run, or read
    if real == os.path.realpath(sys.executable) or _pythonish(os.path.basename(real)):
        return True
    program = found != os.path.join(folder, token)  # found on the path
    if os.path.isfile(real):
        with open(real, "rb") as handle:
            head = handle.read(4)
        executable = os.access(real, os.X_OK)
        if not head.startswith(_NATIVE) and (head.startswith(b"#!") or executable or shells):
            return True  # a script, or a file a shell may read as one
        program = program or executable
    # In the workspace's folder, a program may read its files unnamed.
    return program and _under(folder, root) and _base(token) not in OPERANDS_ONLY


def _shell_words(line: str) -> tuple[list[str], bool]:
    """A POSIX shell line's words, quotes removed, and whether it expands
    anything (``$``, a backquote, a glob, ``~``) or does not end its
    quotes: what it runs then cannot be told."""
    words: list[str] = []
    word: list[str] = []
    started = False
    quote = ""
    expands = False
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
            else:
                expands = expands or char in "$`"
                word.append(char)
        elif char in "'\"":
            quote, started = char, True
        elif char == "\\":
            escaped = True
        elif char.isspace() or char in _OPERATORS:
            if started:
                words.append("".join(word))
            word, started = [], False
        elif char == "#" and not started:
            break  # a comment
        else:
            expands = expands or char in "$`*?[" or (char == "~" and not started)
            word.append(char)
            started = True
    if started:
        words.append("".join(word))
    return words, expands or bool(quote) or escaped


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


def install(root: str, on_child: Callable[[Any], None]) -> None:
    """Hook where a test starts a child: ``on_child(frame)`` (the frame
    that started it) for each that may run ``root``'s code or read its
    files (:func:`may_run_workspace_code`), and for multiprocessing's
    starts; not for the others."""
    import subprocess

    real_execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: Any, *args: Any, **kwargs: Any) -> Any:
        # (args, executable, preexec_fn, close_fds, pass_fds, cwd, env,
        # startupinfo, creationflags, shell, ...), positional from 3.8 on.
        judged = len(args) >= 10 and args[2] is None
        if not judged or may_run_workspace_code(
            args[0], args[1], bool(args[9]), args[5], args[6], root
        ):
            on_child(sys._getframe(1))
        _inside.depth += 1
        try:
            return real_execute(self, *args, **kwargs)
        finally:
            _inside.depth -= 1

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
