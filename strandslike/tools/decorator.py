"""The `@tool` decorator: turn a plain function, coroutine function, async generator or method into an `AgentTool`.

Everything that can be worked out from the function itself (its signature, type hints, docstring, the pydantic
model that validates its input and the JSON schema shown to the model) is computed once, at decoration time, so a
call costs a validation, the call itself and the wrapping of its result.

Example:
    ```python
    from strandslike import tool

    @tool
    def word_count(text: str) -> int:
        '''Count the words in a text.'''
        return len(text.split())
    ```
"""

import functools
import inspect
import json
import re
import threading
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Generic, ParamSpec, TypeVar, cast, overload

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

from ..interrupt._errors import InterruptError
from ..interrupt._interrupt import InterruptException
from ..types._events import ToolInterruptEvent, ToolStreamEvent
from ..types.events import ToolResultEvent
from ..types.tools import AgentTool, ToolContext, ToolGenerator, ToolResult, ToolSpec, ToolUse
from ._generation import replace_tool_spec

if TYPE_CHECKING:
    from pydantic import BaseModel

# pydantic is imported when the first tool is decorated, not with strandslike: `import strandslike` stays cheap.

P = ParamSpec("P")
R = TypeVar("R")

# Parameters the framework supplies (or Python binds) and the model therefore never sees.
_ALWAYS_EXCLUDED = frozenset({"self", "cls", "agent"})
# Strands' section names: the parameter section is cut from the description, the others end it.
_ARGS_HEADERS = ("args:", "arguments:", "parameters:", "param:", "params:")
_OTHER_HEADERS = (
    *("returns:", "return:", "yields:", "yield:", "raises:", "raise:", "except:", "exceptions:"),
    *("examples:", "example:", "note:", "notes:", "see also:", "seealso:", "references:", "ref:"),
)
_REST_PARAM = re.compile(r"^:(param|parameter|arg|argument|key|keyword|type)\b[^:]*:")
_UNDERLINE = re.compile(r"^-{3,}$")
_NUMPY_PARAM_SECTIONS = frozenset({"parameters", "other parameters", "params", "arguments", "args"})

# anyio's default thread limiter allows 40 threads per event loop, so a batch of more than 40 concurrent sync tools
# would queue behind it. Tools get their own, larger limiter. It lives in a RunVar (one per event loop, the way anyio
# keeps its default limiter) because a limiter is bound to the loop and backend that first uses it, and blocking
# entry points may run several loops in different threads.
# Built once: json.dumps(..., ensure_ascii=False) builds a new encoder for every call.
_RESULT_JSON = json.JSONEncoder(ensure_ascii=False)
_MAX_TOOL_THREADS = 256
_TOOL_THREAD_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("strandslike_tool_thread_limiter")


