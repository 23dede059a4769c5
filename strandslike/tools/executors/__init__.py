"""Tool executors: how the tool calls of one batch are scheduled."""

from ._executor import ToolExecutor
from .concurrent import ConcurrentToolExecutor
from .sequential import SequentialToolExecutor

__all__ = ["ConcurrentToolExecutor", "SequentialToolExecutor", "ToolExecutor"]
