"""The tools an agent can call, by name (Strands' ``ToolRegistry``).

`ToolRegistry.process_tools` takes what ``Agent(tools=[...])`` takes in Strands 1.62: ``@tool`` functions and
other `AgentTool` instances, file paths (``"./tools/weather.py"``), module paths (``"myapp.tools"``,
``"myapp.tools:weather"``), imported modules, ``{"name": ..., "path": ...}`` dicts, `ToolProvider` instances,
agents (wrapped with ``as_tool()``) and nested lists of these. Anything else, a plain function without ``@tool``
included, is skipped with a warning, as in Strands. A failed call registers nothing.
"""

import inspect
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .._log import get_logger
from ..types.exceptions import ToolNameConflictError
from ..types.tools import AgentTool, ToolSpec
from ._generation import SPEC_GENERATION
from .tool_provider import ToolProvider

if TYPE_CHECKING:
    from pathlib import Path

# The loaders, module-based tools and spec normalization are imported when first needed, not with the agent.

logger = get_logger(__name__)  # logging is imported on first use

# Bedrock's constraint on tool names; other providers accept a superset of it.
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _check_name(name: Any) -> None:
    # Strands lets any name through and the model provider refuses the request later; refused here, at once.
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ValueError(
            f"Invalid tool name {name!r}: tool names must be 1 to 64 characters of letters, digits, '_' or '-'. "
            "Rename the tool, e.g. @tool(name='my_tool')."
        )


