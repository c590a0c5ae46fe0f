"""Tools from typed async functions: the ``@tool`` decorator and toolkits.

``@tool`` turns a typed ``async def`` into a :class:`~rein.harness.tools.Tool`:

* the name is the function's (or ``name=``);
* the arguments' JSON Schema comes from the signature: each parameter's
  annotation is its type, a parameter without a default is required, one
  with a default is optional; a parameter annotated :class:`ToolContext`
  receives the call's context and is not an argument;
* each argument's description comes from the docstring's Google-style
  ``Args:`` section, the tool's description from the text before it;
* it returns ``str`` or :class:`~rein.harness.tools.ToolResult` (a tool
  whose ``display`` is "table" may return its rows, one whose ``display``
  is "json" any JSON value: :mod:`rein.harness.calls.display`);
* ``display`` (default: its toolkit's, else "text") says how clients show
  the result: "text", "markdown", "diff", "table", "json" or "locations".

A :class:`Toolkit` is a class whose ``@tool`` methods become tools
(:meth:`Toolkit.tools`) and whose ``instructions`` become a
``<name_rules>`` section of the system prompt when one of its tools is
offered (:func:`rein.harness.prompts.toolkit_rules_sections`). Mistakes in a
definition (no docstring, a parameter without a type, an ``Args:`` entry for
no parameter, a sync function, an unknown display kind) raise :class:`TypeError` at decoration time.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints, overload

from pydantic import BaseModel, Field, create_model

from rein.harness.calls.display import DisplayKind, check_display, display_text
from rein.harness.tools import Tool, ToolClass, ToolContext, ToolResult

__all__ = ["FunctionTool", "Toolkit", "parse_docstring", "tool"]

_SECTION = re.compile(r"^(Args|Arguments|Returns|Yields|Raises|Examples?|Notes?):\s*$")
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]{0,63}$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {argument: description}) of a Google-style docstring:
    the description is the text before the first section, the arguments
    are the ``Args:`` section's entries (continuation lines, indented
    deeper than the entries, joined)."""
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    entry_indent: int | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc or "").splitlines():
        header = _SECTION.match(line)
        if header:
            section, entry_indent, current = header.group(1), None, None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in ("Args", "Arguments") or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if entry_indent is None:
            entry_indent = indent
        entry = _ARG.match(line.strip())
        if entry and indent <= entry_indent:
            current = entry.group(1).lstrip("*")
            args[current] = entry.group(2).strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}"
    return "\n".join(description).strip(), args


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(a is ToolContext for a in get_args(annotation))
    return False


class FunctionTool(Tool[BaseModel]):
    """A tool made by :func:`tool` from an async function (or a toolkit's
    method, bound to its toolkit on attribute access)."""

    #: The toolkit this tool belongs to (None for a plain function).
    toolkit: Toolkit | None = None

    def __init__(
        self,
        fn: Callable[..., Awaitable[Any]],
        *,
        name: str | None = None,
        tool_class: ToolClass = "other",
        prompt_section: str | None = None,
        timeout_s: float | None = None,
        display: DisplayKind | None = None,
    ) -> None:
        where = f"@tool {fn.__qualname__}"
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"{where}: a tool must be an async function")
        #: The display kind given to ``@tool`` (None: the toolkit's).
        self._display = None if display is None else check_display(where, display)
        self.display = self._display or "text"
        description, arg_docs = parse_docstring(fn.__doc__)
        if not description:
            raise TypeError(f"{where}: needs a docstring; its summary is the tool's description")
        tool_name = name or fn.__name__
        if not _NAME.match(tool_name):
            raise TypeError(f"{where}: {tool_name!r} is not a valid tool name")
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters.values())
        self._method = bool(params) and params[0].name == "self"
        if self._method:
            params = params[1:]
        fields: dict[str, Any] = {}
        self._context_param: str | None = None
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"{where}: *{param.name} cannot be a tool argument")
            if param.name not in hints:
                raise TypeError(f"{where}: argument {param.name!r} needs a type annotation")
            annotation = hints[param.name]
            if _is_context(annotation):
                self._context_param = param.name
                continue
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (
                annotation,
                Field(default, description=arg_docs.get(param.name)),
            )
        unknown = sorted(set(arg_docs) - set(fields))
        if unknown:
            raise TypeError(
                f"{where}: the docstring's Args name {', '.join(unknown)}, "
                "which the signature does not have"
            )
        self._fn = fn
        self._bound: object = None
        self.name = tool_name  # type: ignore[misc]
        self.description = description  # type: ignore[misc]
        self.tool_class = tool_class  # type: ignore[misc]
        self.timeout_s = timeout_s  # type: ignore[misc]
        model_name = "".join(part.title() for part in tool_name.split("_")) + "Args"
        self.args_model = create_model(model_name, **fields)  # type: ignore[misc]
        first = description.split("\n\n")[0].replace("\n", " ")
        self.prompt_section = prompt_section or f"`{tool_name}`: {first}"
        self._schema = None

    def __get__(self, instance: object, owner: type | None = None) -> FunctionTool:
        """On a toolkit instance: this tool bound to it (``self`` is the toolkit)."""
        if instance is None or not self._method:
            return self
        bound = object.__new__(FunctionTool)
        bound.__dict__.update(self.__dict__)
        bound._bound = instance
        bound._schema = None
        if isinstance(instance, Toolkit):
            bound.toolkit = instance
            bound.display = self._display or instance.display
        return bound

    async def execute(self, args: BaseModel, ctx: ToolContext) -> ToolResult | str:
        if self._method and self._bound is None:
            raise TypeError(f"tool {self.name!r} is a toolkit method: use it from a toolkit")
        kwargs = {name: getattr(args, name) for name in type(args).model_fields}
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        call = self._fn(self._bound, **kwargs) if self._method else self._fn(**kwargs)
        result = await call
        if isinstance(result, str | ToolResult):
            return result
        return display_text(f"tool {self.name!r}", self.display, result)


