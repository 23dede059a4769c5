"""Module loggers that import `logging` on first use, so importing the agent does not."""

from typing import Any


class LazyLogger:
    """Stands for ``logging.getLogger(name)`` until the first log call, which creates the real logger."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:
        # Only missing attributes come here: the slots are set in __init__. The logger's bound method is returned,
        # so the record's caller is the module that logs, not this class.
        logger = self._logger
        if logger is None:
            import logging

            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attribute)


def get_logger(name: str) -> Any:
    """Return a logger for ``name`` that imports `logging` only when it is first used."""
    return LazyLogger(name)


__all__ = ["LazyLogger", "get_logger"]