class ToolRegistry:
    """The tools available to one agent, in registration order.

    Attributes:
        registry: The registered tools by name (the same dict as Strands' ``agent.tool_registry.registry``).
        dynamic_tools: The tools loaded at run time (from paths, module paths or a tools directory), by name.
        tool_config: Reserved, as in Strands.
    """

    def __init__(self) -> None:
        self.registry: dict[str, AgentTool] = {}
        self.dynamic_tools: dict[str, AgentTool] = {}
        self.tool_config: dict[str, Any] | None = None
        # (normalized specs, spec generation, ids of the spec objects). Decorated tools announce replaced specs
        # through the generation counter; other tools may return a new spec object at any time, so with any of them
        # the ids are compared on every call.
        self._specs_cache: tuple[list[ToolSpec], int, tuple[int, ...]] | None = None
        self._spec_owners_custom = False
        # The tool files of the tools directory as last loaded: path -> modification time (see `reload_changed_tools`).
        self._directory_mtimes: dict[Path, int] = {}
        # Tool providers this registry consumes (see `cleanup`), and its consumer id (a uuid4 string, made on first
        # use: most registries have no provider).
        self._tool_providers: list[ToolProvider] = []
        self._consumer_id: str | None = None

    @property
    def _registry_id(self) -> str:
        """This registry's consumer id with its tool providers (Strands' attribute)."""
        if self._consumer_id is None:
            import uuid

            self._consumer_id = str(uuid.uuid4())
        return self._consumer_id

    # -- registration ------------------------------------------------------------------------------------------

    def process_tools(self, tools: Iterable[Any]) -> list[str]:
        """Register tools given in any form Strands' ``Agent(tools=[...])`` takes (see the module docstring).

        Everything is loaded and checked before anything is registered, so a failed call registers nothing.

        Args:
            tools: The tools, e.g. ``[my_tool, "./tools/weather.py", "myapp.tools:search", [other_tool]]``.

        Returns:
            The names of the tools registered, in order.

        Raises:
            ValueError: A tool failed to load or register (``"Failed to load tool <tool>: <reason>"``, as in
                Strands), for example a file that does not exist as a path nor a module, a duplicate name, or a
                name that is not 1 to 64 letters, digits, ``_`` or ``-``.
        """
        registry, dynamic = dict(self.registry), dict(self.dynamic_tools)
        names: list[str] = []
        providers: list[ToolProvider] = []

        def register(agent_tool: AgentTool, *, dynamic_load: bool = False) -> None:
            if dynamic_load:
                agent_tool.mark_dynamic()
            _register_into(registry, dynamic, agent_tool)
            names.append(agent_tool.tool_name)

        def add(tool: Any) -> None:
            try:
                if isinstance(tool, ToolProvider):
                    self._add_provider(tool, providers, register)
                else:
                    self._add(tool, register, add)
            except Exception as exc:
                raise ValueError(f"Failed to load tool {tool}: {exc}") from exc

        try:
            if isinstance(tools, AgentTool | str | dict | ToolProvider) or not isinstance(tools, Iterable):
                add(tools)  # a lone tool where a list was expected: take it as a list of one
            else:
                for tool in tools:
                    add(tool)
        except BaseException:
            for provider in providers:  # nothing of this call is registered: neither is its consumer
                provider.remove_consumer(self._registry_id)
            raise
        self._commit(registry, dynamic)
        self._tool_providers.extend(providers)
        return names

    def _add_provider(self, provider: ToolProvider, providers: list[ToolProvider], register: Any) -> None:
        """Consume ``provider`` and register its tools (Strands loads them at once, blocking)."""
        from .._sync import run_sync

        provider.add_consumer(self._registry_id)
        providers.append(provider)

        async def load() -> Any:
            return await provider.load_tools()

        for provider_tool in run_sync(load):
            register(provider_tool)

    @staticmethod
    def _add(tool: Any, register: Any, add: Any) -> None:
        from .loader import load_tool_from_string, load_tools_from_module

        if isinstance(tool, str):  # a file path, a module path, or "module.path:tool_name"
            for loaded in load_tool_from_string(tool):
                register(loaded, dynamic_load=True)
        elif isinstance(tool, dict) and "name" in tool and "path" in tool:
            loaded_tools = [t for t in load_tool_from_string(tool["path"]) if t.tool_name == tool["name"]]
            if not loaded_tools:
                raise ValueError(f'Tool "{tool["name"]}" not found in "{tool["path"]}"')
            for loaded in loaded_tools:
                register(loaded, dynamic_load=True)
        elif isinstance(tool, dict) and "path" in tool:
            for loaded in load_tool_from_string(tool["path"]):
                register(loaded, dynamic_load=True)
        elif inspect.ismodule(tool) and hasattr(tool, "__file__"):
            for loaded in load_tools_from_module(tool, tool.__name__.split(".")[-1]):
                register(loaded)
        elif isinstance(tool, AgentTool):
            register(tool)
        elif isinstance(tool, Iterable) and not isinstance(tool, str | bytes | bytearray | dict):
            for item in tool:
                add(item)
        elif _is_agent(tool):
            register(tool.as_tool())
        else:
            # Strands skips what it does not recognize, a function without @tool included, with this warning.
            logger.warning("tool=<%s> | unrecognized tool specification", tool)

    def register_tool(self, tool: AgentTool) -> None:
        """Register one tool, as Strands does: a tool of the same name is replaced if it supports hot reload.

        Raises:
            ValueError: The name is taken by a tool that does not support hot reload, or by one differing only by
                ``-`` / ``_``, or it is not 1 to 64 letters, digits, ``_`` or ``-``.
        """
        registry, dynamic = dict(self.registry), dict(self.dynamic_tools)
        _register_into(registry, dynamic, tool)
        self._commit(registry, dynamic)

    def replace(self, new_tool: AgentTool) -> None:
        """Swap the implementation of a registered tool; it takes effect at the next model call.

        Raises:
            ValueError: No tool of that name is registered.
        """
        name = new_tool.tool_name
        if name not in self.registry:
            raise ValueError(f"Cannot replace tool '{name}' - tool does not exist")
        registry, dynamic = dict(self.registry), dict(self.dynamic_tools)
        registry[name] = new_tool
        if new_tool.is_dynamic:
            dynamic[name] = new_tool
        else:
            dynamic.pop(name, None)
        self._commit(registry, dynamic)

    def register_dynamic_tool(self, tool: AgentTool) -> None:
        """Register a tool for temporary use (listed in `dynamic_tools` only).

        Raises:
            ValueError: A tool of that name exists.
        """
        if tool.tool_name in self.registry or tool.tool_name in self.dynamic_tools:
            raise ValueError(f"Tool '{tool.tool_name}' already exists")
        _check_name(tool.tool_name)
        self.dynamic_tools[tool.tool_name] = tool
        self._specs_cache = None

    def _commit(self, registry: dict[str, AgentTool], dynamic: dict[str, AgentTool]) -> None:
        changed = registry != self.registry or dynamic != self.dynamic_tools
        self.registry.clear()
        self.registry.update(registry)  # the same dict object: code holding `registry.registry` sees the change
        self.dynamic_tools.clear()
        self.dynamic_tools.update(dynamic)
        if changed:
            self._specs_cache = None
            if any(not type(agent_tool)._announces_spec_changes for agent_tool in registry.values()):
                self._spec_owners_custom = True

    # -- reading -----------------------------------------------------------------------------------------------

    def unregister_tool(self, name: str) -> AgentTool | None:
        """Remove the tool registered under ``name`` and return it (None if there was none).

        Args:
            name: The tool name.
        """
        removed = self.registry.pop(name, None)
        if removed is not None:
            self._specs_cache = None
        return removed

    def get(self, name: str) -> AgentTool | None:
        """Return the tool registered under ``name``, or None.

        Args:
            name: The tool name.
        """
        return self.registry.get(name)

    @property
    def tool_names(self) -> list[str]:
        """The registered tool names, in registration order (then dynamic-only tools)."""
        return [*self.registry, *(name for name in self.dynamic_tools if name not in self.registry)]

    def get_all_tools_config(self) -> dict[str, ToolSpec]:
        """Return every tool's spec, normalized and validated as Strands does, by name.

        A spec that fails validation is left out with a warning, as in Strands.
        """
        config: dict[str, ToolSpec] = {}
        for tools in (self.registry, self.dynamic_tools):
            for name, agent_tool in tools.items():
                if name not in config:
                    spec = self._normalize(name, agent_tool.tool_spec)
                    if spec is not None:
                        config[name] = spec
        return config

    def _normalize(self, name: str, tool_spec: ToolSpec) -> ToolSpec | None:
        """Return a normalized, validated copy of ``tool_spec``, or None (with Strands' warning) if it is invalid."""
        from .tools import normalize_tool_spec

        try:
            spec = normalize_tool_spec(tool_spec.copy())
            self.validate_tool_spec(spec)
        except (ValueError, RecursionError) as exc:
            logger.warning("tool_name=<%s> | spec validation failed | %s", name, exc)
            return None
        return spec

    def get_all_tool_specs(self) -> list[ToolSpec]:
        """Return the normalized specs of all tools, in registration order (what the model is sent).

        The list is cached, and the same list object is returned while no tool is added and no tool's spec is
        replaced; treat it and its specs as read-only.
        """
        cached = self._specs_cache
        if cached is not None and cached[1] == SPEC_GENERATION[0] and not self._spec_owners_custom:
            return cached[0]
        tools = (*self.registry.values(), *self.dynamic_tools.values())
        identity = tuple(id(agent_tool.tool_spec) for agent_tool in tools)
        if cached is None or cached[2] != identity:
            cached = (self._normalized_specs(), SPEC_GENERATION[0], identity)
        self._specs_cache = (cached[0], SPEC_GENERATION[0], identity)
        return cached[0]

    def _normalized_specs(self) -> list[ToolSpec]:
        """`get_all_tools_config`'s specs, each normalized once per spec object and shared by every registry."""
        specs: dict[str, ToolSpec] = {}
        for tools in (self.registry, self.dynamic_tools):
            for name, agent_tool in tools.items():
                if name in specs:
                    continue
                tool_spec = agent_tool.tool_spec
                memo = agent_tool._normalized_spec
                if memo is not None and memo[0] is tool_spec:
                    specs[name] = memo[1]
                    continue
                spec = self._normalize(name, tool_spec)
                if spec is None:
                    continue
                specs[name] = spec
                try:
                    agent_tool._normalized_spec = (tool_spec, spec)
                except AttributeError:  # a tool class with __slots__: normalized again by the next registry
                    pass
        return list(specs.values())

    def validate_tool_spec(self, tool_spec: ToolSpec) -> None:
        """Check a spec and fill in the defaults Strands fills in (``type``, ``properties``, ``required``, ...).

        Raises:
            ValueError: ``name`` or ``description`` is missing.
        """
        from .tools import normalize_schema

        missing = [key for key in ("name", "description") if key not in tool_spec]
        if missing:
            raise ValueError(f"Missing required fields in tool spec: {', '.join(missing)}")
        if "json" not in tool_spec["inputSchema"]:
            tool_spec["inputSchema"] = {"json": normalize_schema(tool_spec["inputSchema"])}
            return
        schema = tool_spec["inputSchema"]["json"]
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        for name, definition in schema.get("properties", {}).items():
            if not isinstance(definition, dict):
                schema["properties"][name] = {"type": "string", "description": f"Property {name}"}
                continue
            if "$ref" in definition:
                continue
            if "type" not in definition and not any(k in definition for k in ("anyOf", "oneOf", "allOf", "not")):
                definition["type"] = "string"
            definition.setdefault("description", f"Property {name}")

    def __getitem__(self, name: str) -> AgentTool:
        return self.registry[name]

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def __len__(self) -> int:
        return len(self.registry)

    def __iter__(self) -> Iterator[str]:
        return iter(self.registry)

    # -- the tools directory (Agent(load_tools_from_directory=True)) --------------------------------------------

    def get_tools_dirs(self) -> list["Path"]:
        """Return the tools directories that exist: ``./tools/`` of the current working directory."""
        from pathlib import Path

        directory = Path.cwd() / "tools"
        return [directory] if directory.is_dir() else []

    def discover_tool_modules(self) -> dict[str, "Path"]:
        """Return the tool files of the tools directories by module name (``__init__.py`` and the like excluded)."""
        found: dict[str, Path] = {}
        for directory in self.get_tools_dirs():
            for path in sorted(directory.glob("*.py")):
                if path.is_file() and not path.name.startswith("__"):
                    found[path.stem] = path
        return found

    def initialize_tools(self, load_tools_from_directory: bool = False) -> None:
        """Load every tool file of ``./tools/`` (only when ``load_tools_from_directory``), as Strands does.

        A file that fails to load is logged and skipped; the others are registered.
        """
        self.tool_config = None
        if not load_tools_from_directory:
            return
        for tool_name, path in self.discover_tool_modules().items():
            try:
                self._load_file(tool_name, path)
            except Exception as exc:
                logger.warning("tool_name=<%s> | failed to load tool | %s", tool_name, exc)

    def reload_tool(self, tool_name: str) -> None:
        """Load (again) the tool file ``<tool_name>.py`` of the tools directory; its tools replace the old ones.

        Raises:
            FileNotFoundError: No tools directory has such a file.
            ValueError: The module has no ``@tool`` functions and is not a valid module-based tool.
        """
        path = next((d / f"{tool_name}.py" for d in self.get_tools_dirs() if (d / f"{tool_name}.py").exists()), None)
        if path is None:
            raise FileNotFoundError(f"No tool file found for: {tool_name}")
        self._load_file(tool_name, path)

    def reload_changed_tools(self) -> list[str]:
        """Reload the tool files of ``./tools/`` that are new or changed since they were last loaded.

        An agent built with ``load_tools_from_directory=True`` calls this when each invocation starts, so an
        edited tool file is used from the next invocation on (Strands watches the directory from a background
        thread instead). A file that fails to load is logged and skipped; the tools it defined before stay.

        Returns:
            The names of the files reloaded.
        """
        reloaded = []
        for tool_name, path in self.discover_tool_modules().items():
            try:
                mtime = path.stat().st_mtime_ns
            except OSError:
                continue
            if self._directory_mtimes.get(path) == mtime:
                continue
            try:
                self._load_file(tool_name, path)
                reloaded.append(tool_name)
            except Exception as exc:
                self._directory_mtimes[path] = mtime  # not retried until the file changes again
                logger.warning("tool_name=<%s> | failed to reload tool | %s", tool_name, exc)
        return reloaded

    def _load_file(self, tool_name: str, path: "Path") -> None:
        from .loader import _load_tool_module
        from .tools import PythonAgentTool

        mtime = path.stat().st_mtime_ns
        module = _load_tool_module(tool_name, str(path))
        function_tools = self._scan_module_for_tools(module)
        if function_tools:
            loaded: list[AgentTool] = function_tools
        else:
            spec = getattr(module, "TOOL_SPEC", None)
            if not spec:
                raise ValueError(
                    f"Tool {tool_name} is missing TOOL_SPEC (neither at module level nor as a decorated function)"
                )
            function = getattr(module, tool_name, None)
            if function is None:
                raise ValueError(f"Tool {tool_name} is missing {tool_name} function")
            if not callable(function):
                raise ValueError(f"Tool {tool_name} function is not callable")
            self.validate_tool_spec(spec)
            loaded = [PythonAgentTool(tool_name, spec, function)]
        registry, dynamic = dict(self.registry), dict(self.dynamic_tools)
        for agent_tool in loaded:
            agent_tool.mark_dynamic()
            _register_into(registry, dynamic, agent_tool)
        self._commit(registry, dynamic)
        self._directory_mtimes[path] = mtime

    def _scan_module_for_tools(self, module: Any) -> list[AgentTool]:
        """Return the ``@tool`` functions of a module."""
        from .decorator import DecoratedFunctionTool

        return [value for _, value in inspect.getmembers(module) if isinstance(value, DecoratedFunctionTool)]

    def cleanup(self, **kwargs: Any) -> None:
        """Remove this registry from its tool providers' consumers, so they may release what they hold.

        Every provider is told even if one fails; the first failure is then raised (as in Strands).
        """
        errors: list[Exception] = []
        for provider in self._tool_providers:
            try:
                provider.remove_consumer(self._registry_id)
            except Exception as exc:
                errors.append(exc)
                logger.error(
                    "provider=<%s>, error=<%s> | failed to remove provider consumer", type(provider).__name__, exc
                )
        if errors:
            raise errors[0]


def _register_into(registry: dict[str, AgentTool], dynamic: dict[str, AgentTool], tool: AgentTool) -> None:
    """Strands' `register_tool` on the given dicts: replace a hot-reloadable tool of the same name, else refuse."""
    name = tool.tool_name
    _check_name(name)
    if name in registry and not tool.supports_hot_reload:
        raise ToolNameConflictError(name)
    if registry.get(name) is None:
        normalized = name.replace("-", "_")
        clash = next((other for other in registry if other.replace("-", "_") == normalized), None)
        if clash is not None:
            raise ValueError(
                f"Tool name '{name}' already exists as '{clash}'. Cannot add a duplicate tool which differs by a '-' "
                "or '_'"
            )
    registry[name] = tool
    if tool.is_dynamic:
        dynamic[name] = tool


def _is_agent(obj: Any) -> bool:
    from ..agent.agent import Agent

    return isinstance(obj, Agent) and callable(getattr(obj, "as_tool", None))


__all__ = ["ToolRegistry"]
