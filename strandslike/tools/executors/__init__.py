"""Tool executors: how the tool calls of one batch are scheduled.

Names are imported on first use.
"""

import typing

from ... import _lazy

if typing.TYPE_CHECKING:
    from ._executor import ToolExecutor
    from .concurrent import ConcurrentToolExecutor
    from .sequential import SequentialToolExecutor

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "ConcurrentToolExecutor": ".concurrent",
        "SequentialToolExecutor": ".sequential",
        "ToolExecutor": "._executor",
    },
)

__all__ = ["ConcurrentToolExecutor", "SequentialToolExecutor", "ToolExecutor"]