@overload
def tool(fn: Callable[..., Awaitable[Any]], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    tool_class: ToolClass = "other",
    prompt_section: str | None = None,
    timeout_s: float | None = None,
    display: DisplayKind | None = None,
) -> Callable[[Callable[..., Awaitable[Any]]], FunctionTool]: ...


def tool(
    fn: Callable[..., Awaitable[Any]] | None = None,
    /,
    *,
    name: str | None = None,
    tool_class: ToolClass = "other",
    prompt_section: str | None = None,
    timeout_s: float | None = None,
    display: DisplayKind | None = None,
) -> FunctionTool | Callable[[Callable[..., Awaitable[Any]]], FunctionTool]:
    """Make a tool of a typed async function: ``@tool`` or
    ``@tool(tool_class="write", name=..., prompt_section=..., timeout_s=...,
    display=...)``.

    ``tool_class`` ("read", "write", "command" or "other") decides what the
    system prompt says the role may do and whether explain mode offers it
    (approval stays the tool's own: ``rein.tools.check_approval``); the
    prompt section defaults to
    ``"`name`: <first paragraph of the description>"``. ``display``
    ("text", "markdown", "diff", "table", "json" or "locations"; default: the toolkit's,
    else "text") says how clients show the result.
    """

    def make(f: Callable[..., Awaitable[Any]]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            tool_class=tool_class,
            prompt_section=prompt_section,
            timeout_s=timeout_s,
            display=display,
        )

    return make(fn) if fn is not None else make


class Toolkit:
    """A family of tools: the ``@tool`` methods of a subclass.

    ``name`` (default: the class name in snake_case) names the
    ``<name_rules>`` section its ``instructions`` become in the system
    prompt of a role offered one of its tools. A toolkit configured by
    ``tools.toolkits`` or a ``rein.toolkits`` entry point is made with no
    arguments. ``display`` is the display kind of its tools that do not
    give one to ``@tool``.
    """

    name: ClassVar[str] = ""
    instructions: ClassVar[str] = ""
    display: ClassVar[DisplayKind] = "text"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
        if not _NAME.match(cls.name):
            raise TypeError(f"toolkit {cls.__qualname__}: {cls.name!r} is not a valid name")
        check_display(f"toolkit {cls.__qualname__}", cls.display)

    def tools(self) -> list[Tool[Any]]:
        """The toolkit's tools, bound to it, in definition order."""
        return [
            getattr(self, attr)
            for attr in _ordered_attrs(type(self))
            if isinstance(inspect.getattr_static(type(self), attr), FunctionTool)
        ]


def _ordered_attrs(cls: type) -> list[str]:
    """Attribute names from base to subclass, each once, in definition order."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for attr in vars(klass):
            if attr not in names:
                names.append(attr)
    return names