def _tool_thread_limiter() -> anyio.CapacityLimiter:
    try:
        return _TOOL_THREAD_LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(_MAX_TOOL_THREADS)
        _TOOL_THREAD_LIMITER.set(limiter)
        return limiter


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into the description shown to the model and the per-parameter texts.

    Parameter texts come from docstring_parser (Google, reST, NumPy and Epydoc styles), as in Strands. The
    description is the docstring without its parameter documentation: Strands' own cut of the Google ``Args:``
    section (other sections such as ``Returns:`` and ``Raises:`` are kept because they help the model use the
    tool), plus the reST ``:param x:`` / ``:type x:`` fields and the NumPy ``Parameters`` section, which Strands
    leaves in the description.
    """
    params = {param.arg_name: param.description or f"Parameter {param.arg_name}" for param in _params_of(doc)}
    lines = _without_numpy_params(_without_rest_params(doc.strip().split("\n")))
    kept: list[str] = []
    skipping = False
    for line in lines:  # Strands' cut of the Google sections (decorator.py, _extract_description_from_docstring)
        lowered = line.strip().lower()
        if lowered.startswith(_ARGS_HEADERS):
            skipping = True
            continue
        if lowered.startswith(_OTHER_HEADERS):
            skipping = False
            kept.append(line)
            continue
        if not skipping:
            kept.append(line)
    return "\n".join(kept).strip(), params


def _params_of(doc: str) -> list[Any]:
    import docstring_parser  # imported with the first decorated tool, not with strandslike

    try:
        return list(docstring_parser.parse(doc).params)
    except docstring_parser.ParseError:
        return []  # a malformed docstring describes no parameters; the description still comes from its text


def _without_rest_params(lines: list[str]) -> list[str]:
    """Drop reST/Sphinx parameter fields (``:param x:``, ``:type x:``, ...) and their continuation lines."""
    kept: list[str] = []
    field_indent: int | None = None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if field_indent is not None and line.strip() and indent > field_indent:
            continue  # a continuation of the dropped field
        field_indent = None
        if _REST_PARAM.match(line.strip()):
            field_indent = indent
            continue
        kept.append(line)
    return kept


def _without_numpy_params(lines: list[str]) -> list[str]:
    """Drop NumPy-style ``Parameters`` sections (a header underlined with dashes, up to the next such header)."""

    def header_at(index: int) -> bool:
        return (
            index + 1 < len(lines) and bool(lines[index].strip()) and bool(_UNDERLINE.match(lines[index + 1].strip()))
        )

    kept: list[str] = []
    index = 0
    skipping = False
    while index < len(lines):
        if header_at(index):
            skipping = lines[index].strip().lower() in _NUMPY_PARAM_SECTIONS
            if skipping:
                index += 2
                continue
        if not skipping:
            kept.append(lines[index])
        index += 1
    return kept


def _resolve_type_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """Return the function's type hints (with ``Annotated`` extras), tolerating unresolvable ones.

    A parameter like ``agent: "Agent"`` whose type is imported only under ``TYPE_CHECKING`` makes
    `typing.get_type_hints` fail for the whole function, although that parameter never reaches the schema. Such
    hints are resolved one by one instead, and the unresolvable ones are left as their string.
    """
    try:
        return typing.get_type_hints(func, include_extras=True)
    except NameError:
        pass
    globalns = getattr(inspect.unwrap(func), "__globals__", {})
    hints: dict[str, Any] = {}
    for name, annotation in inspect.get_annotations(func).items():
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            hints.update(typing.get_type_hints(holder, globalns=globalns, include_extras=True))
        except NameError:
            hints[name] = annotation
    return hints


def _is_tool_context(hint: Any) -> bool:
    if typing.get_origin(hint) is Annotated:
        hint = hint.__origin__
    return isinstance(hint, type) and issubclass(hint, ToolContext)


def _clean_schema(schema: dict[str, Any]) -> None:
    """Strip pydantic's titles and ``additionalProperties`` and collapse optional-with-default properties.

    Nested ``$defs`` are left alone: their titles name the nested models.
    """
    schema.pop("title", None)
    schema.pop("additionalProperties", None)
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        any_of = prop.get("anyOf")
        # `x: X | None = None` is shown as plain X: models handle "omit it" better than a null union. A required
        # nullable parameter keeps its anyOf, because there null is the only way to say "none".
        if name not in required and isinstance(any_of, list) and len(any_of) == 2:
            non_null = [item for item in any_of if item.get("type") != "null"]
            if len(non_null) == 1:
                del prop["anyOf"]
                prop.update({key: value for key, value in non_null[0].items() if key not in prop})
        if "properties" in prop:
            _clean_schema(prop)
        prop.pop("title", None)
        prop.pop("additionalProperties", None)


class _InvalidToolInputError(TypeError):
    """The tool input is not a JSON object."""


class _FunctionMetadata:
    """What `@tool` learns about a function once, at decoration time."""

    __slots__ = (
        "context_param",
        "description",
        "field_names",
        "input_model",
        "input_schema",
        "is_async",
        "is_async_gen",
        "param_names",
        "positional_only",
        "takes_var_kwargs",
        "wants_agent",
    )

    def __init__(self, func: Callable[..., Any], context_param: str | None, explicit_schema: bool) -> None:
        signature = inspect.signature(func)
        hints = _resolve_type_hints(func)
        description, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
        self.description = description or func.__name__
        self.context_param = context_param
        self.is_async_gen = inspect.isasyncgenfunction(func)
        self.is_async = inspect.iscoroutinefunction(func)
        self._check_context_param(signature, hints, context_param)

        excluded = _ALWAYS_EXCLUDED | ({context_param} if context_param else set())
        params = [
            param
            for param in signature.parameters.values()
            if param.name not in excluded and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
        ]
        self.param_names = frozenset(param.name for param in params)
        self.positional_only = tuple(param.name for param in params if param.kind is param.POSITIONAL_ONLY)
        self.takes_var_kwargs = any(param.kind is param.VAR_KEYWORD for param in signature.parameters.values())
        self.wants_agent = "agent" in signature.parameters
        # Fields get neutral internal names and the parameter name as alias: parameter names such as `json`,
        # `schema`, `model_id` or `_private` would otherwise clash with BaseModel attributes or pydantic's
        # protected namespaces (warnings or errors), although they are perfectly good tool inputs.
        self.field_names = tuple((f"p{index}", param.name) for index, param in enumerate(params))
        self.input_model: type[BaseModel] | None = None
        self.input_schema: dict[str, Any] = {}
        if explicit_schema:
            return  # the caller's schema replaces ours; building a model could fail on types it cannot describe
        fields: dict[str, Any] = {
            internal: self._field_definition(param, hints, arg_docs)
            for (internal, _), param in zip(self.field_names, params, strict=True)
        }
        from pydantic import create_model

        # Strands' model name; it appears in validation error texts the model reads.
        self.input_model = create_model(f"{func.__name__.capitalize()}Tool", **fields)
        self.input_schema = self.input_model.model_json_schema()
        _clean_schema(self.input_schema)

    @staticmethod
    def _check_context_param(signature: inspect.Signature, hints: dict[str, Any], context_param: str | None) -> None:
        if context_param is None:
            if any(_is_tool_context(hints.get(name)) for name in signature.parameters):
                raise ValueError("@tool(context) must be set if passing in ToolContext param")
        elif context_param not in signature.parameters:
            raise ValueError(f"param_name=<{context_param}> | ToolContext param must be named '{context_param}'")

    @staticmethod
    def _field_definition(param: inspect.Parameter, hints: dict[str, Any], arg_docs: dict[str, str]) -> tuple[Any, Any]:
        from pydantic import Field
        from pydantic.fields import FieldInfo

        hint = hints.get(param.name, Any)
        if isinstance(hint, str):
            raise NameError(
                f"Cannot resolve the type hint {hint!r} of parameter {param.name!r}: import the type at module "
                "level (not only under TYPE_CHECKING) so @tool can build the input schema."
            )
        text: str | None = None
        if typing.get_origin(hint) is Annotated:
            for extra in hint.__metadata__:
                if isinstance(extra, str):
                    text = extra  # the last string wins, as in Strands
                elif isinstance(extra, FieldInfo):
                    # Strands refuses it (harness-sdk#511, #1089): a FieldInfo inside Annotated cannot be merged
                    # reliably with the parameter's own default and description.
                    raise NotImplementedError(
                        "Using pydantic.Field within Annotated is not yet supported for tool decorators. "
                        "Please use a simple string for the description, or define constraints in the function's "
                        "docstring."
                    )
            hint = hint.__origin__  # other metadata is ignored, as in Strands
        default: Any = ... if param.default is inspect.Parameter.empty else param.default
        explicit = default.description if isinstance(default, FieldInfo) else None
        description = explicit or text or arg_docs.get(param.name) or f"Parameter {param.name}"
        # The alias keeps the parameter's name on the wire (fields get neutral internal names); a `= Field(...)`
        # default is merged with it by pydantic, its own description winning as in Strands.
        annotated = cast(Any, Annotated)[hint, Field(alias=param.name, description=description)]
        return annotated, default

    def build_kwargs(self, tool_input: Any) -> dict[str, Any]:
        """Return the validated input as keyword arguments.

        Raises:
            ValidationError: The input does not match the parameters.
            _InvalidToolInputError: An explicit ``inputSchema`` is in use and the input is not a dict.
        """
        if self.input_model is not None:
            values = self.input_model.model_validate(tool_input).__dict__
            return {name: values[internal] for internal, name in self.field_names}
        if not isinstance(tool_input, dict):
            raise _InvalidToolInputError(f"tool input must be a JSON object, got {type(tool_input).__name__}")
        if self.takes_var_kwargs:
            excluded = _ALWAYS_EXCLUDED | ({self.context_param} if self.context_param else set())
            return {key: value for key, value in tool_input.items() if key not in excluded}
        return {key: value for key, value in tool_input.items() if key in self.param_names}

    def inject(self, kwargs: dict[str, Any], tool_use: ToolUse, invocation_state: dict[str, Any]) -> None:
        """Add the framework-supplied arguments (`ToolContext`, ``agent``) the function declares."""
        agent: Any = invocation_state.get("agent")
        if self.context_param is not None:
            cancel_signal = getattr(agent, "_cancel_signal", None)
            if not isinstance(cancel_signal, threading.Event):
                cancel_signal = threading.Event()
            kwargs[self.context_param] = ToolContext(
                tool_use=tool_use, agent=agent, invocation_state=invocation_state, cancel_signal=cancel_signal
            )
        if self.wants_agent and "agent" in invocation_state:
            kwargs["agent"] = agent


def _wrap_result(tool_use_id: str, value: Any) -> ToolResult:
    """Turn what the function returned into a successful `ToolResult`."""
    if isinstance(value, dict) and "status" in value and "content" in value:
        # Already a ToolResult: keep it, but never trust the function with the id (copied, not mutated).
        return cast(ToolResult, {**value, "toolUseId": tool_use_id})
    if isinstance(value, str):
        text = value
    elif callable(getattr(value, "model_dump_json", None)):  # a pydantic model
        text = value.model_dump_json()
    else:
        try:
            text = _RESULT_JSON.encode(value)
        except (TypeError, ValueError, RecursionError):
            text = str(value)
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}


def _error_result(tool_use_id: str, text: str) -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


def _exception_result(tool_use_id: str, exc: Exception) -> ToolResultEvent:
    # Strands gives ValueError the short form because its validation errors were ValueErrors; user ValueErrors
    # get it too (reference section 8, item 27). Kept: the model reads these texts and prompts may rely on them.
    text = f"Error: {exc}" if isinstance(exc, ValueError) else f"Error: {type(exc).__name__} - {exc}"
    return ToolResultEvent(_error_result(tool_use_id, text), exc)


class DecoratedFunctionTool(AgentTool, Generic[P, R]):
    """An `AgentTool` made by `@tool` from a function; calling it still calls the function.

    Attribute access through an instance binds a decorated method to that instance, the way functions do, so
    ``Toolbox().search`` is a tool whose calls receive ``self``.
    """

    _announces_spec_changes = True  # a replaced spec bumps SPEC_GENERATION

    def __init__(
        self,
        tool_name: str,
        tool_spec: ToolSpec,
        tool_func: Callable[P, R],
        metadata: _FunctionMetadata,
        idempotent: bool = False,
    ) -> None:
        """Wrap a function as a tool; use `tool` rather than calling this directly.

        Args:
            tool_name: The name the model calls the tool by.
            tool_spec: The spec sent to the model.
            tool_func: The decorated function (or bound method).
            metadata: What `tool` learned about the function.
            idempotent: Running it twice for one tool use is safe (see `AgentTool.idempotent`).
        """
        super().__init__()
        self._idempotent = idempotent
        self._tool_name = tool_name
        self._tool_spec = tool_spec
        self._tool_func = tool_func
        self._metadata = metadata
        functools.update_wrapper(wrapper=self, wrapped=tool_func)

    def __get__(self, instance: Any, owner: type | None = None) -> "DecoratedFunctionTool[P, R]":
        """Bind a decorated method to ``instance``, returning a tool whose calls receive it as ``self``.

        Args:
            instance: The instance the attribute is read from, or None when read from the class.
            owner: The class the attribute is read from.

        Returns:
            A new tool wrapping the bound method, or this tool when read from the class or already bound.
        """
        if instance is None or inspect.ismethod(self._tool_func):
            return self
        bound = cast(Callable[P, R], self._tool_func.__get__(instance, owner))
        return DecoratedFunctionTool(self._tool_name, self._tool_spec, bound, self._metadata, self._idempotent)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the original function directly: no validation, no result wrapping."""
        return self._tool_func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<DecoratedFunctionTool {self._tool_name!r} wrapping {self._tool_func!r}>"

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self._tool_name

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec sent to the model: name, description and ``{"json": <JSON schema>}`` input schema."""
        return self._tool_spec

    @tool_spec.setter
    def tool_spec(self, value: ToolSpec) -> None:
        """Replace the spec, for example to tweak the description; the name cannot change this way.

        Raises:
            ValueError: The new spec renames the tool or lacks a description or input schema.
        """
        self._tool_spec = replace_tool_spec(
            self._tool_name, value, rename_hint="rename the tool with @tool(name=...) instead"
        )

    @property
    def tool_type(self) -> str:
        """Always ``"function"``."""
        return "function"

    @property
    def idempotent(self) -> bool:
        """Whether ``@tool(idempotent=True)`` declared that running it twice for one tool use is safe."""
        return self._idempotent

    @property
    def supports_hot_reload(self) -> bool:
        """Function tools may be reloaded from their module; always True."""
        return True

    def get_display_properties(self) -> dict[str, str]:
        """Return the base properties plus the wrapped function's name."""
        return {**super().get_display_properties(), "Function": getattr(self._tool_func, "__name__", "")}

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Validate the input, run the function and yield Strands' tool events, a `ToolResultEvent` last.

        An async generator function's values are yielded as they come, each as a `ToolStreamEvent`, and the last
        one is also its result. Errors become error results the model can read; an interrupt raised by the function
        (``tool_context.interrupt``) is yielded as a `ToolInterruptEvent`. Cancellation propagates.

        Args:
            tool_use: The tool use to execute.
            invocation_state: Per-invocation state; ``agent`` is injected into the function if it declares it.
            **kwargs: Reserved for future arguments.

        Yields:
            ``ToolStreamEvent`` s of async generator tools, then a `ToolResultEvent` (or a `ToolInterruptEvent`).
        """
        tool_use_id = tool_use.get("toolUseId", "unknown")
        metadata = self._metadata
        try:
            call_kwargs = metadata.build_kwargs(tool_use.get("input", {}))
        except (ValueError, _InvalidToolInputError) as exc:  # pydantic's ValidationError is a ValueError
            text = f"Error: Validation failed for input parameters: {exc}"
            yield ToolResultEvent(_error_result(tool_use_id, text), exc)
            return
        metadata.inject(call_kwargs, tool_use, invocation_state)
        args: list[Any] = []
        for param_name in metadata.positional_only:  # empty unless the function has `/` in its signature
            if param_name not in call_kwargs:
                break
            args.append(call_kwargs.pop(param_name))
        if metadata.is_async_gen:
            async for event in self._stream_generator(tool_use, args, call_kwargs):
                yield event
            return
        func: Callable[..., Any] = self._tool_func
        try:
            if metadata.is_async:
                value = await func(*args, **call_kwargs)
            else:
                call = functools.partial(func, *args, **call_kwargs)
                value = await anyio.to_thread.run_sync(call, limiter=_tool_thread_limiter())
        except InterruptError:
            raise  # a stored answer was refused when the tool read it: the run stays interrupted and resumable
        except InterruptException as interrupt:
            yield ToolInterruptEvent(tool_use, [interrupt.interrupt])
            return
        except Exception as exc:
            yield _exception_result(tool_use_id, exc)
            return
        yield ToolResultEvent(_wrap_result(tool_use_id, value))

    async def _stream_generator(self, tool_use: ToolUse, args: list[Any], kwargs: dict[str, Any]) -> ToolGenerator:
        tool_use_id = tool_use.get("toolUseId", "unknown")
        func: Callable[..., Any] = self._tool_func
        generator = func(*args, **kwargs)
        has_value, last = False, None
        try:
            while True:
                # Only the function's own step is guarded: an exception thrown into this generator at a `yield`
                # (the consumer closing it) must not be mistaken for a tool failure.
                try:
                    value = await anext(generator)
                except StopAsyncIteration:
                    break
                except InterruptError:
                    raise
                except InterruptException as interrupt:
                    yield ToolInterruptEvent(tool_use, [interrupt.interrupt])
                    return
                except Exception as exc:
                    yield _exception_result(tool_use_id, exc)
                    return
                has_value, last = True, value
                yield ToolStreamEvent(tool_use, value)
        finally:
            await generator.aclose()
        if not has_value:
            yield ToolResultEvent(_error_result(tool_use_id, f"Tool '{tool_use.get('name')}' did not return a result"))
            return
        yield ToolResultEvent(_wrap_result(tool_use_id, last))


@overload
def tool(func: Callable[P, R], /) -> DecoratedFunctionTool[P, R]: ...


@overload
def tool(
    func: None = None,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,  # Strands' spelling
    name: str | None = None,
    context: bool | str = False,
    idempotent: bool = False,
) -> Callable[[Callable[P, R]], DecoratedFunctionTool[P, R]]: ...


def tool(
    func: Callable[P, R] | None = None,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,  # Strands' spelling
    name: str | None = None,
    context: bool | str = False,
    idempotent: bool = False,
) -> DecoratedFunctionTool[P, R] | Callable[[Callable[P, R]], DecoratedFunctionTool[P, R]]:
    """Turn a function into a tool the model can call; the function stays callable as before.

    Usable bare (``@tool``) or with arguments (``@tool(name="x", context=True)``). The spec's description is the
    docstring without its ``Args:`` section, and each parameter is described by ``Annotated[T, "text"]``, else its
    docstring ``Args:`` entry, else ``"Parameter <name>"``. Parameters named ``self``, ``cls`` and ``agent`` and the
    context parameter are not part of the schema; ``agent`` receives the running agent.

    Args:
        func: The function to decorate (given when used bare).
        description: Replaces the description taken from the docstring.
        inputSchema: Replaces the generated input schema, either ``{"json": schema}`` or the JSON schema itself.
            Input is then passed through unvalidated (it must still be a JSON object).
        name: Replaces the function name as the tool name.
        context: True to receive a `ToolContext` in the parameter named ``tool_context``, or the name of the
            parameter to receive it in.
        idempotent: Running the tool twice for one tool use is safe: after a crash while it ran, a resumed
            session runs it again (with the same ``ToolContext.idempotency_key``) instead of reporting that its
            outcome is unknown (strandslike).

    Returns:
        The `DecoratedFunctionTool`, or a decorator making one when called with arguments only.

    Raises:
        ValueError: A parameter is annotated `ToolContext` but ``context`` is not set, or ``context`` names a
            parameter the function does not have.
    """
    if isinstance(context, str):
        context_param: str | None = context.strip()
        if not context_param:
            raise ValueError("Context parameter name cannot be empty")
    else:
        context_param = "tool_context" if context else None

    def decorator(f: Callable[P, R]) -> DecoratedFunctionTool[P, R]:
        if not callable(f):
            raise TypeError(
                f"@tool got {f!r}, which is not a function; pass options by keyword: @tool(description=...)"
            )
        metadata = _FunctionMetadata(f, context_param, explicit_schema=inputSchema is not None)
        if inputSchema is None:
            schema: dict[str, Any] = {"json": metadata.input_schema}
        else:
            # Strands takes the spec's whole inputSchema ({"json": ...}); a bare JSON schema is accepted too.
            schema = inputSchema if set(inputSchema) == {"json"} else {"json": inputSchema}
        tool_name = name if name is not None else f.__name__
        if not isinstance(tool_name, str):
            raise ValueError(f"Tool name must be a string, got {type(tool_name)}")
        spec: ToolSpec = {
            "name": tool_name,
            "description": description if description is not None else metadata.description,
            "inputSchema": schema,
        }
        return DecoratedFunctionTool(tool_name, spec, f, metadata, idempotent)

    if func is None:
        return decorator
    return decorator(func)


__all__ = ["DecoratedFunctionTool", "tool"]
