"""Lazy package exports (PEP 562): a name is imported from its module the first time it is used.

``import strandslike`` then loads only what is asked for: ``from strandslike import Agent`` imports the agent, not
the tool decorator, the scripted model or the interrupt tools. Every package keeps a complete, sorted ``__all__``,
and type checkers see ordinary imports (under ``TYPE_CHECKING``).
"""

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return the ``__getattr__`` and ``__dir__`` of a package whose names ``exports`` maps to relative modules.

    Args:
        package: The package's ``__name__``.
        exports: Name -> module relative to the package (``".agent"``) that defines it.
    """

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(target, package), name)
        setattr(sys.modules[package], name, value)  # later lookups find it without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
