"""Loading tools from files, modules and module paths (Strands' ``strands.tools.loader``).

A tool string is a file path (``./tools/weather.py``), a module path (``myapp.tools``, every ``@tool`` in it) or a
module path and a name (``myapp.tools:weather``). A module without ``@tool`` functions may be a module-based tool:
a ``TOOL_SPEC`` dict and a function named like the module.
"""

import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType

from ..types.tools import AgentTool
from .decorator import DecoratedFunctionTool
from .tools import PythonAgentTool

logger = logging.getLogger(__name__)

_TOOL_MODULE_PREFIX = "_strandslike_tool_"


def _load_tool_module(tool_name: str, tool_path: str) -> ModuleType:
    """Execute a tool file as a module named ``tool_name``, with its directory on ``sys.path`` while it runs.

    The module is registered in ``sys.modules`` under a prefixed key, so a tool file named like a standard module
    (``json.py``) does not replace it; a module that fails to execute is removed again.

    Raises:
        ImportError: No module can be built from the path.
        Exception: Whatever executing the module raised.
    """
    path = str(Path(tool_path).resolve())
    spec = importlib.util.spec_from_file_location(tool_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Could not create spec for {tool_name}")
    module = importlib.util.module_from_spec(spec)
    key = f"{_TOOL_MODULE_PREFIX}{tool_name}"
    sys.modules[key] = module
    directory = str(Path(path).parent)
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(key, None)
        raise
    finally:
        if directory in sys.path:
            sys.path.remove(directory)
    return module


def load_tool_from_string(tool_string: str) -> list[AgentTool]:
    """Load the tools a tool string names: an existing file path, else a module path (``module[:name]``).

    Raises:
        AttributeError: The module path names no module, no such tool, or a module without tools.
        Exception: Whatever importing the file or module raised.
    """
    path = os.path.expanduser(tool_string)
    if os.path.exists(path):
        return load_tools_from_file_path(path)
    return load_tools_from_module_path(tool_string)


def load_tools_from_file_path(tool_path: str) -> list[AgentTool]:
    """Execute a Python file and return its tools (named after the file, e.g. ``weather`` for ``weather.py``)."""
    module_name = os.path.basename(tool_path).split(".")[0]
    module = _load_tool_module(module_name, str(Path(tool_path).resolve()))
    return load_tools_from_module(module, module_name)


def load_tools_from_module_path(module_tool_path: str) -> list[AgentTool]:
    """Import ``module`` or ``module:name`` and return its tools (only ``name`` when given).

    Raises:
        AttributeError: The module does not exist, has no ``@tool`` named ``name``, or has no tools.
    """
    module_path, _, tool_func_name = module_tool_path.partition(":")
    try:
        module = importlib.import_module(module_path)
    except ModuleNotFoundError as exc:
        raise AttributeError(f'Tool string: "{module_tool_path}" is not a valid tool string.') from exc
    if tool_func_name:
        target = getattr(module, tool_func_name, None)
        if isinstance(target, DecoratedFunctionTool):
            return [target]
        raise AttributeError(f"Tool {tool_func_name} not found in module {module_path}")
    return load_tools_from_module(module, module_path.split(".")[-1])


def load_tools_from_module(module: ModuleType, module_name: str) -> list[AgentTool]:
    """Return a module's ``@tool`` functions, or its module-based tool (``TOOL_SPEC`` and a function ``module_name``).

    Raises:
        AttributeError: The module has neither ``@tool`` functions nor a ``TOOL_SPEC``, or lacks the function.
        TypeError: The module's function is not callable.
    """
    found: list[AgentTool] = [
        value for value in (getattr(module, name) for name in dir(module)) if isinstance(value, DecoratedFunctionTool)
    ]
    if found:
        return found
    tool_spec = getattr(module, "TOOL_SPEC", None)
    if not tool_spec:
        raise AttributeError(
            f"The module {module_name} is not a valid module for loading tools."
            "This module must contain @tool decorated function(s), or must be a module based tool."
        )
    if not hasattr(module, module_name):
        raise AttributeError(f"Module-based tool {module_name} missing function {module_name}")
    tool_func = getattr(module, module_name)
    if not callable(tool_func):
        raise TypeError(f"Tool {module_name} function is not callable")
    return [PythonAgentTool(module_name, tool_spec, tool_func)]


__all__ = [
    "load_tool_from_string",
    "load_tools_from_file_path",
    "load_tools_from_module",
    "load_tools_from_module_path",
]
